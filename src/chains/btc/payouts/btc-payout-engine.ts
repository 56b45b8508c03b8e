import type { EntityManager } from 'typeorm';
import { coinId } from '../../../catalog/coins';
import { btcNetwork } from '../derive';
import { outputScript } from '../parse';
import type { ChainSender } from '../../types';
import type { ChainConfig } from '../../../config/schema';
import { iso, type Clock } from '../../../shared/clock';
import { newTimeOrderedId } from '../../../shared/ids';
import type { AddressAllocator } from '../../../wallet/allocator';
import type { RemoteSigner } from '../../../wallet/signer-client';
import { selectCoins, selectWithin, type SelectionRequest } from './coin-selection';
import { releaseCoins, reserveCoins, spendableCoins, type SpendableCoin } from './coin-store';
import { BUILD_MAX_SAT_PER_VBYTE, NODE_MAX_SAT_PER_VBYTE, replacementFee, replacementFloor } from './replacement';
import { dustLimit, feeFor, outputVsize, P2WPKH_DUST, P2WPKH_INPUT_VSIZE, P2WPKH_SCRIPT_LENGTH, TWO_INPUT_PAYMENT_VSIZE, TX_OVERHEAD_VSIZE } from '../tx-size';

/** nSequence that signals replaceability (BIP125) and leaves locktime enforced. */
export const RBF_SEQUENCE = 0xfffffffd;

/** One withdrawal to pay in a payout transaction. */
export interface BtcWithdrawalOrder {
  withdrawalId: string;
  address: string;
  /** Satoshi. */
  amount: bigint;
}

export interface BtcPayoutOutput {
  vout: number;
  address: string;
  /** Satoshi. */
  value: bigint;
  /** The withdrawal it pays; null for the change output. */
  withdrawalId: string | null;
  /** The change's derivation path (the signer derives it to see the change is the account's). */
  path?: string;
}

/**
 * A signed payout transaction and everything to store before it is broadcast: the bytes and txid,
 * the coins it spends (reserved under `payoutId`), the fee, and what each output pays.
 */
export interface BtcPayout {
  /** Names this payout's reservation; a replacement keeps it (same coins). */
  payoutId: string;
  chainId: string;
  accountId: string;
  txid: string;
  raw: string;
  /** Satoshi. */
  fee: bigint;
  satPerVbyte: number;
  /** The estimated vsize the fee was priced on (at least the signed one). */
  vsize: number;
  inputs: SpendableCoin[];
  outputs: BtcPayoutOutput[];
}

export type PayoutRefusalReason = 'address_refused' | 'below_dust' | 'insufficient_coins' | 'replacement_uncovered' | 'above_node_max_fee_rate';

/**
 * A payout that cannot be built; `withdrawalId` names the one withdrawal at fault, when one is;
 * `short`: for `insufficient_coins`, the satoshi the account's coins lack.
 */
export class BtcPayoutRefused extends Error {
  constructor(
    readonly reason: PayoutRefusalReason,
    message: string,
    readonly withdrawalId: string | null = null,
    readonly short = 0n,
  ) {
    super(message);
    this.name = 'BtcPayoutRefused';
  }
}

/** A payout chosen from the account's coins, nothing written yet: `commit` reserves and signs it. */
export interface BtcPlan {
  accountId: string;
  orders: readonly BtcWithdrawalOrder[];
  coins: SpendableCoin[];
  /** 0n: no change output. */
  change: bigint;
  fee: bigint;
  vsize: number;
  satPerVbyte: number;
}

export interface BtcPayoutEngineDeps {
  chain: ChainConfig;
  /** The wallet's signer (the signer process, through its socket): the only place a key is derived. */
  signer: Pick<RemoteSigner, 'signBitcoin'>;
  /** Issues the change addresses (AddressService, purpose `change`: the account's internal chain). */
  addresses: AddressAllocator;
  clock: Clock;
}

/**
 * Builds, signs and replaces the Bitcoin payout transactions of one chain (PRODUCT §8a): each
 * spends only the paying account's coins, pays a batch of its withdrawals (one output each) and its
 * change to a fresh address of its internal chain, and signals RBF. It reads and writes only in the
 * caller's transaction and broadcasts nothing: the payout worker stores the result, then broadcasts
 * it through the chain's adapter.
 */
