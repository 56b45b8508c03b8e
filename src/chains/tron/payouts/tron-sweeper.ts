import type { EntityManager } from 'typeorm';
import { coinId, NATIVE_ASSET, type Catalog } from '../../../catalog/coins';
import type { ChainConfig } from '../../../config/schema';
import type { AddressRow, ChainTransferRow } from '../../../db/entities/chain';
import { placeholder, rawQuery } from '../../../db/raw';
import type { Store } from '../../../db/store';
import type { MoneyMovement } from '../../../money/money-movement';
import type { Clock } from '../../../shared/clock';
import type { Logger } from '../../../shared/logger';
import { Amount } from '../../../shared/amount';
import type { EvmSendOwner } from '../../evm/payouts/send-queue';
import type { FeeCeiling, FeeWaitKind } from '../../../payouts/fee-ceiling';
import type { EvmSendRow } from '../../evm/payouts/send-store';
import { markSwept, releaseSwept, requestSweep, takeDueSweepGroups } from '../../../payouts/sweep-groups';
import { ACTIVATION_SUN, FEE_LIMIT_MARGIN_PERCENT, SUN_PER_TRX, TOKEN_TRANSFER_BYTES, TRX_TRANSFER_BYTES, type TronNodeApi } from './tron-node-api';
import type { TronSendQueue } from './tron-sends';

const TRX_DECIMALS = 6;

export interface TronSweeperDeps {
  chain: ChainConfig;
  node: TronNodeApi;
  store: Store;
  catalog: Catalog;
  queue: TronSendQueue;
  money: MoneyMovement;
  treasuryOf: (em: EntityManager, accountId: string) => Promise<AddressRow>;
  gasStation: { address: string; path: string };
  /** The chain's `payouts.max_fee`: what one transfer from a wallet address may burn, fee_limit included. */
  ceiling: FeeCeiling;
  clock: Clock;
  logger: Logger;
}

/** What an address must be given before it can send a token transfer without burning beyond the ceiling. */
export type EnergyPlan =
  | { step: 'activate' }
  | { step: 'delegate'; sun: bigint }
  | { step: 'topup'; sun: bigint }
  | { step: 'wait'; why: string }
  | { step: 'send'; burn: bigint; feeLimit: bigint };

/**
 * The gas station's side of one Tron chain, and its sweeps (PRODUCT §8a, issue 20 §4), run once
 * among the daemons with the chain's send queue. Each pass: the gas station stakes TRX for energy up
 * to `sweep.stake`; energy delegated for a transfer that is done is taken back; and each deposit
 * address due a sweep takes one step: a TRX deposit sends its balance to the treasury (less the
 * bandwidth its free daily bytes do not cover); a token deposit is first activated by the gas
 * station if it never was (a TRX payment: the chain's account creation fee is the station's), then
 * given staked energy (delegated: no TRX burnt), or, when the station has none to spare, TRX to
 * burn within `sweep.max_burn` (else it waits), then sends the token. One step a pass per address,
 * each mined before the next is planned. What the chain takes from a wallet address and what the
 * station gives it are booked to the operator's `network` book when final.
 */
export class TronSweeper implements EvmSendOwner {
  private readonly native: string;
  /** Token sweeps of the last pass that wait for energy the gas station cannot delegate (for `coinkeep status`). */
  waitingForEnergy = 0;

  constructor(private readonly deps: TronSweeperDeps) {
    this.native = coinId(deps.chain.id, NATIVE_ASSET);
  }

