import type { EntityManager } from 'typeorm';
import { coinId } from '../../catalog/coins';
import { btcNetwork } from '../../chains/btc/derive';
import { outputScript } from '../../chains/btc/parse';
import type { ChainSender } from '../../chains/types';
import type { ChainConfig } from '../../config/schema';
import { iso, type Clock } from '../../shared/clock';
import { newTimeOrderedId } from '../../shared/ids';
import type { AddressAllocator } from '../../wallet/allocator';
import type { BtcSpend, SignedBtc } from '../../wallet/signer';
import { selectCoins } from './coin-selection';
import { releaseCoins, reserveCoins, spendableCoins, type SpendableCoin } from './coin-store';
import { replacementFee } from './replacement';
import { dustLimit, outputVsize, P2WPKH_DUST, P2WPKH_SCRIPT_LENGTH, TX_OVERHEAD_VSIZE } from './tx-size';

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

export type PayoutRefusalReason = 'address_refused' | 'below_dust' | 'insufficient_coins' | 'replacement_uncovered';

/** A payout that cannot be built; `withdrawalId` names the one withdrawal at fault, when one is. */
export class BtcPayoutRefused extends Error {
  constructor(
    readonly reason: PayoutRefusalReason,
    message: string,
    readonly withdrawalId: string | null = null,
  ) {
    super(message);
    this.name = 'BtcPayoutRefused';
  }
}

export interface BtcPayoutEngineDeps {
  chain: ChainConfig;
  /** The wallet's signer (WalletSigner): the only place a key is derived. */
  signer: { signBitcoin(spend: BtcSpend): SignedBtc };
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
   * Selects the account's coins for `orders`, signs the transaction, and reserves the coins in the
   * caller's transaction (a change address is issued there too): commit it with the stored result.
   */
  async build(em: EntityManager, req: { accountId: string; orders: readonly BtcWithdrawalOrder[]; satPerVbyte: number }): Promise<BtcPayout> {
    if (req.orders.length === 0) throw new Error('a payout pays at least one withdrawal');
    const scripts = req.orders.map((o) => this.checkedScript(o));
    const target = req.orders.reduce((s, o) => s + o.amount, 0n);
    const baseVsize = TX_OVERHEAD_VSIZE + scripts.reduce((s, script) => s + outputVsize(script.length), 0);
    const changeVsize = outputVsize(P2WPKH_SCRIPT_LENGTH);
    const coins = await spendableCoins(em, this.deps.chain.id, req.accountId);
    const chosen = selectCoins({ coins, target, baseVsize, satPerVbyte: req.satPerVbyte, changeVsize, changeDust: P2WPKH_DUST });
    if (!chosen) throw new BtcPayoutRefused('insufficient_coins', `the account's coins on ${this.deps.chain.id} cannot pay ${target} sat and the fee`);

    const outputs: BtcPayoutOutput[] = req.orders.map((o, vout) => ({ vout, address: o.address, value: o.amount, withdrawalId: o.withdrawalId }));
    if (chosen.change > 0n) {
      const change = await this.deps.addresses.allocate(em, { accountId: req.accountId, coinId: this.nativeCoin, purpose: 'change' });
      outputs.push({ vout: outputs.length, address: change.address, value: chosen.change, withdrawalId: null });
    }
    const now = this.deps.clock.now();
    const payoutId = newTimeOrderedId(now.getTime());
    await reserveCoins(em, { payoutId, accountId: req.accountId, chainId: this.deps.chain.id, now: iso(now) }, chosen.coins);
    return this.sign({ payoutId, accountId: req.accountId, inputs: chosen.coins, outputs, fee: chosen.fee, vsize: chosen.vsize, satPerVbyte: req.satPerVbyte });
  }

  /**
   * A BIP125 replacement of `payout` at `satPerVbyte`: the same coins and payments, a higher fee
   * taken from the change (dropped when it would become dust). Throws `replacement_uncovered` when
   * the change cannot pay it. Nothing to store but the result: the coins stay reserved as they were.
   */
  replace(payout: BtcPayout, satPerVbyte: number): BtcPayout {
    const changeOut = payout.outputs.find((o) => o.withdrawalId === null);
    const payments = payout.outputs.filter((o) => o.withdrawalId !== null);
    const changeVsize = outputVsize(P2WPKH_SCRIPT_LENGTH);
    const next = replacementFee(
      {
        inputsTotal: payout.inputs.reduce((s, c) => s + c.value, 0n),
        paymentsTotal: payments.reduce((s, o) => s + o.value, 0n),
        fee: payout.fee,
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

  /** Gives the coins of a payout back to the account (its transaction refused, or its coins taken by another). */
  release(em: EntityManager, payoutId: string): Promise<number> {
    return releaseCoins(em, payoutId);
  }

  private sign(p: Omit<BtcPayout, 'chainId' | 'txid' | 'raw'>): BtcPayout {
    const signed = this.deps.signer.signBitcoin({
      chain: this.deps.chain,
      coins: p.inputs.map((c) => ({ txid: c.txid, vout: c.vout, value: c.value, path: c.path })),
      outputs: p.outputs.map((o) => ({ address: o.address, value: o.value, script: outputScript(o.address, this.network) ?? undefined })),
      sequence: RBF_SEQUENCE,
    });
    // The estimate counts every signature at its longest: the signed size is never above it.
    if (signed.vsize > p.vsize) throw new Error(`payout ${signed.txid}: signed vsize ${signed.vsize} above the estimate ${p.vsize}`);
    return { ...p, chainId: this.deps.chain.id, txid: signed.txid, raw: signed.raw };
  }

  private checkedScript(order: BtcWithdrawalOrder): Uint8Array {
    const script = outputScript(order.address, this.network);
    if (!script) throw new BtcPayoutRefused('address_refused', `${order.address} is not an address of ${this.deps.chain.id}`, order.withdrawalId);
    if (order.amount < dustLimit(script)) throw new BtcPayoutRefused('below_dust', `${order.amount} sat is below the dust limit of ${order.address}`, order.withdrawalId);
    return script;
  }
}