export class BtcPayoutEngine {
  private readonly network;
  private readonly nativeCoin: string;

  constructor(private readonly deps: BtcPayoutEngineDeps) {
    if (deps.chain.kind !== 'btc') throw new Error(`${deps.chain.id} is not a Bitcoin chain`);
    this.network = btcNetwork(deps.chain);
    this.nativeCoin = coinId(deps.chain.id, 'native');
  }

  /** The rate a payout would pay now: the node's estimate (or the configured fallback), at least 1 sat/vB; the rail holds it to the chain's ceiling. */
  async feeRate(sender: ChainSender, signal?: AbortSignal): Promise<number> {
    const quote = await sender.feeQuote(signal);
    if (quote.kind !== 'btc') throw new Error(`${this.deps.chain.id}: not a Bitcoin fee quote`);
    return Math.max(1, quote.satPerVbyte);
  }

  /**
   * Chooses the account's coins for `orders` at `satPerVbyte`, or, with `maxFee` (what the
   * withdrawals reserved for their network fee), at the highest rate up to it whose fee stays
   * within that (selectWithin). Reads only: throws BtcPayoutRefused for a bad destination, an
   * amount below dust, or coins that cannot pay (with what they lack).
   */
  async plan(em: EntityManager, request: { accountId: string; orders: readonly BtcWithdrawalOrder[]; satPerVbyte: number; maxFee?: bigint }): Promise<BtcPlan> {
    const req = { ...request, satPerVbyte: Math.min(request.satPerVbyte, BUILD_MAX_SAT_PER_VBYTE) };
    if (req.orders.length === 0) throw new Error('a payout pays at least one withdrawal');
    const scripts = req.orders.map((o) => this.checkedScript(o));
    const target = req.orders.reduce((s, o) => s + o.amount, 0n);
    const selection = this.selection(
      await spendableCoins(em, this.deps.chain.id, req.accountId),
      target,
      scripts.map((script) => script.length),
      req.satPerVbyte,
    );
    const chosen = req.maxFee === undefined ? withRate(selectCoins(selection), req.satPerVbyte) : selectWithin(selection, req.maxFee);
    if (!chosen) {
      const short = this.shortOf(selection, req.maxFee);
      throw new BtcPayoutRefused(
        'insufficient_coins',
        `the account's coins on ${this.deps.chain.id} cannot pay ${target} sat and the fee: ${short} sat short`,
        null,
        short,
      );
    }
    return {
      accountId: req.accountId,
      orders: req.orders,
      coins: chosen.coins,
      change: chosen.change,
      fee: chosen.fee,
      vsize: chosen.vsize,
      satPerVbyte: chosen.satPerVbyte,
    };
  }

  /** Signs a plan, and reserves its coins in the caller's transaction (a change address is issued there too): commit it with the stored result. */
  async commit(em: EntityManager, plan: BtcPlan): Promise<BtcPayout> {
    const outputs: BtcPayoutOutput[] = plan.orders.map((o, vout) => ({ vout, address: o.address, value: o.amount, withdrawalId: o.withdrawalId }));
    if (plan.change > 0n) {
      const change = await this.deps.addresses.allocate(em, { accountId: plan.accountId, coinId: this.nativeCoin, purpose: 'change' });
      outputs.push({ vout: outputs.length, address: change.address, value: plan.change, withdrawalId: null, path: change.derivation_path });
    }
    const now = this.deps.clock.now();
    const payoutId = newTimeOrderedId(now.getTime());
    await reserveCoins(em, { payoutId, accountId: plan.accountId, chainId: this.deps.chain.id, now: iso(now) }, plan.coins);
    return this.sign({ payoutId, accountId: plan.accountId, inputs: plan.coins, outputs, fee: plan.fee, vsize: plan.vsize, satPerVbyte: plan.satPerVbyte });
  }

  /** `plan` and `commit` in the caller's transaction. */
  async build(em: EntityManager, req: { accountId: string; orders: readonly BtcWithdrawalOrder[]; satPerVbyte: number; maxFee?: bigint }): Promise<BtcPayout> {
    return this.commit(em, await this.plan(em, req));
  }

