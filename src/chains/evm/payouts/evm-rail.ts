import type { EntityManager } from 'typeorm';
import { pendingPayouts } from '../../../payouts/pending-payouts';
import { coinId, NATIVE_ASSET, type Catalog } from '../../../catalog/coins';
import type { ChainConfig } from '../../../config/schema';
import type { AddressRow } from '../../../db/entities/chain';
import { inList, placeholder, rawQuery, rawRun } from '../../../db/raw';
import type { Store } from '../../../db/store';
import type { MoneyMovement } from '../../../money/money-movement';
import type { Logger } from '../../../shared/logger';
import { iso, type Clock } from '../../../shared/clock';
import { Amount } from '../../../shared/amount';
import { notFunded } from '../../../payouts/not-funded';
import { REVERTED_ON_CHAIN, SPENT_BY_ANOTHER } from '../../../payouts/payout-worker';
import { undelivered, type Undelivered } from '../../../payouts/token-delivery';
import { addressDigits } from '../address-text';
import type { FeeCeiling } from '../../../payouts/fee-ceiling';
import type { PayoutCandidate, PayoutOrder, PayoutRail, RailBuild, SpendKey, StoredPayout } from '../../../payouts/rail';
import { treasuryShortfall } from '../../../payouts/treasury-shortfall';
import type { EvmFees, EvmNode } from './evm-node';
import { cancelFees, evmQuote, newFees, replacementFees, type EvmQuote } from './fee-policy';
import { maxCost, nativeGas, tokenGas } from '../fee-model';
import type { EvmSendQueue } from './send-queue';
import { sendById, updateSend, type EvmSendRow } from './send-store';
import type { EvmSweeper } from './sweeper';

/** What `prepare` read of the node for the builds of one pass. */
interface Prepared {
  quote: EvmQuote;
  /** What a new payout pays now; null while the quote is above the chain's ceiling (payouts wait). */
  fees: EvmFees | null;
  /** By account: its treasury, what it holds on the node (latest), and its nonces. */
  treasuries: Map<string, TreasuryState>;
  /** The gas station's next nonce, mempool included, and its balance (wei). */
  stationPending: number;
  stationBalance: bigint;
}

interface TreasuryState {
  address: string;
  path: string;
  /** Base units by asset (`native` or the token contract). */
  held: Map<string, bigint>;
  latest: number;
  pending: number;
}

/** What an EVM candidate keeps in its `data`. */
interface EvmCandidateData {
  sendId: string;
  from: string;
  nonce: number;
  gasLimit: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
}

export interface EvmRailDeps {
  chain: ChainConfig;
  node: EvmNode;
  store: Store;
  catalog: Catalog;
  queue: EvmSendQueue;
  sweeper: EvmSweeper;
  gasStation: { address: string; path: string };
  /** The account's treasury on this chain, recorded on first use (AddressService.treasury). */
  treasuryOf: (em: EntityManager, accountId: string) => Promise<AddressRow>;
  money: MoneyMovement;
  clock: Clock;
  logger: Logger;
  /** The chain's `payouts.max_fee`: no payout, replacement or top-up is signed above it. */
  ceiling: FeeCeiling;
}

/**
 * The EVM payout rail (issue 19 §2): one withdrawal a payout, ETH or a token, sent from the
 * account's treasury with EIP-1559 fees. The treasury's nonce is taken from the nonce store
 * (`account_sends`, as `reserved`) in the transaction that stores the payout, so the payouts of one pass
 * get consecutive nonces before any reaches the node. A payout waits (`payout: null`) while the
 * treasury does not hold what it pays plus what its unmined payouts will take: a sweep on its way
 * brings it (the sweeper sweeps that account's coin at once, whatever its minimum); a token payout
 * also waits for the gas station's top-up of the treasury's gas, which it asks for here.
 * A replacement keeps the nonce and pays what the node asks once that is more than the payout
 * offers, both caps bumped by the replacement rule. Nothing is signed above the chain's ceiling.
 */
export class EvmRail implements PayoutRail {
  readonly chainId: string;
  readonly maxBatch = 1;
  /** Each signed send (payouts, sweeps, top-ups) books what the chain took itself (MoneyMovement.bookOwnSend). */
  readonly booksOwnFees = true;
  private readonly native: string;

  constructor(private readonly deps: EvmRailDeps) {
    this.chainId = deps.chain.id;
    this.native = coinId(deps.chain.id, NATIVE_ASSET);
  }

  async height(signal?: AbortSignal): Promise<number> {
    return (await this.deps.node.tip(signal)).height;
  }

