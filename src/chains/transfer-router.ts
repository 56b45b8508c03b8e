import type { EntityManager } from 'typeorm';
import type { ChainTransferRow, TransferDirection, TransferPurpose, TransferStatus } from '../db/entities/chain';
import type { TransferHandler } from './types';

const routeOf = (purpose: TransferPurpose, direction: TransferDirection): string => `${purpose}/${direction}`;

/**
 * Hands each status change of a transfer to the handlers of its address's purpose and its
 * direction (ARCHITECTURE "The money path, both ways"): a payment method or a payout is one
 * registered handler, and the chain core never names one. Several handlers of one route are called
 * in the order they were registered (the payouts and the EVM sweeps both follow the wallet's own
 * spends). A transfer no handler is registered for is recorded and left alone.
 */
export class TransferRouter {
  private readonly handlers = new Map<string, TransferHandler[]>();
  private readonly screens: Array<(em: EntityManager, transfer: ChainTransferRow) => Promise<boolean>> = [];

  register(purpose: TransferPurpose, direction: TransferDirection, handler: TransferHandler): this {
    const route = routeOf(purpose, direction);
    const list = this.handlers.get(route) ?? [];
    if (list.includes(handler)) throw new Error(`this transfer handler is already registered for ${route}`);
    this.handlers.set(route, [...list, handler]);
    return this;
  }

  /**
   * Adds a test of the wallet's own movements that are no payment (an EVM gas top-up reaching a
   * deposit address): a transfer it answers true for is recorded and handed to no handler.
   */
  screen(isOwn: (em: EntityManager, transfer: ChainTransferRow) => Promise<boolean>): this {
    this.screens.push(isOwn);
    return this;
  }

  async route(em: EntityManager, transfer: ChainTransferRow, previous: TransferStatus | null): Promise<void> {
    const handlers = this.handlers.get(routeOf(transfer.purpose, transfer.direction));
    if (!handlers) return;
    for (const isOwn of this.screens) if (await isOwn(em, transfer)) return;
    for (const handler of handlers) await handler.onTransfer(em, transfer, previous);
  }
}
