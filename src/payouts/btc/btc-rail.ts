import type { EntityManager } from 'typeorm';
import type { ChainReader, ChainSender, SentStatus } from '../../chains/types';
import type { FeeCeiling } from '../fee-ceiling';
import type { PayoutCandidate, PayoutOrder, PayoutRail, RailBuild, RefusedOrder, StoredPayout } from '../rail';
import { BtcPayoutEngine, BtcPayoutRefused, type BtcPayout, type BtcPayoutEngineDeps } from './btc-payout-engine';

/** Outputs per payout: far below the standard transaction size for P2WPKH payments. */
export const BTC_MAX_BATCH = 250;

/** What a Bitcoin candidate keeps in its `data` (JSON: satoshi as decimal strings). */
interface BtcCandidateData {
  payoutId: string;
  satPerVbyte: number;
  vsize: number;
  inputs: Array<{ transferId: string; txid: string; vout: number; value: string; path: string }>;
  outputs: Array<{ vout: number; address: string; value: string; withdrawalId: string | null }>;
}

/** What the merchant reads in `failure_reason` for an order the engine refuses on its own. */
const REFUSAL_TEXT: Record<string, string> = {
  address_refused: 'the destination is not an address this chain can pay',
  below_dust: 'the amount is below the smallest output the network relays to this destination',
};

/**
 * Bitcoin's payout rail: the BtcPayoutEngine (coin selection from the account's own coins, batch,
 * RBF, change to its internal chain) behind the worker's rail interface, and the chain's adapter
 * for the node. A destination the engine refuses fails alone; when the account's free coins cannot
 * pay the whole batch, the newest orders wait for a later payout (its change comes back confirmed).
 * Nothing is signed above the chain's ceiling (`payouts.max_fee`): while the node's rate is above
 * it, new payouts wait.
 */
export class BtcRail implements PayoutRail {
  readonly chainId: string;
  readonly maxBatch = BTC_MAX_BATCH;
  private readonly engine: BtcPayoutEngine;

  constructor(
    deps: BtcPayoutEngineDeps,
    private readonly node: ChainSender & Pick<ChainReader, 'tip'>,
    private readonly ceiling: FeeCeiling,
  ) {
    this.chainId = deps.chain.id;
    this.engine = new BtcPayoutEngine(deps);
  }

  async height(signal?: AbortSignal): Promise<number> {
    return (await this.node.tip(signal)).height;
  }

  /** The node's fee rate (sat/vB) for the next build or replacement. */
  prepare(signal?: AbortSignal): Promise<number> {
    return this.engine.feeRate(this.node, signal);
  }

  async build(em: EntityManager, req: { accountId: string; orders: readonly PayoutOrder[]; prepared: unknown }): Promise<RailBuild> {
    const satPerVbyte = req.prepared as number;
    const refused: RefusedOrder[] = [];
    if (!this.ceiling.admits('payouts', BigInt(satPerVbyte))) return { payout: null, refused };
    let orders = [...req.orders];
    while (orders.length > 0) {
      try {
        const payout = await this.engine.build(em, {
          accountId: req.accountId,
          orders: orders.map((o) => ({ withdrawalId: o.withdrawalId, address: o.address, amount: o.amount })),
          satPerVbyte,
        });
        return {
          payout: {
            candidate: candidateOf(payout),
            legs: payout.outputs.filter((o) => o.withdrawalId !== null).map((o) => ({ withdrawalId: o.withdrawalId!, output: o.vout })),
            reservation: payout.payoutId,
          },
          refused,
        };
      } catch (err) {
        if (!(err instanceof BtcPayoutRefused)) throw err;
        if (err.withdrawalId !== null && REFUSAL_TEXT[err.reason]) {
          refused.push({ withdrawalId: err.withdrawalId, reason: REFUSAL_TEXT[err.reason]! });
          orders = orders.filter((o) => o.withdrawalId !== err.withdrawalId);
        } else if (err.reason === 'insufficient_coins') {
          // The newest waits: its turn comes when the coins in flight come back as change.
          orders = orders.slice(0, -1);
        } else {
          throw err;
        }
      }
    }
    return { payout: null, refused };
  }

  async broadcast(candidate: PayoutCandidate, signal?: AbortSignal): Promise<void> {
    await this.node.broadcast(candidate.raw, signal);
  }

  status(candidate: PayoutCandidate, signal?: AbortSignal): Promise<SentStatus> {
    return this.node.sentStatus({ txid: candidate.txid, raw: candidate.raw }, signal);
  }

  /**
   * BIP125, only once the node's rate is above what the current candidate pays (a market that has
   * not moved gets no replacement): the same coins and payments at that rate, at most the ceiling,
   * the replaced fee plus the incremental relay fee at least. Null when none is due, or when the
   * ceiling or the change leaves no room for one.
   */
  async replace(_em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const current = payoutOf(payout.candidates[payout.candidates.length - 1]!, payout);
    const quote = prepared as number;
    if (quote <= current.satPerVbyte) return null;
    this.ceiling.admits('replacements', BigInt(quote));
    const rate = Math.min(quote, Number(this.ceiling.max));
    if (rate <= current.satPerVbyte) return null;
    let next: BtcPayout;
    try {
      next = this.engine.replace(current, rate);
    } catch (err) {
      if (err instanceof BtcPayoutRefused && err.reason === 'replacement_uncovered') return null;
      throw err;
    }
    // BIP125's increment over a fee that took a dropped change's dust may put it above the ceiling.
    return next.fee > this.ceiling.max * BigInt(next.vsize) ? null : candidateOf(next);
  }

  async feePaid(payout: StoredPayout, txid: string): Promise<bigint> {
    const candidate = payout.candidates.find((c) => c.txid === txid);
    if (!candidate) throw new Error(`payout ${payout.id} has no candidate ${txid}`);
    return candidate.fee;
  }

  async release(em: EntityManager, payout: StoredPayout): Promise<void> {
    await this.engine.release(em, payout.reservation);
  }
}

function candidateOf(p: BtcPayout): PayoutCandidate {
  const data: BtcCandidateData = {
    payoutId: p.payoutId,
    satPerVbyte: p.satPerVbyte,
    vsize: p.vsize,
    inputs: p.inputs.map((c) => ({ transferId: c.transferId, txid: c.txid, vout: c.vout, value: c.value.toString(), path: c.path })),
    outputs: p.outputs.map((o) => ({ vout: o.vout, address: o.address, value: o.value.toString(), withdrawalId: o.withdrawalId })),
  };
  return { txid: p.txid, raw: p.raw, fee: p.fee, data: data as unknown as Record<string, unknown> };
}

function payoutOf(c: PayoutCandidate, stored: StoredPayout): BtcPayout {
  const d = c.data as unknown as BtcCandidateData;
  return {
    payoutId: d.payoutId,
    chainId: stored.chainId,
    accountId: stored.accountId,
    txid: c.txid,
    raw: c.raw,
    fee: c.fee,
    satPerVbyte: d.satPerVbyte,
    vsize: d.vsize,
    inputs: d.inputs.map((i) => ({ transferId: i.transferId, txid: i.txid, vout: i.vout, value: BigInt(i.value), path: i.path })),
    outputs: d.outputs.map((o) => ({ vout: o.vout, address: o.address, value: BigInt(o.value), withdrawalId: o.withdrawalId })),
  };
}
