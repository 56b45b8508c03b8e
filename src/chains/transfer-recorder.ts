import type { EntityManager } from 'typeorm';
import type { AddressRow, ChainTransferRow, TransferStatus } from '../db/entities/chain';
import { inList, insertRow, placeholder, rawQuery, updateRows } from '../db/raw';
import { iso, type Clock } from '../shared/clock';
import { newId } from '../shared/ids';
import type { TransferObservation, TransferSink } from './types';

/** A transfer's identity on its chain: one output (or log) of one transaction, per coin. */
export const transferKey = (txid: string, coinId: string, index: number): string => `${txid}\u0000${coinId}\u0000${index}`;

/** The same across chains: a batch of observations may span several. */
const chainTransferKey = (chainId: string, txid: string, coinId: string, index: number): string => `${chainId}\u0000${transferKey(txid, coinId, index)}`;
const obsKey = (o: TransferObservation): string => chainTransferKey(o.chainId, o.txid, o.coinId, o.index);
const addressKey = (chainId: string, address: string): string => `${chainId}\u0000${address}`;

/** Values per query: far below any database's bound-parameter limit. */
const IN_CHUNK = 500;

function chunks<T>(xs: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += IN_CHUNK) out.push(xs.slice(i, i + IN_CHUNK));
  return out;
}

/**
 * A table's rows of one chain whose `column` is one of `values`, as plain SQL: read once a block
 * (TypeORM's find cost more than the query). The tables' columns are the rows' keys, with the same
 * types on SQLite and PostgreSQL (text and 32-bit integers).
 */
async function selectWhereIn<T>(em: EntityManager, table: 'chain_transfers' | 'addresses', chainId: string, column: 'txid' | 'address', values: string[]): Promise<T[]> {
  const list = inList(em, values, 2);
  return rawQuery<T>(em, `SELECT * FROM ${table} WHERE chain_id = ${placeholder(em, 1)} AND ${column} ${list.sql}`, [chainId, ...list.params]);
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

/** The distinct values of `pick` per chain. */
function groupByChain(observations: TransferObservation[], pick: (o: TransferObservation) => string): Map<string, string[]> {
  const byChain = new Map<string, Set<string>>();
  for (const o of observations) {
    let values = byChain.get(o.chainId);
    if (!values) byChain.set(o.chainId, (values = new Set()));
    values.add(pick(o));
  }
  return new Map([...byChain].map(([chainId, values]) => [chainId, [...values]]));
}

/**
 * Keeps `chain_transfers` true to what the chains show and tells the sink of every status change,
 * inside the caller's transaction. The one place that decides seen / confirmed / reverted: the
 * chain core calls it for real nodes, tests call it with an in-memory source. Observing the same
 * transfer again is harmless (idempotent), which is what makes a rescan after a crash safe.
 */
export class TransferRecorder {
  constructor(private readonly sink: TransferSink, private readonly clock: Clock) {}

  /**
   * A transfer to a watched address, in a block (`confirmations` = tip − height + 1) or in the
   * mempool (block null, 0 confirmations). It is confirmed once in a block with at least
   * `required` confirmations. Returns the row, or null when the address is not ours.
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
    const known = await this.knownTransfers(em, observations);
    const addresses = await this.addressRows(em, observations.filter((o) => !known.has(obsKey(o))));
    const rows: Array<ChainTransferRow | null> = [];
    for (const obs of observations) {
      const row = await this.record(em, obs, required, known.get(obsKey(obs)), addresses.get(addressKey(obs.chainId, obs.address)));
      if (row) known.set(obsKey(obs), row);
      rows.push(row);
    }
    return rows;
  }

  private async record(
    em: EntityManager,
    obs: TransferObservation,
    required: number,
    existing: ChainTransferRow | undefined,
    address: AddressRow | undefined,
  ): Promise<ChainTransferRow | null> {
    const now = iso(this.clock.now());
    const status: TransferStatus = obs.blockHeight !== null && obs.confirmations >= required ? 'confirmed' : 'seen';
    if (!existing) {
      if (!address) return null;
      const row: ChainTransferRow = {
        id: newId(),
        chain_id: obs.chainId,
        coin_id: obs.coinId,
        txid: obs.txid,
        output_index: obs.index,
        address: obs.address,
        address_id: address.id,
        account_id: address.account_id,
        amount: obs.amount,
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
      await this.sink.onTransfer(em, row, null);
      return row;
    }
    // A confirmed transfer seen again in the mempool or a younger block changes nothing.
    if (existing.status === 'confirmed' && status === 'seen' && obs.blockHeight === null) return existing;
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
    await updateRows(em, 'chain_transfers', changeOf(next), { id: existing.id });
    if (next.status !== existing.status) await this.sink.onTransfer(em, next, existing.status);
    return next;
  }
  /** The stored transfers `observations` refer to, by obsKey. */
  private async knownTransfers(em: EntityManager, observations: TransferObservation[]): Promise<Map<string, ChainTransferRow>> {
    const known = new Map<string, ChainTransferRow>();
    for (const [chainId, txids] of groupByChain(observations, (o) => o.txid))
      for (const chunk of chunks(txids))
        for (const row of await selectWhereIn<ChainTransferRow>(em, 'chain_transfers', chainId, 'txid', chunk))
          known.set(chainTransferKey(row.chain_id, row.txid, row.coin_id, row.output_index), row);
    return known;
  }

  /** The address rows `observations` pay, by chain and address. */
  private async addressRows(em: EntityManager, observations: TransferObservation[]): Promise<Map<string, AddressRow>> {
    const rows = new Map<string, AddressRow>();
    for (const [chainId, addresses] of groupByChain(observations, (o) => o.address))
      for (const chunk of chunks(addresses))
        for (const row of await selectWhereIn<AddressRow>(em, 'addresses', chainId, 'address', chunk)) rows.set(addressKey(chainId, row.address), row);
    return rows;
  }

  /** Seen transfers whose block is now deep enough become confirmed. */
  async promote(em: EntityManager, chainId: string, tipHeight: number, required: number): Promise<number> {
    const deepest = tipHeight - Math.max(required, 1) + 1;
    // Once a block: plain SQL (see scan-rows.ts).
    const rows = await rawQuery<ChainTransferRow>(
      em,
      `SELECT * FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND status = 'seen' AND block_height IS NOT NULL AND block_height <= ${placeholder(em, 2)}`,
      [chainId, deepest],
    );
    const now = iso(this.clock.now());
    for (const row of rows) {
      const next: ChainTransferRow = {
        ...row,
        status: 'confirmed',
        confirmations: tipHeight - row.block_height! + 1,
        confirmed_at: now,
        updated_at: now,
      };
      if ((await updateRows(em, 'chain_transfers', changeOf(next), { id: row.id, status: 'seen' })) === 1) await this.sink.onTransfer(em, next, 'seen');
    }
    return rows.length;
  }

  /** A transfer the chain no longer holds: its block was reorganised away, or it left the mempool. */
  async revert(em: EntityManager, row: ChainTransferRow): Promise<void> {
    if (row.status === 'reverted') return;
    const now = iso(this.clock.now());
    const next: ChainTransferRow = { ...row, status: 'reverted', confirmations: 0, reverted_at: now, updated_at: now };
    if ((await updateRows(em, 'chain_transfers', changeOf(next), { id: row.id, status: row.status })) === 1) await this.sink.onTransfer(em, next, row.status);
  }
}