  /** The node's fee quote; the treasuries of the accounts with pending withdrawals here, their balances and nonces. */
  async prepare(signal?: AbortSignal): Promise<Prepared> {
    const { store, node, catalog } = this.deps;
    const { coins, treasuries: rows } = await pendingPayouts(store, catalog, this.chainId, this.deps.treasuryOf);
    const quote = await evmQuote(node, signal);
    const treasuries = new Map<string, TreasuryState>();
    const addresses = rows.map(([, t]) => t.address);
    const held = new Map<string, bigint[]>();
    for (const coin of coins) held.set(coin.asset, await node.balances(addresses, coin.asset, 'latest', signal));
    const nonces = await Promise.all([...addresses, this.deps.gasStation.address].map((a) => node.nonce(a, signal)));
    const [stationBalance] = await node.balances([this.deps.gasStation.address], NATIVE_ASSET, 'latest', signal);
    rows.forEach(([accountId, t], i) => {
      treasuries.set(accountId, {
        address: t.address,
        path: t.derivation_path,
        held: new Map([...held].map(([asset, values]) => [asset, values[i]!])),
        latest: nonces[i]!.latest,
        pending: nonces[i]!.pending,
      });
    });
    return {
      quote,
      fees: rows.length > 0 ? newFees(this.deps.ceiling, 'payouts', quote) : null,
      treasuries,
      stationPending: nonces[nonces.length - 1]!.pending,
      stationBalance: stationBalance!,
    };
  }

  async build(em: EntityManager, req: { accountId: string; orders: readonly PayoutOrder[]; prepared: unknown }): Promise<RailBuild> {
    const prepared = req.prepared as Prepared;
    const order = req.orders[0]!;
    const coin = this.deps.catalog.coin(order.coinId)!;
    const treasury = prepared.treasuries.get(req.accountId);
    const fees = prepared.fees;
    if (!treasury || !fees) return { payout: null, refused: [] };
    // A payout never spends what a sweep on its way has not delivered yet.
    if (await this.deps.sweeper.inFlightTo(em, treasury.address, [order.coinId, this.native])) return { payout: null, refused: [] };
    const token = coin.asset !== NATIVE_ASSET;
    // By the chain's fee model: an estimated native transfer gas on Arbitrum, the L1 data fee reserved on OP-stack chains.
    const gasLimit = token ? tokenGas(prepared.quote) : nativeGas(prepared.quote);
    const gasCost = maxCost(prepared.quote, gasLimit, fees.maxFeePerGas);
    const owed = await this.unmined(em, treasury, prepared.quote);
    const freeNative = (treasury.held.get(NATIVE_ASSET) ?? 0n) - (owed.get(NATIVE_ASSET) ?? 0n);
    const freeCoin = (treasury.held.get(coin.asset) ?? 0n) - (owed.get(coin.asset) ?? 0n);
    const needed = token ? order.amount : order.amount + gasCost;
    if (freeCoin < needed) return this.short(em, req.accountId, order, treasury, prepared, fees, { short: needed - freeCoin, gasCost });
    if (token && freeNative < gasCost) {
      await this.topUp(em, req.accountId, treasury, gasCost - freeNative, fees, prepared);
      return { payout: null, refused: [] };
    }
    const row = await this.deps.queue.reserve(
      em,
      {
        kind: 'payout',
        from: { address: treasury.address, path: treasury.path },
        to: order.address,
        coinId: order.coinId,
        amount: order.amount,
        gasLimit,
        fees,
        accountId: req.accountId,
        withdrawalId: order.withdrawalId,
      },
      treasury.pending,
    );
    return { payout: { candidate: candidateOf(row), legs: [{ withdrawalId: order.withdrawalId, output: 0 }], reservation: row.id }, refused: [] };
  }

