import type { EntityManager } from 'typeorm';
import type { AddressRow, ChainTransferRow, TransferDirection } from '../db/entities/chain';
import { inList, insertRow, placeholder, rawQuery, updateRows } from '../db/raw';
import { iso, type Clock } from '../shared/clock';
import { newTimeOrderedId } from '../shared/ids';
import type { TransferRouter } from './transfer-router';
import { deepestConfirmed, observedAgain, originOf, promoted, reverted, transferStatus, type TransferOrigin } from './transfer-state';
import type { OutgoingObservation, TransferObservation } from './types';
import type { WalletCoins } from './wallet-coins';

/**
 * A transfer's identity on its chain: one output (or log) of one transaction per coin, incoming;
 * one input (or transaction) spending the wallet's coins, outgoing.
 */
export const transferKey = (txid: string, coinId: string, index: number, direction: TransferDirection): string =>
  `${txid}\u0000${coinId}\u0000${index}\u0000${direction}`;

/** The same across chains: a batch of observations may span several. */
const chainTransferKey = (chainId: string, txid: string, coinId: string, index: number, direction: TransferDirection): string =>
  `${chainId}\u0000${transferKey(txid, coinId, index, direction)}`;
const obsKey = (o: TransferObservation): string => chainTransferKey(o.chainId, o.txid, o.coinId, o.index, o.direction ?? 'incoming');
const rowKey = (r: ChainTransferRow): string => chainTransferKey(r.chain_id, r.txid, r.coin_id, r.output_index, r.direction);

/** The received output's row a Bitcoin input spends, by the key it has as an incoming transfer. */
const spentKey = (o: OutgoingObservation): string | undefined =>
  o.outpoint && chainTransferKey(o.chainId, o.outpoint.txid, o.coinId, o.outpoint.index, 'incoming');

/** Values per query: far below any database's bound-parameter limit. */
const IN_CHUNK = 500;

function chunks<T>(xs: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += IN_CHUNK) out.push(xs.slice(i, i + IN_CHUNK));
  return out;
}

/**
 * A chain's transfers of these txids, as plain SQL: read once a block (TypeORM's find cost more
 * than the query). The table's columns are the rows' keys, with the same types on SQLite and
 * PostgreSQL (text and 32-bit integers).
 */
async function transfersWhereIn(em: EntityManager, chainId: string, txids: string[]): Promise<ChainTransferRow[]> {
  const list = inList(em, txids, 2);
  return rawQuery<ChainTransferRow>(em, `SELECT * FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND txid ${list.sql}`, [chainId, ...list.params]);
}

/**
 * Address rows by their primary key (the watched set's values): the addresses table has no index
 * on the address text (migration 0009 dropped it), so a read by address scanned every address of
 * the chain, a million rows on a busy one.
 */
async function addressesWhereIn(em: EntityManager, ids: string[]): Promise<AddressRow[]> {
  const list = inList(em, ids, 1);
  return rawQuery<AddressRow>(em, `SELECT * FROM addresses WHERE id ${list.sql}`, list.params);
}

/** The columns a status change of a transfer writes (the rest never change). */
const changeOf = (r: ChainTransferRow) => ({
  block_height: r.block_height,
  block_hash: r.block_hash,
  confirmations: r.confirmations,
  status: r.status,
  confirmed_at: r.confirmed_at,
  reverted_at: r.reverted_at,
  updated_at: r.updated_at,
});

/** The distinct values of `pick` per chain (observations it gives none are left out). */
function groupByChain(observations: TransferObservation[], pick: (o: TransferObservation) => string | undefined): Map<string, string[]> {
  const byChain = new Map<string, Set<string>>();
  for (const o of observations) {
    const value = pick(o);
    if (value === undefined) continue;
    let values = byChain.get(o.chainId);
    if (!values) byChain.set(o.chainId, (values = new Set()));
    values.add(value);
  }
  return new Map([...byChain].map(([chainId, values]) => [chainId, [...values]]));
}

/**
 * Keeps `chain_transfers` true to what the chains show and hands every status change to the
 * transfer router, inside the caller's transaction. The one place that decides seen / confirmed /
 * reverted, for payments to the wallet and spends of its coins alike: the chain core calls it for
 * real nodes, tests call it with an in-memory source. Every change of a row is guarded by the status
 * it was read with. Observing the same transfer again is harmless (idempotent), which is what makes
 * a rescan after a crash safe.
 */
export class TransferRecorder {
  constructor(
    private readonly router: TransferRouter,
    private readonly coins: WalletCoins,
    private readonly clock: Clock,
    /** Whether two chains share their addresses (WatchedAddresses.shares): a payment on one to the other's address is a stray. */
    private readonly shares: (a: string, b: string) => boolean = (a, b) => a === b,
  ) {}

  /**
   * A transfer to or from the wallet, in a block (`confirmations` = tip − height + 1) or in the
   * mempool (block null, 0 confirmations). It is confirmed once in a block with at least
   * `required` confirmations. Returns the row, or null when the transfer is not the wallet's.
   */
  async observe(em: EntityManager, obs: TransferObservation, required: number): Promise<ChainTransferRow | null> {
    return (await this.observeAll(em, [obs], required))[0]!;
  }