  /**
   * The network fee a payout of `amount` to `address` (null: not given, a P2WPKH one) would take
   * from the account's coins now at `satPerVbyte`, chosen as a payout chooses them: a withdrawal's
   * reserve. When the coins cannot pay it now (some are on their way back as change), all of them
   * spent with no change; with none at all, a payment with two inputs and a change.
   */
  async feeOf(em: EntityManager, req: { accountId: string; address: string | null; amount: bigint; satPerVbyte: number }): Promise<bigint> {
    const script = req.address === null ? null : outputScript(req.address, this.network);
    const coins = await spendableCoins(em, this.deps.chain.id, req.accountId);
    const selection = this.selection(coins, req.amount, [script?.length ?? P2WPKH_SCRIPT_LENGTH], req.satPerVbyte);
    const chosen = selectCoins(selection);
    if (chosen) return chosen.fee;
    return feeFor(coins.length === 0 ? TWO_INPUT_PAYMENT_VSIZE : allCoinsVsize(selection), req.satPerVbyte);
  }

  private selection(coins: SpendableCoin[], target: bigint, scriptLengths: readonly number[], satPerVbyte: number): SelectionRequest<SpendableCoin> {
    const baseVsize = TX_OVERHEAD_VSIZE + scriptLengths.reduce((s, length) => s + outputVsize(length), 0);
    return { coins, target, baseVsize, satPerVbyte, changeVsize: outputVsize(P2WPKH_SCRIPT_LENGTH), changeDust: P2WPKH_DUST };
  }

  /** What the coins lack to pay the target and the fee of spending them all, at the rate a payout would go out at. */
  private shortOf(s: SelectionRequest<SpendableCoin>, maxFee?: bigint): bigint {
    const vsize = allCoinsVsize(s);
    const within = maxFee === undefined ? s.satPerVbyte : Math.max(1, Math.min(s.satPerVbyte, Math.floor(Number(maxFee) / vsize)));
    const short = s.target + feeFor(vsize, within) - s.coins.reduce((sum, c) => sum + c.value, 0n);
    return short > 0n ? short : 1n;
  }

  /**
   * A BIP125 replacement of `payout` at `satPerVbyte`: the same coins and payments, a higher fee
   * taken from the change (dropped when it would become dust), paying for the descendants the
   * node counts (`conflictingFees`: the fees of what it would evict, from its mempool). Throws
   * `replacement_uncovered` when the change cannot pay it, `above_node_max_fee_rate` when that
   * fee is above what Bitcoin Core relays. Nothing to store but the result: the coins stay
   * reserved as they were.
   */
  async replace(payout: BtcPayout, rate: number, conflictingFees = payout.fee): Promise<BtcPayout> {
    const satPerVbyte = Math.min(rate, BUILD_MAX_SAT_PER_VBYTE);
    const changeOut = payout.outputs.find((o) => o.withdrawalId === null);
    const payments = payout.outputs.filter((o) => o.withdrawalId !== null);
    const changeVsize = outputVsize(P2WPKH_SCRIPT_LENGTH);
    const next = replacementFee(
      {
        inputsTotal: payout.inputs.reduce((s, c) => s + c.value, 0n),
        paymentsTotal: payments.reduce((s, o) => s + o.value, 0n),
        fee: payout.fee,
        conflictingFees,
        vsize: payout.vsize,
        change: changeOut?.value ?? 0n,
        changeVsize,
        changeDust: P2WPKH_DUST,
      },
      satPerVbyte,
    );
    if (!next) throw new BtcPayoutRefused('replacement_uncovered', `payout ${payout.txid}: its change cannot pay a replacement at ${satPerVbyte} sat/vB`);
    const outputs = next.change > 0n ? payout.outputs.map((o) => (o.withdrawalId === null ? { ...o, value: next.change } : o)) : payments;
    return this.sign({ payoutId: payout.payoutId, accountId: payout.accountId, inputs: payout.inputs, outputs, fee: next.fee, vsize: next.vsize, satPerVbyte });
  }