  /**
   * The treasury holds `short` less of the order's coin than its payout needs. A sweep brings it
   * (asked for: the account's deposits of the coin are swept whatever their minimum). Else, for
   * the native coin, the gas station gives what the operator's book took from the account's coins
   * (takenByOperator), its deposits too small to be worth a sweep, and what the gas costs now
   * above the withdrawal's reserve: the payout then waits for that top-up. Else it waits while
   * anything on its way may still change the treasury's coins, and once nothing is, it cannot be
   * funded (refused with what is missing).
   */
  private async short(
    em: EntityManager,
    accountId: string,
    order: PayoutOrder,
    t: TreasuryState,
    p: Prepared,
    fees: EvmFees,
    need: { short: bigint; gasCost: bigint },
  ): Promise<RailBuild> {
    const wait: RailBuild = { payout: null, refused: [] };
    const coin = this.deps.catalog.coin(order.coinId)!;
    // A deposit is swept only when it moves more than its gas (EvmSweeper.plan).
    const worth = 2n * maxCost(p.quote, nativeGas(p.quote), fees.maxFeePerGas);
    const next = await treasuryShortfall(em, {
      chainId: this.chainId,
      accountId,
      treasury: t.address,
      coin,
      order,
      short: need.short,
      fee: need.gasCost,
      worth,
    });
    if (next.step === 'sweep') await this.deps.sweeper.wanted(em, accountId, order.coinId);
    else if (next.step === 'topup') await this.topUp(em, accountId, t, need.short, fees, p);
    else if (!(await this.coming(em, t)))
      return { payout: null, refused: [{ withdrawalId: order.withdrawalId, reason: notFunded(next.missing, coin.decimals, coin.ticker) }] };
    return wait;
  }

  /**
   * Whether anything on its way may still change what the treasury holds or what the operator's
   * book is seen to have taken from it: a sweep or top-up to it, a send of its not yet final, a
   * payout of its not yet booked (unmined, or its fee not yet read from its receipt).
   */
  private async coming(em: EntityManager, t: TreasuryState): Promise<boolean> {
    const p = (i: number) => placeholder(em, i);
    const rows = await rawQuery(
      em,
      `SELECT 1 FROM account_sends WHERE chain_id = ${p(1)} AND ((to_address = ${p(2)} AND kind IN ('sweep', 'topup') AND status IN ('signed', 'broadcast')) ` +
        `OR (from_address = ${p(3)} AND (status IN ('signed', 'broadcast') OR (kind = 'payout' AND status = 'reserved' AND booked_at IS NULL)))) LIMIT 1`,
      [this.chainId, t.address, t.address],
    );
    return rows.length > 0;
  }

  async broadcast(candidate: PayoutCandidate, signal?: AbortSignal): Promise<void> {
    await this.deps.node.broadcast(candidate.raw, signal);
  }

  /** The treasury's nonce: another transaction of the treasury with it in a confirmed block proves the payout dead. */
  spendKey(candidate: PayoutCandidate): SpendKey {
    const d = candidate.data as unknown as EvmCandidateData;
    return { sender: d.from, nonce: d.nonce };
  }

