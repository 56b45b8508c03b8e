import type { EntityManager } from 'typeorm';
import { coinId, NATIVE_ASSET } from '../../../catalog/coins';
import type { ChainReader, ChainSender } from '../../types';
import type { ChainConfig } from '../../../config/schema';
import { notFunded } from '../../../payouts/not-funded';
import type { PayoutCandidate, PayoutOrder, PayoutRail, RailBuild, RefusedOrder, SpendKey, StoredPayout } from '../../../payouts/rail';
import { BtcPayoutEngine, BtcPayoutRefused, type BtcPayout, type BtcPayoutEngineDeps, type BtcPlan } from './btc-payout-engine';
import { coinsComing } from './coin-store';
import type { FeeCeiling } from '../../../payouts/fee-ceiling';

/** Outputs per payout: far below the standard transaction size for P2WPKH payments. */
export const BTC_MAX_BATCH = 250;
/** Coin selections one build tries at most (the oldest orders the coins pay together are found by bisection). */
const MAX_PLANS = 64;

/** What a Bitcoin candidate keeps in its `data` (JSON: satoshi as decimal strings). */
interface BtcCandidateData {
  payoutId: string;
  satPerVbyte: number;
  vsize: number;
  inputs: Array<{ transferId: string; txid: string; vout: number; value: string; path: string }>;
  outputs: Array<{ vout: number; address: string; value: string; withdrawalId: string | null; path?: string }>;
}

/** What `prepare` gives a replacement or a cancel: the node's rate, and the fees of what the node's mempool would evict (null: none of the payout's candidates there). */
interface ReplacementQuote {
  satPerVbyte: number;
  conflictingFees: bigint | null;
}

/** A replacement that cannot be made now (it waits): its change or coins cannot pay it, or the node would refuse its fee rate. */
const WAITS: ReadonlySet<string> = new Set(['replacement_uncovered', 'above_node_max_fee_rate']);

/** What the merchant reads in `failure_reason` for an order the engine refuses on its own. */
const REFUSAL_TEXT: Record<string, string> = {
  address_refused: 'the destination is not an address this chain can pay',
  below_dust: 'the amount is below the smallest output the network relays to this destination',
};

/**
 * Bitcoin's payout rail: the BtcPayoutEngine (coin selection from the account's own coins, batch,
 * RBF, change to its internal chain) behind the worker's rail interface, and the chain's adapter
 * for the node. A destination the engine refuses fails alone; when the account's free coins cannot
 * pay the whole batch, it pays the oldest orders they can, and the others wait for a later payout
 * (its change comes back confirmed). An order the coins cannot pay even alone waits while coins
 * may come back to the account; once none may, it cannot be funded and fails with what is missing,
 * and the orders after it are paid all the same. A payout never takes more for its fee than its
 * withdrawals reserved (BtcPayoutEngine.plan), so the account's coins keep what its balance says.
 * Nothing is signed above the chain's ceiling (`payouts.max_fee`): while the node's rate is above
 * it, new payouts wait.
 */
export class BtcRail implements PayoutRail {
  readonly chainId: string;
  readonly maxBatch = BTC_MAX_BATCH;
  private readonly engine: BtcPayoutEngine;
  private readonly chain: ChainConfig;

  constructor(
    deps: BtcPayoutEngineDeps,
    private readonly node: ChainSender & Pick<ChainReader, 'tip'> & { mempoolFees?(txid: string, signal?: AbortSignal): Promise<bigint | null> },
    private readonly ceiling: FeeCeiling,
  ) {
    this.chainId = deps.chain.id;
    this.chain = deps.chain;
    this.engine = new BtcPayoutEngine(deps);
  }

  async height(signal?: AbortSignal): Promise<number> {
    return (await this.node.tip(signal)).height;
  }

