import type { AddressRow, ChainTransferRow, TransferStatus } from '../db/entities/chain';
import type { TransferObservation } from './types';

/**
 * A chain transfer's status as the chain shows it (ARCHITECTURE "One chain core"), as pure
 * decisions: `seen` in the mempool or a block too young, `confirmed` once its block has the
 * chain's confirmations, `reverted` when the chain no longer holds it. Confirmed is kept when the
 * transfer is seen again in the mempool (a node's late echo); a reverted transfer seen again is
 * live again. The recorder writes what these return, guarded by the status it read.
 */

/** What a transfer in a block at `confirmations` depth (or in the mempool: no block) is. */
export function transferStatus(obs: Pick<TransferObservation, 'blockHeight' | 'confirmations'>, required: number): Exclude<TransferStatus, 'reverted'> {
  return obs.blockHeight !== null && obs.confirmations >= required ? 'confirmed' : 'seen';
}

/**
 * A recorded transfer observed again: the row it becomes, or null when nothing changes (confirmed
 * and now only in the mempool). Once confirmed it stays confirmed at whatever block the chain now
 * shows; `confirmed_at` is set when it first gets there; a reverted transfer seen again is live.
 */
export function observedAgain(
  existing: ChainTransferRow,
  obs: Pick<TransferObservation, 'blockHeight' | 'blockHash' | 'confirmations'>,
  required: number,
  now: string,
): ChainTransferRow | null {
  const status = transferStatus(obs, required);
  if (existing.status === 'confirmed' && status === 'seen' && obs.blockHeight === null) return null;
  const next: ChainTransferRow = {
    ...existing,
    block_height: obs.blockHeight,
    block_hash: obs.blockHash,
    confirmations: obs.confirmations,
    status: existing.status === 'confirmed' ? 'confirmed' : status,
    updated_at: now,
  };
  if (next.status === 'confirmed' && existing.status !== 'confirmed') next.confirmed_at = now;
  if (existing.status === 'reverted') next.reverted_at = null;
  return next;
}

/** The highest block whose transfers have `required` confirmations at `tip` (at least the tip itself). */
export function deepestConfirmed(tip: number, required: number): number {
  return tip - Math.max(required, 1) + 1;
}

/** A seen transfer whose block became deep enough: confirmed, with its depth at `tip`. */
export function promoted(row: ChainTransferRow, tip: number, now: string): ChainTransferRow {
  return { ...row, status: 'confirmed', confirmations: tip - row.block_height! + 1, confirmed_at: now, updated_at: now };
}

/** A transfer the chain no longer holds (its block reorganised away, or gone from the mempool); null when it is reverted already. */
export function reverted(row: ChainTransferRow, now: string): ChainTransferRow | null {
  if (row.status === 'reverted') return null;
  return { ...row, status: 'reverted', confirmations: 0, reverted_at: now, updated_at: now };
}

/**
 * Whether an incoming transfer to an invoice or static address is a stray (PRODUCT §17): on another
 * chain that shares the address (an EVM address is the same key on every EVM chain), or of another
 * coin than the one the address was issued for. Treasuries and change take any coin on their own
 * chain (top-ups, change) and nothing from another.
 */
export function strayOf(obs: TransferObservation, address: AddressRow, shares: (a: string, b: string) => boolean): boolean {
  if (obs.direction === 'outgoing' || (address.purpose !== 'invoice' && address.purpose !== 'static')) return false;
  if (address.chain_id !== obs.chainId) return shares(address.chain_id, obs.chainId);
  return address.coin_id !== obs.coinId;
}

/** What a new transfer row takes from the wallet's side: its address row, or the output it spends. */
export type TransferOrigin = Pick<ChainTransferRow, 'purpose' | 'address' | 'address_id' | 'account_id' | 'amount' | 'spent_transfer_id' | 'nonce'>;

/**
 * The wallet's side of a transfer not recorded yet; null when it is not the wallet's. A Bitcoin
 * input is the wallet's when it spends a live output the wallet received (`output`: that output's
 * row), and carries its address and amount. Anything else must name an address row (`address`)
 * that is exactly the address observed on the observed chain: paid to (incoming) or sent from
 * (outgoing, whose amount is counted by the payout, not here).
 */
export function originOf(
  obs: TransferObservation,
  address: AddressRow | undefined,
  output: ChainTransferRow | undefined,
  shares: (a: string, b: string) => boolean = (a, b) => a === b,
): TransferOrigin | null {
  if (obs.direction === 'outgoing' && obs.outpoint) {
    if (!output || output.status === 'reverted') return null;
    const { purpose, address: text, address_id, account_id, amount } = output;
    return { purpose, address: text, address_id, account_id, amount, spent_transfer_id: output.id, nonce: null };
  }
  const observed = obs.direction === 'outgoing' ? obs.from : obs.address;
  if (!address || address.address !== observed) return null;
  const stray = strayOf(obs, address, shares);
  if (address.chain_id !== obs.chainId && !stray) return null;
  return {
    purpose: stray ? 'stray' : address.purpose,
    address: address.address,
    address_id: address.id,
    account_id: address.account_id,
    amount: obs.direction === 'outgoing' ? '0' : obs.amount,
    spent_transfer_id: null,
    nonce: obs.direction === 'outgoing' ? (obs.nonce ?? null) : null,
  };
}