  /**
   * `observe` for each of `observations` in order, with the rows they need read up front in one
   * query per kind (a block's hits cost a few round trips, not a few each).
   */
  async observeAll(em: EntityManager, observations: TransferObservation[], required: number): Promise<Array<ChainTransferRow | null>> {
    if (observations.length === 0) return [];
    const known = await this.transfersOf(
      em,
      groupByChain(observations, (o) => o.txid),
    );
    const fresh = observations.filter((o) => !known.has(obsKey(o)));
    const addresses = await this.addressRows(em, fresh);
    const spent = await this.transfersOf(
      em,
      groupByChain(fresh, (o) => (o.direction === 'outgoing' ? o.outpoint?.txid : undefined)),
    );
    const rows: Array<ChainTransferRow | null> = [];
    for (const obs of observations) {
      const key = obsKey(obs);
      const existing = known.get(key);
      const row = existing ? await this.change(em, obs, required, existing) : await this.insert(em, obs, required, this.originOf(obs, addresses, known, spent));
      if (row) known.set(key, row);
      rows.push(row);
    }
    return rows;
  }

  /** The wallet's side of a transfer not recorded yet (transfer-state's originOf); null when it is not the wallet's. */
  private originOf(
    obs: TransferObservation,
    addresses: Map<string, AddressRow>,
    known: Map<string, ChainTransferRow>,
    spent: Map<string, ChainTransferRow>,
  ): TransferOrigin | null {
    const key = obs.direction === 'outgoing' ? spentKey(obs) : undefined;
    // An output recorded earlier in this batch is in `known`, fresher than what was read up front.
    const output = key === undefined ? undefined : (known.get(key) ?? spent.get(key));
    // The address row must be the address observed (an id the watched set holds for it always is).
    return originOf(obs, obs.addressId === undefined ? undefined : addresses.get(obs.addressId), output, this.shares);
  }

  private async insert(em: EntityManager, obs: TransferObservation, required: number, origin: TransferOrigin | null): Promise<ChainTransferRow | null> {
    if (!origin) return null;
    const at = this.clock.now();
    const now = iso(at);
    const status = transferStatus(obs, required);
    const row: ChainTransferRow = {
      // Time-ordered, as every row the core writes for a payment: see MoneyMovement.receive.
      id: newTimeOrderedId(at.getTime()),
      chain_id: obs.chainId,
      coin_id: obs.coinId,
      txid: obs.txid,
      output_index: obs.index,
      direction: obs.direction ?? 'incoming',
      ...origin,
      block_height: obs.blockHeight,
      block_hash: obs.blockHash,
      confirmations: obs.confirmations,
      status,
      seen_at: now,
      confirmed_at: status === 'confirmed' ? now : null,
      reverted_at: null,
      created_at: now,
      updated_at: now,
    };
    await insertRow(em, 'chain_transfers', row);
    if (row.direction === 'incoming') this.coins.received(row.chain_id, row.txid, row.output_index);
    await this.router.route(em, row, null);
    return row;
  }

  private async change(em: EntityManager, obs: TransferObservation, required: number, existing: ChainTransferRow): Promise<ChainTransferRow> {
    const next = observedAgain(existing, obs, required, iso(this.clock.now()));
    // A confirmed transfer seen again in the mempool changes nothing.
    if (!next) return existing;
    // Read in this transaction: another change in between means another scanner of this chain is
    // at work; this transaction gives way (the next poll observes again).
    if ((await updateRows(em, 'chain_transfers', changeOf(next), { id: existing.id, status: existing.status })) !== 1)
      throw new Error(`chain transfer ${existing.id} changed while it was recorded`);
    if (next.status !== existing.status) await this.router.route(em, next, existing.status);
    return next;
  }

  /** The stored transfers of these txids (per chain), by their key. */
  private async transfersOf(em: EntityManager, txidsByChain: Map<string, string[]>): Promise<Map<string, ChainTransferRow>> {
    const rows = new Map<string, ChainTransferRow>();
    for (const [chainId, txids] of txidsByChain)
      for (const chunk of chunks(txids)) for (const row of await transfersWhereIn(em, chainId, chunk)) rows.set(rowKey(row), row);
    return rows;
  }

  /** The address rows `observations` pay or spend from, by id. */
  private async addressRows(em: EntityManager, observations: TransferObservation[]): Promise<Map<string, AddressRow>> {
    const ids = new Set<string>();
    for (const o of observations) if (o.addressId !== undefined) ids.add(o.addressId);
    const rows = new Map<string, AddressRow>();
    for (const chunk of chunks([...ids])) for (const row of await addressesWhereIn(em, chunk)) rows.set(row.id, row);
    return rows;
  }

  /** Seen transfers whose block is now deep enough become confirmed. */
  async promote(em: EntityManager, chainId: string, tipHeight: number, required: number): Promise<number> {
    const deepest = deepestConfirmed(tipHeight, required);
    // Once a block: plain SQL (see scan-rows.ts).
    const rows = await rawQuery<ChainTransferRow>(
      em,
      `SELECT * FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND status = 'seen' AND block_height IS NOT NULL AND block_height <= ${placeholder(em, 2)}`,
      [chainId, deepest],
    );
    const now = iso(this.clock.now());
    for (const row of rows) {
      const next = promoted(row, tipHeight, now);
      if ((await updateRows(em, 'chain_transfers', changeOf(next), { id: row.id, status: 'seen' })) === 1) await this.router.route(em, next, 'seen');
    }
    return rows.length;
  }

  /** A transfer the chain no longer holds: its block was reorganised away, or it left the mempool. */
  async revert(em: EntityManager, row: ChainTransferRow): Promise<void> {
    const next = reverted(row, iso(this.clock.now()));
    if (!next) return;
    if ((await updateRows(em, 'chain_transfers', changeOf(next), { id: row.id, status: row.status })) === 1) await this.router.route(em, next, row.status);
  }
}