  /**
   * The cancel of `payout` (PRODUCT §14, `coinkeep payouts cancel`): the same coins, all paid back
   * to a fresh address of the account's internal chain, at `satPerVbyte` and at least what BIP125
   * asks of a replacement of `payout`, its payees' descendants in the node's mempool included
   * (`conflictingFees`). Throws `replacement_uncovered` when the coins cannot pay that fee,
   * `above_node_max_fee_rate` when it is above what Bitcoin Core relays.
   */
  async cancel(em: EntityManager, payout: BtcPayout, rate: number, conflictingFees = payout.fee): Promise<BtcPayout> {
    const satPerVbyte = Math.min(rate, BUILD_MAX_SAT_PER_VBYTE);
    const inputsTotal = payout.inputs.reduce((s, c) => s + c.value, 0n);
    const outputsVsize = payout.outputs.reduce((s, o) => s + outputVsize(outputScript(o.address, this.network)!.length), 0);
    const vsize = payout.vsize - outputsVsize + outputVsize(P2WPKH_SCRIPT_LENGTH);
    const fee = replacementFloor(vsize, satPerVbyte, payout.fee, conflictingFees);
    if (inputsTotal - fee < P2WPKH_DUST)
      throw new BtcPayoutRefused('replacement_uncovered', `payout ${payout.txid}: its coins cannot pay a cancel at ${satPerVbyte} sat/vB`);
    const back = await this.deps.addresses.allocate(em, { accountId: payout.accountId, coinId: this.nativeCoin, purpose: 'change' });
    const outputs = [{ vout: 0, address: back.address, value: inputsTotal - fee, withdrawalId: null, path: back.derivation_path }];
    return this.sign({ payoutId: payout.payoutId, accountId: payout.accountId, inputs: payout.inputs, outputs, fee, vsize, satPerVbyte });
  }

  /** Gives the coins of a payout back to the account (its transaction refused, or its coins taken by another). */
  release(em: EntityManager, payoutId: string): Promise<number> {
    return releaseCoins(em, payoutId);
  }

  private async sign(p: Omit<BtcPayout, 'chainId' | 'txid' | 'raw'>): Promise<BtcPayout> {
    // Bitcoin Core refuses a fee above its default maxfeerate over the signed size; the signed size is
    // at most half a vbyte an input and 5 of overhead under the estimate: checked on that least size.
    const leastVsize = p.vsize - p.inputs.length - 5;
    if (p.fee > BigInt(NODE_MAX_SAT_PER_VBYTE) * BigInt(leastVsize))
      throw new BtcPayoutRefused(
        'above_node_max_fee_rate',
        `a fee of ${p.fee} sat over about ${leastVsize} vB is above Bitcoin Core's maxfeerate (0.10 BTC/kvB)`,
      );
    const withdrawals = p.outputs.flatMap((o) => (o.withdrawalId === null ? [] : [o.withdrawalId]));
    // The signer reads the named withdrawals and the account's coins itself and signs only what matches them.
    const signed = await this.deps.signer.signBitcoin(
      {
        chain: this.deps.chain,
        coins: p.inputs.map((c) => ({ txid: c.txid, vout: c.vout, value: c.value, path: c.path })),
        outputs: p.outputs.map((o) => ({ address: o.address, value: o.value, path: o.path })),
        sequence: RBF_SEQUENCE,
      },
      { kind: withdrawals.length === 0 ? 'cancel' : 'payout', account_id: p.accountId, withdrawal_ids: withdrawals },
    );
    // The estimate counts every signature at its longest: the signed size is never above it.
    if (signed.vsize > p.vsize) throw new Error(`payout ${signed.txid}: signed vsize ${signed.vsize} above the estimate ${p.vsize}`);
    return { ...p, chainId: this.deps.chain.id, txid: signed.txid, raw: signed.raw };
  }

  private checkedScript(order: BtcWithdrawalOrder): Uint8Array {
    const script = outputScript(order.address, this.network);
    if (!script) throw new BtcPayoutRefused('address_refused', `${order.address} is not an address of ${this.deps.chain.id}`, order.withdrawalId);
    if (order.amount < dustLimit(script))
      throw new BtcPayoutRefused('below_dust', `${order.amount} sat is below the dust limit of ${order.address}`, order.withdrawalId);
    return script;
  }
}

const withRate = <T>(s: T | null, satPerVbyte: number): (T & { satPerVbyte: number }) | null => s && { ...s, satPerVbyte };

/** The vsize of a payout spending every coin of `s`, without change. */
const allCoinsVsize = (s: SelectionRequest<{ value: bigint }>): number => s.baseVsize + s.coins.length * P2WPKH_INPUT_VSIZE;
