import type { EntityManager } from 'typeorm';
import type { TransferHandler } from '../chains/types';
import type { AddressPurpose, ChainTransferRow, TransferDirection, TransferPurpose } from '../db/entities/chain';
import type { AppRouter } from '../http/context';
import type { Job } from '../jobs/scheduler';
import type { Logger } from '../shared/logger';

/** Every purpose of the wallet's addresses: the wallet's own spends may come from any of them. */
export const WALLET_PURPOSES: readonly AddressPurpose[] = ['invoice', 'static', 'change', 'treasury'];

/** A job and whether it runs once at start before its first pause. */
export interface ScheduledJob {
  job: Job;
  runAtStart?: boolean;
}

/** A handler of the transfers of some address purposes in one direction (TransferRouter.register). */
export interface TransferRoute {
  purposes: readonly TransferPurpose[];
  direction: TransferDirection;
  handler: TransferHandler;
}

/**
 * What one wired part of the daemon brings (each `*.wiring.ts` returns one): `main.ts` folds the
 * list, mounting routes and scheduling jobs in list order, and closes the parts in reverse order.
 */
export interface DaemonModule {
  /** API routers. */
  routes?: AppRouter[];
  /** Routers of the operator's admin socket. */
  adminRoutes?: AppRouter[];
  jobs?: ScheduledJob[];
  /** Handlers the chain core hands transfers to, registered in list order. */
  transfers?: TransferRoute[];
  /** Tests of the wallet's own movements that are no payment (TransferRouter.screen). */
  screens?: Array<(em: EntityManager, transfer: ChainTransferRow) => Promise<boolean>>;
  /** Ends what the part holds open (threads, connections, saved state). */
  close?: () => void | Promise<void>;
}

/**
 * What is open, closed in reverse order of opening: by stop(), and by a start that fails half-way
 * (so no thread, socket or connection of a failed start outlives it). A close that fails is logged
 * and the others still run.
 */
export class OpenParts {
  private readonly closes: Array<{ name: string; close: () => unknown }> = [];

  constructor(private readonly logger: Logger) {}

  add(name: string, close: () => unknown): void {
    this.closes.push({ name, close });
  }

  async closeAll(): Promise<void> {
    while (this.closes.length) {
      const { name, close } = this.closes.pop()!;
      try {
        await close();
      } catch (err) {
        this.logger.error('closing failed', { part: name, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}