  /**
   * The node's fee rate (sat/vB) for the next build; for a replacement or cancel of `payout`, also
   * what the node's mempool holds of its candidates with their descendants (BIP125 rule 3: a
   * payee spending its output unconfirmed makes the replacement pay for that child too).
   */
  async prepare(signal?: AbortSignal, payout?: StoredPayout): Promise<number | ReplacementQuote> {
    const satPerVbyte = await this.engine.feeRate(this.node, signal);
    if (!payout || !this.node.mempoolFees) return satPerVbyte;
    let conflictingFees: bigint | null = null;
    for (const c of payout.candidates) {
      const fees = await this.node.mempoolFees(c.txid, signal);
      if (fees !== null) conflictingFees = (conflictingFees ?? 0n) + fees;
    }
    return { satPerVbyte, conflictingFees };
  }

  async build(em: EntityManager, req: { accountId: string; orders: readonly PayoutOrder[]; prepared: unknown }): Promise<RailBuild> {
    const satPerVbyte = req.prepared as number;
    const refused: RefusedOrder[] = [];
    if (!this.ceiling.admits('payouts', BigInt(satPerVbyte))) return { payout: null, refused };
    let plans = 0;
    const plan = async (orders: readonly PayoutOrder[]): Promise<BtcPlan | BtcPayoutRefused> => {
      plans++;
      const maxFee = orders.every((o) => o.networkFee !== undefined) ? orders.reduce((s, o) => s + o.networkFee!, 0n) : undefined;
      try {
        return await this.engine.plan(em, {
          accountId: req.accountId,
          orders: orders.map((o) => ({ withdrawalId: o.withdrawalId, address: o.address, amount: o.amount })),
          satPerVbyte,
          maxFee,
        });
      } catch (err) {
        if (err instanceof BtcPayoutRefused) return err;
        throw err;
      }
    };
    let coming: boolean | undefined;
    let orders = [...req.orders];
    while (orders.length > 0 && plans < MAX_PLANS) {
      const found = await longestPayable(plan, orders);
      if ('plan' in found) {
        const payout = await this.engine.commit(em, found.plan);
        const legs = payout.outputs.filter((o) => o.withdrawalId !== null).map((o) => ({ withdrawalId: o.withdrawalId!, output: o.vout }));
        return { payout: { candidate: candidateOf(payout), legs, reservation: payout.payoutId }, refused };
      }
      if ('fault' in found) {
        const { withdrawalId, reason } = found.fault;
        if (withdrawalId === null || !REFUSAL_TEXT[reason]) throw found.fault;
        refused.push({ withdrawalId, reason: REFUSAL_TEXT[reason]! });
        orders = orders.filter((o) => o.withdrawalId !== withdrawalId);
        continue;
      }
      // The oldest cannot be paid even alone: it waits for coins on their way back, or cannot be funded; the others still may be paid.
      coming ??= await coinsComing(em, this.chainId, req.accountId, coinId(this.chainId, NATIVE_ASSET));
      if (!coming)
        refused.push({ withdrawalId: orders[0]!.withdrawalId, reason: notFunded(found.short, this.chain.native.decimals, this.chain.native.ticker) });
      orders = orders.slice(1);
    }
    return { payout: null, refused };
  }

  /**
   * The network fee (satoshi) a withdrawal of `amount` to `to` reserves at `satPerVbyte`: what its
   * payout would take from the account's coins now (BtcPayoutEngine.feeOf).
   */
  networkCost(em: EntityManager, req: { accountId: string; to: string | null; amount: bigint; satPerVbyte: number }): Promise<bigint> {
    return this.engine.feeOf(em, { accountId: req.accountId, address: req.to, amount: req.amount, satPerVbyte: req.satPerVbyte });
  }

  async broadcast(candidate: PayoutCandidate, signal?: AbortSignal): Promise<void> {
    await this.node.broadcast(candidate.raw, signal);
  }

  /** The received outputs it spends: another transaction spending one of them in a confirmed block proves the payout dead. */
  spendKey(candidate: PayoutCandidate): SpendKey {
    return { coins: (candidate.data as unknown as BtcCandidateData).inputs.map((i) => i.transferId) };
  }

