import type { StrayStatus } from '../db/entities/stray';

/** Every status of a stray payment (PRODUCT §17; `reverted`: docs/decisions.md). */
export const STRAY_STATUSES = ['open', 'credited', 'refunded', 'reverted'] as const satisfies readonly StrayStatus[];

/** What may happen to a stray, by what happened. */
export type StrayMove = 'credit' | 'refund' | 'chain_reverted' | 'chain_again';

/**
 * A stray's status table: the merchant credits or refunds an open one; the chain reverting its
 * transfer reverts an open, credited or refunded one (the credit of a credited or refunded one is
 * taken back); the chain showing it again opens a reverted one again. Null: the move is not allowed from `from`.
 */
export function nextStrayStatus(from: StrayStatus, move: StrayMove): StrayStatus | null {
  switch (move) {
    case 'credit':
      return from === 'open' ? 'credited' : null;
    case 'refund':
      return from === 'open' ? 'refunded' : null;
    case 'chain_reverted':
      return from === 'open' || from === 'credited' || from === 'refunded' ? 'reverted' : null;
    case 'chain_again':
      return from === 'reverted' ? 'open' : null;
  }
}
