import type { EntityManager } from 'typeorm';
import { inList, insertRowIfAbsent, placeholder, rawQuery, updateRows } from '../../../db/raw';

/**
 * What one of the wallet's own transactions on an account chain does (PRODUCT §8a): EVM and Tron
 * sweeps, top-ups (Tron: also a never-used address's activation) and EVM payouts; Tron's gas
 * station also stakes TRX for energy and delegates it (and takes it back) around token transfers;
 * an EVM filler uses a nonce given back while later sends wait behind it.
 */
export type EvmSendKind = 'sweep' | 'topup' | 'payout' | 'filler' | 'stake' | 'delegate' | 'undelegate';

/**
 * reserved: a payout's nonce and bytes, which the payout worker sends and follows (never this queue);
 * signed: stored, not yet handed to the node (a token sweep waits for its top-up to be mined);
 * broadcast: sent (mined or not yet: `block_height`); mined: final at the chain's confirmations;
 * dropped: will never be mined (refused before it spread, or its nonce taken by another).
 */
export type EvmSendStatus = 'reserved' | 'signed' | 'broadcast' | 'mined' | 'dropped';

/**
 * A row of `account_sends`: one nonce of one of the wallet's addresses, and the signed bytes that use it.
 * Tron rows (src/chains/tron/payouts) number each sender's transactions in `nonce`, keep the most the
 * chain may burn in `gas_limit` (sun, `max_fee_per_gas` 1) and the transaction's `expiration`. The
 * store also writes `max_cost`, their product, what `ledger reconcile` counts as in flight.
 */
export interface EvmSendRow {
  id: string;
  chain_id: string;
  kind: EvmSendKind;
  from_address: string;
  /** The sender's derivation path (its key signs a replacement). */
  from_path: string;
  nonce: number;
  to_address: string;
  /** The coin moved (a token payout's or sweep's token; ETH for a top-up or a native one). */
  coin_id: string;
  /** What it moves, base units as a decimal integer string. */
  amount: string;
  account_id: string | null;
  withdrawal_id: string | null;
  /** A send that must be mined first (a token sweep's or token payout's top-up). */
  after_id: string | null;
  txid: string;
  raw: string;
  /** JSON array of every txid signed for this nonce (replacements add theirs). */
  candidate_txids: string;
  gas_limit: string;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  status: EvmSendStatus;
  /** The tip when it was (last) broadcast: a replacement is due `replace_after_blocks` later. */
  sent_height: number | null;
  block_height: number | null;
  block_hash: string | null;
  /** Wei the chain took (gasUsed × effectiveGasPrice), once mined. */
  fee_paid: string | null;
  /** 1 mined and succeeded, 0 mined and reverted, null not mined. */
  succeeded: number | null;
  booked_at: string | null;
  /** Tron: ms since the epoch after which the transaction can never be mined; null on EVM. */
  expiration: string | null;
  created_at: string;
  updated_at: string;
}

/** Another transaction holds this nonce of this address in the store: the pass builds again. */
export class NonceTaken extends Error {
  constructor(address: string, nonce: number) {
    super(`nonce ${nonce} of ${address} is already taken by a stored transaction`);
    this.name = 'NonceTaken';
  }
}

/**
 * The next nonce of `address`: after the node's count of its transactions (mempool included) and
 * after every live stored one, so the payouts and sweeps of one pass get consecutive nonces before
 * any of them reaches the node.
 */
export async function nextNonce(em: EntityManager, chainId: string, address: string, nodePending: number): Promise<number> {
  const [row] = await rawQuery<{ top: number | string | null }>(
    em,
    `SELECT MAX(nonce) AS top FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND from_address = ${placeholder(em, 2)} AND status <> 'dropped'`,
    [chainId, address],
  );
  const stored = row?.top === null || row?.top === undefined ? -1 : Number(row.top);
  return Math.max(nodePending, stored + 1);
}