  /**
   * The same nonce and payment at what the node asks now, once that is more than the payout offers
   * (replacementFees: both caps bumped by the replacement rule, never above the ceiling). Null when
   * no replacement is due or possible, or when the treasury cannot pay the higher gas now: a token
   * payout's treasury then gets a top-up first.
   */
  async replace(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const p = prepared as Prepared;
    const row = await sendById(em, payout.reservation);
    if (!row || row.status !== 'reserved') return null;
    const fees = replacementFees(
      this.deps.ceiling,
      { maxFeePerGas: BigInt(row.max_fee_per_gas), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas) },
      p.quote,
    );
    if (!fees) return null;
    const extra = BigInt(row.gas_limit) * (fees.maxFeePerGas - BigInt(row.max_fee_per_gas));
    const treasury = p.treasuries.get(payout.accountId);
    if (treasury) {
      const owed = await this.unmined(em, treasury, p.quote);
      const freeNative = (treasury.held.get(NATIVE_ASSET) ?? 0n) - (owed.get(NATIVE_ASSET) ?? 0n);
      if (freeNative < extra) {
        const topUpFees = row.coin_id !== this.native ? newFees(this.deps.ceiling, 'payouts', p.quote) : null;
        if (topUpFees) await this.topUp(em, payout.accountId, treasury, extra - freeNative, topUpFees, p);
        return null;
      }
    }
    return candidateOf(await this.deps.queue.resign(em, row, fees));
  }

  /** The payout's nonce as a 0-value transfer from the treasury to itself, its fees bumped over the current candidate's by the replacement rule, within the ceiling. */
  async cancel(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    const row = await sendById(em, payout.reservation);
    if (!row || row.status !== 'reserved') return null;
    const fees = cancelFees(
      this.deps.ceiling,
      { maxFeePerGas: BigInt(row.max_fee_per_gas), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas) },
      (prepared as Prepared).quote,
    );
    if (!fees) return null;
    return { ...candidateOf(await this.deps.queue.cancel(em, row, fees, nativeGas((prepared as Prepared).quote))), kind: 'cancel' };
  }

  /** A failed payout mined after all: its nonce row counts again, so its fee is booked as any mined payout's. */
  async reopen(em: EntityManager, payout: StoredPayout): Promise<void> {
    const row = await sendById(em, payout.reservation);
    if (row?.status !== 'dropped') return;
    const now = iso(this.deps.clock.now());
    // A filler given the nonce meanwhile can never be mined now: the payout used it.
    const p = (i: number) => placeholder(em, i);
    await rawRun(
      em,
      `UPDATE account_sends SET status = 'dropped', updated_at = ${p(1)} WHERE chain_id = ${p(2)} AND from_address = ${p(3)} AND nonce = ${p(4)} AND status <> 'dropped' AND id <> ${p(5)}`,
      [now, this.chainId, row.from_address, row.nonce, row.id],
    );
    await updateSend(em, row, { status: 'reserved', updated_at: now });
  }

  async feePaid(_payout: StoredPayout, txid: string, signal?: AbortSignal): Promise<bigint> {
    const [receipt] = await this.deps.node.receipts([txid], signal);
    if (!receipt) throw new Error(`payout transaction ${txid} has no receipt`);
    return receipt.fee;
  }

  /**
   * Why the mined candidate did not pay, or null when it did: reverted (status 0), or a token whose
   * receipt lacks the `Transfer` of the amount to the destination. Either way it took its fee.
   */
  async failure(payout: StoredPayout, txid: string, signal?: AbortSignal): Promise<Undelivered | null> {
    const [receipt] = await this.deps.node.receipts([txid], signal);
    if (!receipt) throw new Error(`payout transaction ${txid} has no receipt`);
    if (!receipt.succeeded) return { reason: REVERTED_ON_CHAIN, left: 0n };
    const row = await sendById(this.deps.store.read, payout.reservation);
    if (!row) throw new Error(`payout ${payout.id} has no send ${payout.reservation}`);
    return undelivered(this.deps.catalog, row, receipt.transfers, addressDigits);
  }

  /**
   * The payout will never be mined: its nonce row no longer counts (the node's count decides the
   * next). When no other transaction took its nonce and later sends of the treasury wait behind
   * it, a filler takes it (EvmSendQueue.fillGap).
   */
  async release(em: EntityManager, payout: StoredPayout, reason?: string): Promise<void> {
    const row = await sendById(em, payout.reservation);
    if (row?.status !== 'reserved' || !(await updateSend(em, row, { status: 'dropped' }))) return;
    if (reason !== SPENT_BY_ANOTHER) await this.deps.queue.fillGap(em, row);
  }

  /**
   * What the treasury's payouts not yet mined (their nonces at or above its mined count) will
   * take, by asset: what they pay and, in the native coin, the most their gas can cost (and the
   * L1 data fee reserved for each at `q`, on OP-stack chains).
   */
  private async unmined(em: EntityManager, t: TreasuryState, q: EvmQuote): Promise<Map<string, bigint>> {
    const rows = await rawQuery<Pick<EvmSendRow, 'coin_id' | 'amount' | 'gas_limit' | 'max_fee_per_gas'>>(
      em,
      `SELECT coin_id, amount, gas_limit, max_fee_per_gas FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND from_address = ${placeholder(em, 2)} AND kind = 'payout' AND status = 'reserved' AND nonce >= ${placeholder(em, 3)}`,
      [this.chainId, t.address, t.latest],
    );
    const out = new Map<string, bigint>();
    const add = (asset: string, v: bigint) => out.set(asset, (out.get(asset) ?? 0n) + v);
    for (const r of rows) {
      add(this.deps.catalog.coin(r.coin_id)!.asset, BigInt(r.amount));
      add(NATIVE_ASSET, maxCost(q, BigInt(r.gas_limit), BigInt(r.max_fee_per_gas)));
    }
    return out;
  }

  /**
   * Asks the gas station for `wei` at the treasury (stored here, sent by the chain's send queue),
   * unless one is on its way, or the gas station cannot pay it (`coinkeep status` names it short).
   */
  private async topUp(em: EntityManager, accountId: string, t: TreasuryState, wei: bigint, fees: EvmFees, p: Prepared): Promise<void> {
    const waiting = await rawQuery(
      em,
      `SELECT 1 FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND kind = 'topup' AND to_address = ${placeholder(em, 2)} AND status IN ('signed', 'broadcast')`,
      [this.chainId, t.address],
    );
    if (waiting.length > 0) return;
    const gasLimit = nativeGas(p.quote);
    if (p.stationBalance < wei + maxCost(p.quote, gasLimit, fees.maxFeePerGas)) {
      this.deps.logger.warn("the gas station cannot pay a treasury's top-up", { chain: this.chainId, treasury: t.address, wei: wei.toString() });
      return;
    }
    await this.deps.queue.sign(
      em,
      { kind: 'topup', from: this.deps.gasStation, to: t.address, coinId: this.native, amount: wei, gasLimit, fees, accountId },
      p.stationPending,
    );
    this.deps.logger.info('treasury gas top-up asked of the gas station', { chain: this.chainId, treasury: t.address, wei: wei.toString() });
  }

  /**
   * What the chain took for each finished payout (its withdrawal completed, or failed after being
   * mined reverted), from the mined candidate's receipt, booked once to the network book in the
   * native coin (the merchant was charged in the withdrawn coin). A payout that never got mined
   * books nothing. How many were booked.
   */
  async bookFinished(signal?: AbortSignal): Promise<number> {
    const { store, node, money } = this.deps;
    const decimals = this.deps.catalog.coin(this.native)!.decimals;
    const p = (i: number) => placeholder(store.read, i);
    const rows = await rawQuery<{ id: string; txid: string | null; status: string; fee_paid: string | null; booked_at: string | null }>(
      store.read,
      `SELECT e.id, w.txid, w.status, e.fee_paid, e.booked_at FROM account_sends e JOIN withdrawals w ON w.id = e.withdrawal_id ` +
        `WHERE e.chain_id = ${p(1)} AND e.kind = 'payout' AND e.status = 'reserved' AND w.status IN ('completed', 'failed') ` +
        // Not booked yet, or completed again after it was booked (a reorganisation: mined anew, perhaps at another fee).
        `AND (e.booked_at IS NULL OR (w.status = 'completed' AND w.updated_at > e.booked_at))`,
      [this.chainId],
    );
    let booked = 0;
    for (const r of rows) {
      const [receipt] = r.txid ? await node.receipts([r.txid], signal) : [null];
      if (!receipt && (r.status === 'completed' || r.booked_at !== null)) continue;
      const fee = receipt?.fee ?? 0n;
      await store.write(async (em) => {
        const done =
          r.booked_at === null
            ? await money.bookOwnSend(em, { sendId: r.id, coinId: this.native, fee: Amount.fromBaseUnits(fee, decimals), feeBaseUnits: fee })
            : await money.rebookOwnSend(em, { sendId: r.id, coinId: this.native, decimals, was: BigInt(r.fee_paid ?? '0'), now: fee });
        if (done) booked++;
        // Seen again: the next pass need not look at it unless it moves again.
        else if (r.booked_at !== null) await updateSend(em, { id: r.id, status: 'reserved' }, { booked_at: iso(this.deps.clock.now()) });
      });
    }
    return booked;
  }

  /** What the next token payouts need of the gas station (wei), for `coinkeep status`: their gas at the current caps (at most the ceiling), top-ups' own gas included, by the chain's fee model. */
  async gasNeed(): Promise<bigint> {
    const em = this.deps.store.read;
    const tokens = this.deps.catalog.coins().filter((c) => c.chain_id === this.chainId && c.asset !== NATIVE_ASSET);
    if (tokens.length === 0) return 0n;
    const list = inList(
      em,
      tokens.map((c) => c.id),
      1,
    );
    const [row] = await rawQuery<{ n: number | string }>(
      em,
      `SELECT COUNT(*) AS n FROM withdrawals WHERE status IN ('pending', 'processing') AND coin_id ${list.sql}`,
      list.params,
    );
    const n = BigInt(Number(row?.n ?? 0));
    if (n === 0n) return 0n;
    const quote = await evmQuote(this.deps.node);
    const cap = quote.maxFeePerGas < this.deps.ceiling.max ? quote.maxFeePerGas : this.deps.ceiling.max;
    return n * (maxCost(quote, tokenGas(quote), cap) + maxCost(quote, nativeGas(quote), cap));
  }
}

function candidateOf(row: EvmSendRow): PayoutCandidate {
  const data: EvmCandidateData = {
    sendId: row.id,
    from: row.from_address,
    nonce: row.nonce,
    gasLimit: row.gas_limit,
    maxFeePerGas: row.max_fee_per_gas,
    maxPriorityFeePerGas: row.max_priority_fee_per_gas,
  };
  return { txid: row.txid, raw: row.raw, fee: BigInt(row.gas_limit) * BigInt(row.max_fee_per_gas), data: data as unknown as Record<string, unknown> };
}