  /** One pass of the gas station and the sweeps. How many sends were signed. */
  async plan(signal?: AbortSignal): Promise<number> {
    let signed = (await this.stake(signal)) + (await this.reclaim(signal));
    const groups = await takeDueSweepGroups(this.deps.store, this.deps.chain.id, this.deps.catalog, (coin) => {
      const c = this.deps.catalog.coin(coin)!;
      return Amount.of(this.deps.chain.tron?.sweep_min[c.ticker] ?? '0').toBaseUnits(c.decimals);
    });
    let waiting = 0;
    if (groups.length === 0) {
      this.waitingForEnergy = 0;
      return signed;
    }
    const { node } = this.deps;
    const head = await node.head(signal);
    const prices = await node.prices(signal);
    for (const g of groups) {
      if (signal?.aborted) return signed;
      const treasury = await this.deps.store.write((em) => this.deps.treasuryOf(em, g.accountId));
      const asset = this.deps.catalog.coin(g.coinId)!.asset;
      const [account, res] = await Promise.all([node.account(g.address, signal), node.resources(g.address, signal)]);
      if (asset === NATIVE_ASSET) {
        // A payment to a never-used treasury would pay its creation: the gas station activates it first, as it does deposit addresses.
        if (!(await node.account(treasury.address, signal)).exists) {
          if ((await this.deps.queue.busy(this.deps.store.read, treasury.address)).length === 0) {
            await this.deps.store.write((em) => this.give(em, treasury.address, { step: 'activate' }, head, g.accountId));
            signed++;
          }
          continue;
        }
        const cost = res.freeBandwidth + res.bandwidth >= TRX_TRANSFER_BYTES ? 0n : BigInt(TRX_TRANSFER_BYTES) * prices.getTransactionFee;
        const amount = account.balance - cost;
        // Worth it only when it moves more than it costs, and never above the ceiling.
        if (amount <= 0n || amount <= cost || !this.deps.ceiling.admits('sweeps', cost)) continue;
        await this.deps.store.write(async (em) => {
          const row = await this.deps.queue.sign(
            em,
            {
              kind: 'sweep',
              from: { address: g.address, path: g.path },
              to: treasury.address,
              coinId: g.coinId,
              amount,
              maxBurn: cost,
              accountId: g.accountId,
            },
            head,
          );
          await markSwept(em, this.deps.clock, [{ sendId: row.id, transferIds: g.transferIds }]);
        });
        signed++;
        continue;
      }
      const held = (await node.holdings({ outputs: [], addresses: [g.address], assets: [asset], height: null }, signal)).get(asset) ?? 0n;
      const amount = held < g.credited ? held : g.credited;
      if (amount <= 0n) continue;
      const energy = account.exists ? await node.transferEnergy(g.address, treasury.address, asset, amount, signal) : null;
      const plan = await this.energyPlan('sweeps', g.address, account, res, energy, TOKEN_TRANSFER_BYTES, prices, signal);
      if (plan.step === 'wait') {
        if (energy !== null) waiting++;
        this.deps.logger.debug('tron token sweep waits', { chain: this.deps.chain.id, address: g.address, why: plan.why });
        continue;
      }
      await this.deps.store.write(async (em) => {
        if (plan.step !== 'send') return this.give(em, g.address, plan, head, g.accountId);
        const row = await this.deps.queue.sign(
          em,
          {
            kind: 'sweep',
            from: { address: g.address, path: g.path },
            to: treasury.address,
            coinId: g.coinId,
            amount,
            maxBurn: plan.burn,
            feeLimit: plan.feeLimit,
            accountId: g.accountId,
          },
          head,
        );
        await markSwept(em, this.deps.clock, [{ sendId: row.id, transferIds: g.transferIds }]);
      });
      signed++;
    }
    this.waitingForEnergy = waiting;
    return signed;
  }

  /**
   * What `address` needs before it sends a token transfer (`kind`: a sweep or a payout) of `energy`
   * (null: the dry run failed, or the account does not exist yet) taking `bytes` of bandwidth:
   * activation, staked energy delegated by the gas station, TRX to burn (within `sweep.max_burn`),
   * or nothing more. It waits while what the transfer is worth at the burn price (its bandwidth
   * burnt and all its energy: java-tron counts delegated energy against the fee_limit too) is above
   * the ceiling; its fee_limit is never above the ceiling less its bandwidth.
   */
  async energyPlan(
    kind: FeeWaitKind,
    address: string,
    account: { exists: boolean; balance: bigint },
    res: { energy: number; bandwidth: number; freeBandwidth: number; energyPerTrx: number },
    energy: number | null,
    bytes: number,
    prices: { getEnergyFee: bigint; getTransactionFee: bigint },
    signal?: AbortSignal,
  ): Promise<EnergyPlan> {
    if (!account.exists) return { step: 'activate' };
    if (energy === null) return { step: 'wait', why: 'the transfer would fail now' };
    let burn = res.freeBandwidth + res.bandwidth >= bytes ? 0n : BigInt(bytes) * prices.getTransactionFee;
    const worth = BigInt(energy) * prices.getEnergyFee;
    const ceiling = this.deps.ceiling;
    if (!ceiling.admits(kind, burn + worth)) return { step: 'wait', why: 'what the transfer may burn is above payouts.max_fee' };
    const withMargin = (worth * (100n + FEE_LIMIT_MARGIN_PERCENT) + 99n) / 100n;
    const feeLimit = withMargin < ceiling.max - burn ? withMargin : ceiling.max - burn;
    const short = energy - res.energy;
    if (short > 0) {
      const station = await this.deps.node.account(this.deps.gasStation.address, signal);
      // The TRX of stake that gives the energy short, rounded up to whole TRX with one more for rounding (the network's ratio moves).
      const trx = res.energyPerTrx > 0 ? BigInt(Math.ceil(short / res.energyPerTrx)) + 1n : 0n;
      const sun = (trx < 1n ? 1n : trx) * SUN_PER_TRX;
      if (res.energyPerTrx > 0 && station.stakedEnergy - station.delegatedEnergy >= sun) return { step: 'delegate', sun };
      const energyBurn = BigInt(short) * prices.getEnergyFee;
      if (energyBurn > (this.deps.chain.tron?.max_burn_sun ?? 0n))
        return { step: 'wait', why: 'the gas station has no staked energy to delegate and burning it is above sweep.max_burn' };
      burn += energyBurn;
    }
    if (account.balance < burn) return { step: 'topup', sun: burn - account.balance };
    return { step: 'send', burn, feeLimit };
  }