/** The most the chain can take for a send, in its native coin's base units (`max_cost`): gas limit × max fee per gas (Tron: the burn × 1). */
const maxCost = (row: Pick<EvmSendRow, 'gas_limit' | 'max_fee_per_gas'>): string => (BigInt(row.gas_limit) * BigInt(row.max_fee_per_gas)).toString();

/** Stores a signed transaction; NonceTaken when a live row holds its nonce already (the caller's transaction rolls back). */
export async function insertSend(em: EntityManager, row: EvmSendRow): Promise<void> {
  if (!(await insertRowIfAbsent(em, 'account_sends', { ...row, max_cost: maxCost(row) }))) throw new NonceTaken(row.from_address, row.nonce);
}

export async function sendsWithStatus(em: EntityManager, chainId: string, statuses: readonly EvmSendStatus[]): Promise<EvmSendRow[]> {
  const list = inList(em, statuses, 2);
  return (
    await rawQuery<EvmSendRow>(em, `SELECT * FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND status ${list.sql} ORDER BY from_address, nonce`, [
      chainId,
      ...list.params,
    ])
  ).map(normalise);
}

export async function sendById(em: EntityManager, id: string): Promise<EvmSendRow | null> {
  const [row] = await rawQuery<EvmSendRow>(em, `SELECT * FROM account_sends WHERE id = ${placeholder(em, 1)}`, [id]);
  return row ? normalise(row) : null;
}

/** The sends of `ids` (those that exist), in queries of up to 256 ids. */
export async function sendsById(em: EntityManager, ids: readonly string[]): Promise<EvmSendRow[]> {
  const out: EvmSendRow[] = [];
  for (let i = 0; i < ids.length; i += 256) {
    const list = inList(em, ids.slice(i, i + 256), 1);
    out.push(...(await rawQuery<EvmSendRow>(em, `SELECT * FROM account_sends WHERE id ${list.sql}`, list.params)).map(normalise));
  }
  return out;
}

/** The live (not dropped) sends of a withdrawal, its payout and the top-up before it. */
export async function sendsOfWithdrawal(em: EntityManager, withdrawalId: string): Promise<EvmSendRow[]> {
  return (
    await rawQuery<EvmSendRow>(em, `SELECT * FROM account_sends WHERE withdrawal_id = ${placeholder(em, 1)} AND status <> 'dropped' ORDER BY created_at`, [
      withdrawalId,
    ])
  ).map(normalise);
}

/**
 * A guarded change of a send: applied only when its status is still `from`. Whether it was. A
 * change of its fee caps rewrites `max_cost` (from `row`'s caps where `set` keeps them).
 */
export async function updateSend(em: EntityManager, row: Pick<EvmSendRow, 'id' | 'status'> & Partial<EvmSendRow>, set: Partial<EvmSendRow>): Promise<boolean> {
  let patch: Record<string, unknown> = set;
  if (set.gas_limit !== undefined || set.max_fee_per_gas !== undefined) {
    const gasLimit = set.gas_limit ?? row.gas_limit;
    const maxFee = set.max_fee_per_gas ?? row.max_fee_per_gas;
    if (gasLimit === undefined || maxFee === undefined) throw new Error(`send ${row.id}: a change of its fee caps needs both to price it`);
    patch = { ...set, max_cost: maxCost({ gas_limit: gasLimit, max_fee_per_gas: maxFee }) };
  }
  return (await updateRows(em, 'account_sends', patch, { id: row.id, status: row.status })) === 1;
}

/** A row as the database returned it, its numbers as numbers. */
export const normalise = (r: EvmSendRow): EvmSendRow => ({
  ...r,
  nonce: Number(r.nonce),
  sent_height: r.sent_height === null ? null : Number(r.sent_height),
  block_height: r.block_height === null ? null : Number(r.block_height),
  succeeded: r.succeeded === null ? null : Number(r.succeeded),
});
