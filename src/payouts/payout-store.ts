import type { EntityManager } from 'typeorm';
import type { CandidateKind, ChainPayoutCandidateRow, ChainPayoutLegRow, ChainPayoutRow } from '../db/entities/payouts';
import { insertRow, placeholder, rawQuery, updateRows } from '../db/raw';
import type { Sealer } from '../db/seal';
import { cells } from '../db/sealed-values';
import type { PayoutCandidate, PayoutLeg, StoredPayout } from './rail';

/**
 * The stored payouts (migration 0021) as plain SQL: a payout's row, its candidates (the signed
 * bytes sealed with the master key, bound to their cell) and its legs.
 */
export class PayoutStore {
  constructor(private readonly sealer: Sealer) {}

  /**
   * The payouts of a chain the worker still has work on: not yet seen by the node, waiting to be
   * mined, mined with withdrawals not yet completed (or reopened with failed ones), or refused with
   * withdrawals still to send alone.
   */
  open(em: EntityManager, chainId: string): Promise<ChainPayoutRow[]> {
    const p = (i: number) => placeholder(em, i);
    return rawQuery<ChainPayoutRow>(
      em,
      `SELECT * FROM chain_payouts c WHERE c.chain_id = ${p(1)} AND (c.status IN ('signed', 'broadcast') OR (c.status IN ('confirmed', 'failed') AND EXISTS ` +
        `(SELECT 1 FROM chain_payout_legs l JOIN withdrawals w ON w.id = l.withdrawal_id WHERE l.payout_id = c.id AND (w.status IN ('processing', 'broadcast') ` +
        `OR (w.status = 'failed' AND c.status = 'confirmed' AND c.reopened_at IS NOT NULL))))) ORDER BY c.created_at, c.id`,
      [chainId],
    ).then((rows) => rows.map(normalise));
  }

  async row(em: EntityManager, id: string): Promise<ChainPayoutRow | null> {
    const [row] = await rawQuery<ChainPayoutRow>(em, `SELECT * FROM chain_payouts WHERE id = ${placeholder(em, 1)}`, [id]);
    return row ? normalise(row) : null;
  }

  /** The payout one of whose candidates is `txid` on `chainId`, if any, with that candidate's kind. */
  async byTxid(em: EntityManager, chainId: string, txid: string): Promise<(ChainPayoutRow & { candidate_kind: CandidateKind }) | null> {
    const [row] = await rawQuery<ChainPayoutRow & { candidate_kind: CandidateKind }>(
      em,
      `SELECT c.*, k.kind AS candidate_kind FROM chain_payouts c JOIN chain_payout_candidates k ON k.payout_id = c.id WHERE k.chain_id = ${placeholder(em, 1)} AND k.txid = ${placeholder(em, 2)}`,
      [chainId, txid],
    );
    return row ? { ...normalise(row), candidate_kind: row.candidate_kind } : null;
  }

  /** A payout with its legs and every candidate, the bytes opened. */
  async load(em: EntityManager, row: ChainPayoutRow): Promise<StoredPayout> {
    const candidates = await rawQuery<ChainPayoutCandidateRow>(
      em,
      `SELECT * FROM chain_payout_candidates WHERE payout_id = ${placeholder(em, 1)} ORDER BY seq`,
      [row.id],
    );
    return {
      id: row.id,
      chainId: row.chain_id,
      accountId: row.account_id,
      reservation: row.reservation,
      legs: await this.legs(em, row.id),
      candidates: candidates.map((c) => ({
        txid: c.txid,
        raw: this.sealer.open(c.raw_sealed, cells.payoutCandidate(c.payout_id, Number(c.seq))),
        fee: BigInt(c.fee),
        data: JSON.parse(c.data) as Record<string, unknown>,
        kind: c.kind,
      })),
      broadcastHeight: row.broadcast_height === null ? null : Number(row.broadcast_height),
    };
  }

  async legs(em: EntityManager, payoutId: string): Promise<PayoutLeg[]> {
    const rows = await rawQuery<ChainPayoutLegRow>(em, `SELECT * FROM chain_payout_legs WHERE payout_id = ${placeholder(em, 1)} ORDER BY "output"`, [payoutId]);
    return rows.map((r) => ({ withdrawalId: r.withdrawal_id, output: Number(r.output) }));
  }

  /** A new payout, its first candidate and its legs; a withdrawal that has a leg already breaks the legs' key. */
  async insert(em: EntityManager, row: ChainPayoutRow, candidate: PayoutCandidate, legs: readonly PayoutLeg[]): Promise<void> {
    await insertRow(em, 'chain_payouts', row);
    await this.addCandidate(em, row, 0, candidate, row.created_at);
    for (const leg of legs)
      await insertRow(em, 'chain_payout_legs', {
        withdrawal_id: leg.withdrawalId,
        payout_id: row.id,
        output: leg.output,
        created_at: row.created_at,
      } satisfies ChainPayoutLegRow);
  }

  /** Hands a withdrawal's leg from a refused payout to the payout that now pays it alone; whether it was still there. */
  async moveLeg(em: EntityManager, withdrawalId: string, from: string, to: string, output: number): Promise<boolean> {
    return (await updateRows(em, 'chain_payout_legs', { payout_id: to, output }, { withdrawal_id: withdrawalId, payout_id: from })) === 1;
  }

  async addCandidate(em: EntityManager, payout: Pick<ChainPayoutRow, 'id' | 'chain_id'>, seq: number, c: PayoutCandidate, now: string): Promise<void> {
    await insertRow(em, 'chain_payout_candidates', {
      payout_id: payout.id,
      seq,
      chain_id: payout.chain_id,
      txid: c.txid,
      raw_sealed: this.sealer.seal(c.raw, cells.payoutCandidate(payout.id, seq)),
      fee: c.fee.toString(),
      data: JSON.stringify(c.data),
      kind: c.kind ?? 'pay',
      created_at: now,
    } satisfies ChainPayoutCandidateRow);
  }
}

/** Integers come back as strings from PostgreSQL's driver for some types; the row as typed. */
function normalise(r: ChainPayoutRow): ChainPayoutRow {
  return {
    ...r,
    broadcast_height: r.broadcast_height === null ? null : Number(r.broadcast_height),
    held: Number(r.held),
  };
}