  /** The gas station's activation, delegation or top-up of `to` (stored; the queue sends it). */
  async give(
    em: EntityManager,
    to: string,
    plan: Exclude<EnergyPlan, { step: 'wait' } | { step: 'send' }>,
    head: { blockId: string; timestamp: number },
    accountId: string | null,
  ): Promise<void> {
    const from = this.deps.gasStation;
    if (plan.step === 'delegate') {
      await this.deps.queue.sign(em, { kind: 'delegate', from, to, coinId: this.native, amount: plan.sun, maxBurn: 0n, accountId }, head);
      return;
    }
    const sun = plan.step === 'activate' ? ACTIVATION_SUN : plan.sun;
    await this.deps.queue.sign(em, { kind: 'topup', from, to, coinId: this.native, amount: sun, maxBurn: 0n, accountId }, head);
  }

  /** The gas station stakes for energy what it holds up to `sweep.stake` (keeping 10 TRX for its own bandwidth and activations). */
  private async stake(signal?: AbortSignal): Promise<number> {
    const target = this.deps.chain.tron?.stake_sun ?? 0n;
    if (target === 0n) return 0;
    const station = this.deps.gasStation;
    if ((await this.deps.queue.busy(this.deps.store.read, station.address)).some((r) => r.kind === 'stake')) return 0;
    const account = await this.deps.node.account(station.address, signal);
    const want = target - account.stakedEnergy;
    const can = account.balance - 10n * SUN_PER_TRX;
    const sun = want < can ? want : can;
    if (sun < SUN_PER_TRX) return 0;
    const head = await this.deps.node.head(signal);
    await this.deps.store.write((em) =>
      this.deps.queue.sign(em, { kind: 'stake', from: station, to: station.address, coinId: this.native, amount: sun, maxBurn: 0n }, head),
    );
    return 1;
  }