  /**
   * BIP125, only once the node's rate is above what the current candidate pays (a market that has
   * not moved gets no replacement): the same coins and payments at that rate, at most the ceiling,
   * the replaced fee plus the incremental relay fee at least. Null when none is due, or when the
   * ceiling or the change leaves no room for one.
   */
  async replace(_em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const current = payoutOf(payout.candidates[payout.candidates.length - 1]!, payout);
    const { satPerVbyte: quote, conflictingFees } = quoteOf(prepared);
    if (quote <= current.satPerVbyte) return null;
    this.ceiling.admits('replacements', BigInt(quote));
    const rate = Math.min(quote, Number(this.ceiling.max));
    if (rate <= current.satPerVbyte) return null;
    let next: BtcPayout;
    try {
      next = await this.engine.replace(current, rate, conflictingFees ?? current.fee);
    } catch (err) {
      if (err instanceof BtcPayoutRefused && WAITS.has(err.reason)) return null;
      throw err;
    }
    // BIP125's increment over a fee that took a dropped change's dust may put it above the ceiling.
    return next.fee > this.ceiling.max * BigInt(next.vsize) ? null : candidateOf(next);
  }

  /** Its coins back to the account's change, at the node's rate now (at least one more than the current candidate's), never over the ceiling. */
  async cancel(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const current = payoutOf(payout.candidates[payout.candidates.length - 1]!, payout);
    const { satPerVbyte, conflictingFees } = quoteOf(prepared);
    const rate = Math.min(Number(this.ceiling.max), Math.max(satPerVbyte, current.satPerVbyte + 1));
    try {
      return { ...candidateOf(await this.engine.cancel(em, current, rate, conflictingFees ?? current.fee)), kind: 'cancel' };
    } catch (err) {
      if (err instanceof BtcPayoutRefused && WAITS.has(err.reason)) return null;
      throw err;
    }
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

/**
 * The oldest of `orders` the coins pay together (`plan` of all of them, else the longest run from
 * the oldest, by bisection); or the refusal of one order at fault; or, when the oldest alone
 * cannot be paid, what the coins lack for it.
 */
async function longestPayable(
  plan: (orders: readonly PayoutOrder[]) => Promise<BtcPlan | BtcPayoutRefused>,
  orders: readonly PayoutOrder[],
): Promise<{ plan: BtcPlan } | { fault: BtcPayoutRefused } | { short: bigint }> {
  const all = await plan(orders);
  if (!(all instanceof BtcPayoutRefused)) return { plan: all };
  if (all.reason !== 'insufficient_coins') return { fault: all };
  // `low` orders are payable (none at first), `high` are not.
  let low = 0;
  let high = orders.length;
  let best: BtcPlan | null = null;
  let oldestShort = all.short;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    const tried = await plan(orders.slice(0, mid));
    if (!(tried instanceof BtcPayoutRefused)) {
      best = tried;
      low = mid;
    } else if (tried.reason === 'insufficient_coins') {
      high = mid;
      oldestShort = tried.short;
    } else {
      return { fault: tried };
    }
  }
  return best ? { plan: best } : { short: oldestShort };
}

/** `prepare`'s answer: a rate alone (for a build), or with what the mempool holds (for a replacement or cancel). */
const quoteOf = (prepared: unknown): ReplacementQuote =>
  typeof prepared === 'number' ? { satPerVbyte: prepared, conflictingFees: null } : (prepared as ReplacementQuote);

function candidateOf(p: BtcPayout): PayoutCandidate {
  const data: BtcCandidateData = {
    payoutId: p.payoutId,
    satPerVbyte: p.satPerVbyte,
    vsize: p.vsize,
    inputs: p.inputs.map((c) => ({ transferId: c.transferId, txid: c.txid, vout: c.vout, value: c.value.toString(), path: c.path })),
    outputs: p.outputs.map((o) => ({
      vout: o.vout,
      address: o.address,
      value: o.value.toString(),
      withdrawalId: o.withdrawalId,
      ...(o.path ? { path: o.path } : {}),
    })),
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
    outputs: d.outputs.map((o) => ({
      vout: o.vout,
      address: o.address,
      value: BigInt(o.value),
      withdrawalId: o.withdrawalId,
      ...(o.path ? { path: o.path } : {}),
    })),
  };
}
