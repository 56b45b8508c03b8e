import type { EntityManager } from 'typeorm';
import type { ChainReader, ChainSender } from '../../chains/types';
import type { ChainConfig } from '../../config/schema';
import type { PayoutCandidate, PayoutOrder, PayoutRail, RailBuild, RefusedOrder, SpendKey, StoredPayout } from '../rail';
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
 */
export class BtcRail implements PayoutRail {
  readonly chainId: string;
  readonly maxBatch = BTC_MAX_BATCH;
  private readonly engine: BtcPayoutEngine;

  constructor(
    deps: BtcPayoutEngineDeps,
    private readonly node: ChainSender & Pick<ChainReader, 'tip'>,
    private readonly chain: ChainConfig = deps.chain,
  ) {
    this.chainId = deps.chain.id;
    this.engine = new BtcPayoutEngine(deps);
  }

  async height(signal?: AbortSignal): Promise<number> {
    return (await this.node.tip(signal)).height;
  }

  /** The fee rate (sat/vB) of the next build or replacement. */
  prepare(signal?: AbortSignal): Promise<number> {
    return this.engine.feeRate(this.node, signal);
  }

  async build(em: EntityManager, req: { accountId: string; orders: readonly PayoutOrder[]; prepared: unknown }): Promise<RailBuild> {
    const satPerVbyte = req.prepared as number;
    const refused: RefusedOrder[] = [];
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

  /** The received outputs it spends: another transaction spending one of them in a confirmed block proves the payout dead. */
  spendKey(candidate: PayoutCandidate): SpendKey {
    return { coins: (candidate.data as unknown as BtcCandidateData).inputs.map((i) => i.transferId) };
  }

  /**
   * BIP125: the same coins and payments at the node's rate now, or, when the rate has not moved,
   * a quarter more than the current candidate's (at least 1 sat/vB more), never over the ceiling.
   */
  async replace(_em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const current = payoutOf(payout.candidates[payout.candidates.length - 1]!, payout);
    const ceiling = this.chain.fees!.max_sat_vb;
    const rate = Math.min(ceiling, Math.max(prepared as number, Math.ceil(current.satPerVbyte * 1.25), current.satPerVbyte + 1));
    if (rate <= current.satPerVbyte) return null;
    try {
      return candidateOf(this.engine.replace(current, rate));
    } catch (err) {
      if (err instanceof BtcPayoutRefused && err.reason === 'replacement_uncovered') return null;
      throw err;
    }
  }

  /** Its coins back to the account's change, at the node's rate now (at least one more than the current candidate's), never over the ceiling. */
  async cancel(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const current = payoutOf(payout.candidates[payout.candidates.length - 1]!, payout);
    const rate = Math.min(this.chain.fees!.max_sat_vb, Math.max(prepared as number, current.satPerVbyte + 1));
    try {
      return { ...candidateOf(await this.engine.cancel(em, current, rate)), kind: 'cancel' };
    } catch (err) {
      if (err instanceof BtcPayoutRefused && err.reason === 'replacement_uncovered') return null;
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