  /**
   * Energy delegated for a transfer that is done is taken back: a mined delegation with no
   * undelegation yet, whose receiver has no sends of its own on the way, no deposit still due a
   * sweep (a deposit) and no token withdrawal not yet final (a treasury).
   */
  private async reclaim(signal?: AbortSignal): Promise<number> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    const rows = await rawQuery<EvmSendRow>(
      em,
      `SELECT d.* FROM account_sends d WHERE d.chain_id = ${p(1)} AND d.kind = 'delegate' AND d.status = 'mined' AND d.succeeded = 1 ` +
        `AND NOT EXISTS (SELECT 1 FROM account_sends u WHERE u.after_id = d.id AND u.kind = 'undelegate' AND u.status <> 'dropped') ` +
        `AND NOT EXISTS (SELECT 1 FROM account_sends o WHERE o.chain_id = d.chain_id AND (o.from_address = d.to_address OR (o.to_address = d.to_address AND o.kind <> 'undelegate')) AND o.status IN ('signed', 'broadcast'))`,
      [this.deps.chain.id],
    );
    let n = 0;
    let head: { blockId: string; timestamp: number } | null = null;
    for (const d of rows) {
      if (await this.stillNeeded(em, d)) continue;
      head ??= await this.deps.node.head(signal);
      const at = head;
      await this.deps.store.write((w) =>
        this.deps.queue.sign(
          w,
          {
            kind: 'undelegate',
            from: this.deps.gasStation,
            to: d.to_address,
            coinId: this.native,
            amount: BigInt(d.amount),
            maxBurn: 0n,
            accountId: d.account_id,
            afterId: d.id,
          },
          at,
        ),
      );
      n++;
    }
    return n;
  }

  /** Whether the address a delegation went to still has a token transfer to make with it. */
  private async stillNeeded(em: EntityManager, d: EvmSendRow): Promise<boolean> {
    const p = (i: number) => placeholder(em, i);
    const tokens = this.deps.catalog
      .coins()
      .filter((c) => c.chain_id === this.deps.chain.id && c.asset !== NATIVE_ASSET)
      .map((c) => c.id);
    if (tokens.length === 0) return false;
    const list = tokens.map((_, i) => p(i + 3)).join(', ');
    const [addr] = await rawQuery<{ purpose: string; account_id: string }>(
      em,
      `SELECT purpose, account_id FROM addresses WHERE chain_id = ${p(1)} AND address = ${p(2)}`,
      [this.deps.chain.id, d.to_address],
    );
    if (!addr) return false;
    if (addr.purpose === 'treasury') {
      const open = await rawQuery(
        em,
        `SELECT 1 FROM withdrawals WHERE account_id = ${p(1)} AND status IN ('pending', 'processing', 'broadcast') AND coin_id IN (${tokens.map((_, i) => p(i + 2)).join(', ')}) LIMIT 1`,
        [addr.account_id, ...tokens],
      );
      return open.length > 0;
    }
    const due = await rawQuery(
      em,
      `SELECT 1 FROM chain_transfers t WHERE t.chain_id = ${p(1)} AND t.address = ${p(2)} AND t.direction = 'incoming' AND t.status = 'confirmed' AND t.coin_id IN (${list}) ` +
        `AND NOT EXISTS (SELECT 1 FROM evm_swept_transfers s WHERE s.transfer_id = t.id) LIMIT 1`,
      [this.deps.chain.id, d.to_address, ...tokens],
    );
    return due.length > 0;
  }

  /** Final: what the chain took from a wallet address, and what the gas station gave one, to the network book; a failed sweep gives its deposits back. */
  async onFinal(em: EntityManager, row: EvmSendRow): Promise<void> {
    const fromStation = row.from_address === this.deps.gasStation.address;
    const arrived = row.kind === 'topup' && row.succeeded === 1 ? Amount.fromBaseUnits(BigInt(row.amount), TRX_DECIMALS) : Amount.zero();
    // The gas station's own fees (its bandwidth, an activation's creation fee) are its float's, outside the books.
    const fee = fromStation ? Amount.zero() : Amount.fromBaseUnits(BigInt(row.fee_paid ?? '0'), TRX_DECIMALS);
    await this.deps.money.bookOwnSend(em, { sendId: row.id, coinId: this.native, fee, arrived });
    if (row.kind === 'sweep' && row.succeeded !== 1) await releaseSwept(em, row.id);
  }

  async onDropped(em: EntityManager, row: EvmSendRow, reason: string): Promise<void> {
    this.deps.logger.warn('tron send dropped', { chain: this.deps.chain.id, kind: row.kind, txid: row.txid, reason });
    if (row.kind === 'sweep') await releaseSwept(em, row.id);
  }

  /** A gas station's TRX reaching a wallet address (an activation or top-up): the wallet's own money, not a payment. */
  async isTopUp(em: EntityManager, transfer: Pick<ChainTransferRow, 'chain_id' | 'txid' | 'coin_id' | 'direction'>): Promise<boolean> {
    if (transfer.chain_id !== this.deps.chain.id || transfer.coin_id !== this.native || transfer.direction !== 'incoming') return false;
    const rows = await rawQuery(em, `SELECT 1 FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND txid = ${placeholder(em, 2)} AND kind = 'topup'`, [
      transfer.chain_id,
      transfer.txid,
    ]);
    return rows.length > 0;
  }

  /** A payout of the account's `coin` waits for its treasury: that coin's deposits are swept at the next pass, whatever their minimum (a row, seen by whichever daemon sweeps). */
  wanted(em: EntityManager, accountId: string, coin: string): Promise<void> {
    return requestSweep(em, this.deps.clock, { chainId: this.deps.chain.id, accountId, coinId: coin });
  }

  /** Sweeps into `treasury` signed or on their way for `coinIds` (a payout waits for them). */
  async inFlightTo(em: EntityManager, treasury: string, coinIds: readonly string[]): Promise<boolean> {
    return (await this.deps.queue.busy(em, treasury)).some((r) => r.kind === 'sweep' && r.to_address === treasury && coinIds.includes(r.coin_id));
  }
}
