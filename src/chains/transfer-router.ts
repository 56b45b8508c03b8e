import type { EntityManager } from 'typeorm';
import type { AddressPurpose, ChainTransferRow, TransferDirection, TransferStatus } from '../db/entities/chain';
import type { TransferHandler } from './types';

const routeOf = (purpose: AddressPurpose, direction: TransferDirection): string => `${purpose}/${direction}`;

/**
 * Hands each status change of a transfer to the handler of its address's purpose and its direction
 * (ARCHITECTURE "The money path, both ways"): a payment method or a payout is one registered
 * handler, and the chain core never names one. A transfer no handler is registered for is recorded
 * and left alone.
 */
export class TransferRouter {
  private readonly handlers = new Map<string, TransferHandler>();

  register(purpose: AddressPurpose, direction: TransferDirection, handler: TransferHandler): this {
    const route = routeOf(purpose, direction);
    if (this.handlers.has(route)) throw new Error(`a transfer handler is already registered for ${route}`);
    this.handlers.set(route, handler);
    return this;
  }

  async route(em: EntityManager, transfer: ChainTransferRow, previous: TransferStatus | null): Promise<void> {
    await this.handlers.get(routeOf(transfer.purpose, transfer.direction))?.onTransfer(em, transfer, previous);
  }
}
