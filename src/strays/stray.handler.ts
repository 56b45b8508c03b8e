import type { EntityManager } from 'typeorm';
import type { TransferHandler } from '../chains/types';
import type { ChainTransferRow } from '../db/entities/chain';
import type { StrayService } from './stray.service';

/** The transfer router's handler of `stray` transfers (PRODUCT §17): recorded as strays, never credited on their own. */
export class StrayHandler implements TransferHandler {
  constructor(private readonly strays: StrayService) {}

  onTransfer(em: EntityManager, transfer: ChainTransferRow): Promise<void> {
    return this.strays.onTransfer(em, transfer);
  }
}
