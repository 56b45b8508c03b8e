import type { EntityManager } from 'typeorm';
import { coinId, NATIVE_ASSET, type Catalog } from '../../../catalog/coins';
import { erc20TransferData } from '../erc20';
import type { ChainConfig } from '../../../config/schema';
import type { AddressRow, ChainTransferRow } from '../../../db/entities/chain';
import { inList, placeholder, rawQuery } from '../../../db/raw';
import type { Store } from '../../../db/store';
import type { MoneyMovement } from '../../../money/money-movement';
import type { Clock } from '../../../shared/clock';
import type { Logger } from '../../../shared/logger';
import { Amount } from '../../../shared/amount';
import { markSwept, releaseSwept, requestSweep, takeDueSweepGroups, type SweepGroup } from '../../../payouts/sweep-groups';
import type { FeeCeiling } from '../../../payouts/fee-ceiling';
import { estimateAlike, type EvmFees, type EvmNode } from './evm-node';
import { evmQuote, lastCosts, newFees } from './fee-policy';
import { feeModelOf, maxCost, nativeGas, padArbitrumGas } from '../fee-model';
import { SendRelay, type EvmSendOwner, type EvmSendQueue, type SendRequest } from './send-queue';
import type { EvmSendRow } from './send-store';

const NATIVE_DECIMALS = 18;

/** Sends signed, stored and handed to the node at a time: the node has the first soon, and takes each while the next is signed. */
const SEND_STEP = 100;

/** `list` in steps of SEND_STEP. */
function steps<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += SEND_STEP) out.push(list.slice(i, i + SEND_STEP));
  return out;
}

/** A planned sweep: what it moves, the gas it may use, and the top-up it needs first (token sweeps). */
interface PlannedSweep extends SweepGroup {
  treasury: string;
  amount: bigint;
  gasLimit: bigint;
  topUp: bigint;
}

export interface EvmSweeperDeps {
  chain: ChainConfig;
  node: EvmNode;
  store: Store;
  catalog: Catalog;
  queue: EvmSendQueue;
  money: MoneyMovement;
  /** The account's treasury on this chain, recorded on first use (AddressService.treasury). */
  treasuryOf: (em: EntityManager, accountId: string) => Promise<AddressRow>;
  gasStation: { address: string; path: string };
  /** The chain's `payouts.max_fee`: no sweep or top-up is signed above it. */
  ceiling: FeeCeiling;
  clock: Clock;
  logger: Logger;
}

/**
 * Sweeps the credited deposits of one EVM chain into their accounts' treasuries (PRODUCT §8a, issue
 * 19 §1), a deposit address and coin at a time, once it holds at least the coin's `sweep.min`:
 * ETH as its whole balance less the gas, a token after the gas station has topped the address up
 * with exactly the gas its transfer needs (the transfer waits in the store until the top-up is
 * mined). Every sweep names the credited transfers it moves, so a deposit is swept once; a sweep
 * that can no longer happen gives them back. What the chain takes, and what the gas station put in,
 * is booked to the operator's `network` book when final; invoices and deposits are not touched.
 */
export class EvmSweeper implements EvmSendOwner {
  private readonly native: string;
  /** What the last pass's due token sweeps needed of the gas station, their top-ups' own gas included (wei). */
  needed = 0n;

  constructor(private readonly deps: EvmSweeperDeps) {
    this.native = coinId(deps.chain.id, NATIVE_ASSET);
  }

  /**
   * Plans, signs and stores this pass's sweeps and their top-ups, and hands them to the node as
   * they are stored (the token sweeps once their top-ups are mined: the pass's own broadcast, or
   * a later one). How many sweeps.
   */
  async plan(signal?: AbortSignal): Promise<number> {
    const groups = await this.dueGroups();
    if (groups.length === 0) {
      this.needed = 0n;
      return 0;
    }
    const { node, store, queue } = this.deps;
    const treasuries = await store.write(async (em) => {
      const out = new Map<string, string>();
      for (const accountId of new Set(groups.map((g) => g.accountId))) out.set(accountId, (await this.deps.treasuryOf(em, accountId)).address);
      return out;
    });
    const station = this.deps.gasStation.address;
    const senders = [...groups.map((g) => g.address), station];
    const tokenGroups = groups.map((g, i) => ({ g, i, asset: this.deps.catalog.coin(g.coinId)!.asset })).filter((x) => x.asset !== NATIVE_ASSET);
    const assets = [...new Set(tokenGroups.map((x) => x.asset))];
    // The fees, the native balances (the gas station's too), the nonces and the token balances of the whole pass side by side, in batched requests.
    const [quote, balances, counts, ...tokenBalances] = await Promise.all([
      evmQuote(node, signal),
      node.balances(senders, 'native', 'latest', signal),
      node.pendingNonces(senders, signal),
      ...assets.map((asset) =>
        node.balances(
          tokenGroups.filter((x) => x.asset === asset).map((x) => x.g.address),
          asset,
          'latest',
          signal,
        ),
      ),
    ]);
    const fees = newFees(this.deps.ceiling, 'sweeps', quote);
    if (!fees) {
      this.deps.logger.debug('evm sweeps wait: the fee is above payouts.max_fee', { chain: this.deps.chain.id, due: groups.length });
      return 0;
    }
    const pending = new Map(senders.map((a, i) => [a, counts[i]!]));
    const nodePending = (a: string) => pending.get(a)!;
    const held = new Map<number, bigint>();
    assets.forEach((asset, k) => tokenGroups.filter((x) => x.asset === asset).forEach((x, j) => held.set(x.i, tokenBalances[k]![j]!)));
    // What a token sweep moves: what was credited, or less when the address holds less.
    const movable = (i: number, g: SweepGroup): bigint => (held.get(i)! < g.credited ? held.get(i)! : g.credited);
    const estimable = tokenGroups.filter(({ g, i }) => movable(i, g) > 0n);
    // The token transfers' gas, while the native sweeps (which need no estimate) are signed; a
    // transfer's gas is that of the others of its token to its treasury when it runs with it.
    const estimating = estimateAlike(
      node,
      estimable.map(({ g, i, asset }) => {
        const treasury = treasuries.get(g.accountId)!;
        return { call: { from: g.address, to: asset, data: erc20TransferData(treasury, movable(i, g)) }, alike: `${asset} ${treasury}` };
      }),
      signal,
    );
    estimating.catch(() => undefined);

    const natives: PlannedSweep[] = [];
    // By the chain's fee model: the most a native transfer may take, its L1 data fee reserved on OP-stack chains (what is not taken stays at the address).
    const transferGas = nativeGas(quote);
    const cost = maxCost(quote, transferGas, fees.maxFeePerGas);
    for (const [i, g] of groups.entries()) {
      // Worth it only when it moves more than it costs.
      if (g.coinId === this.native && balances[i]! - cost > cost)
        natives.push({ ...g, treasury: treasuries.get(g.accountId)!, amount: balances[i]! - cost, gasLimit: transferGas, topUp: 0n });
    }
    // In steps of up to SEND_STEP sends, each signed while the node takes the one before, stored in
    // a transaction of its own and handed to the node: the native sweeps, the top-ups, the token
    // sweeps (the pass sends those once their top-ups are mined). A stop between two steps leaves
    // top-ups without their sweeps: an address is left alone while a send to it is on its way
    // (dueSweepGroups), then swept with the gas it holds.
    const relay = new SendRelay(queue, store, signal);
    try {
      for (const step of steps(natives))
        await this.store(
          relay,
          step,
          await queue.signBatch(
            store.read,
            step.map((p) => this.sweepOf(p, fees, null)),
            nodePending,
          ),
        );
      const estimates = await estimating;
      const gas = new Map<number, bigint>();
      const arbitrum = feeModelOf(this.deps.chain) === 'arbitrum';
      estimable.forEach(({ g, i }, j) => {
        const e = estimates[j]!;
        // Arbitrum: the L1 cost inside the estimate may rise before the sweep is mined.
        if ('gas' in e) gas.set(i, arbitrum ? padArbitrumGas(e.gas) : e.gas);
        else this.deps.logger.warn('token sweep not possible now', { chain: this.deps.chain.id, address: g.address, error: e.error });
      });
      // What the gas station can still give this pass (each top-up's own gas included).
      let left = balances[senders.length - 1]!;
      let needed = 0n;
      const tokens: PlannedSweep[] = [];
      for (const { g, i } of tokenGroups) {
        const gasLimit = gas.get(i);
        if (gasLimit === undefined) continue;
        const need = maxCost(quote, gasLimit, fees.maxFeePerGas);
        const topUp = need > balances[i]! ? need - balances[i]! : 0n;
        if (topUp > 0n) {
          const spent = topUp + cost;
          needed += spent;
          if (spent > left) continue;
          left -= spent;
        }
        tokens.push({ ...g, treasury: treasuries.get(g.accountId)!, amount: movable(i, g), gasLimit, topUp });
      }
      this.needed = needed;
      const after = new Map<string, string>();
      for (const step of steps(tokens.filter((p) => p.topUp > 0n))) {
        const topUps = await queue.signBatch(
          store.read,
          step.map((p) => ({
            kind: 'topup' as const,
            from: this.deps.gasStation,
            to: p.address,
            coinId: this.native,
            amount: p.topUp,
            gasLimit: transferGas,
            fees,
            accountId: p.accountId,
          })),
          nodePending,
        );
        await relay.add(topUps);
        step.forEach((p, i) => after.set(p.address, topUps[i]!.id));
      }
      for (const step of steps(tokens))
        await this.store(
          relay,
          step,
          await queue.signBatch(
            store.read,
            step.map((p) => this.sweepOf(p, fees, after.get(p.address) ?? null)),
            nodePending,
          ),
          false,
        );
      await relay.settle();
      // Every pass of a chain with deposits not worth sweeping yet would say so: only what was signed is news.
      const signed = { chain: this.deps.chain.id, sweeps: natives.length + tokens.length, top_ups: after.size };
      if (signed.sweeps + signed.top_ups > 0) this.deps.logger.info('evm sweeps signed', signed);
      else this.deps.logger.debug('evm sweeps: none worth signing now', { chain: this.deps.chain.id, due: groups.length });
      return natives.length + tokens.length;
    } catch (err) {
      await relay.abandon();
      throw err;
    }
  }

  private sweepOf(p: PlannedSweep, fees: EvmFees, afterId: string | null): SendRequest {
    return {
      kind: 'sweep',
      from: { address: p.address, path: p.path },
      to: p.treasury,
      coinId: p.coinId,
      amount: p.amount,
      gasLimit: p.gasLimit,
      fees,
      accountId: p.accountId,
      afterId,
    };
  }

  /** Stores signed sweeps with the deposits each moves named (`send`: handed to the node at once). */
  private store(relay: SendRelay, planned: readonly PlannedSweep[], rows: readonly EvmSendRow[], send = true): Promise<void> {
    return relay.add(
      rows,
      (em) =>
        this.markSwept(
          em,
          planned.map((p, i) => ({ sendId: rows[i]!.id, transferIds: p.transferIds })),
        ),
      send,
    );
  }

  async onFinal(em: EntityManager, row: EvmSendRow): Promise<void> {
    const fee = Amount.fromBaseUnits(BigInt(row.fee_paid ?? '0'), NATIVE_DECIMALS);
    if (row.kind === 'topup') {
      // The gas station's own gas is its float's, outside the books; what reached the address enters them.
      await this.deps.money.bookOwnSend(em, {
        sendId: row.id,
        coinId: this.native,
        fee: Amount.zero(),
        arrived: row.succeeded === 1 ? Amount.fromBaseUnits(BigInt(row.amount), NATIVE_DECIMALS) : Amount.zero(),
      });
      return;
    }
    await this.deps.money.bookOwnSend(em, { sendId: row.id, coinId: this.native, fee });
    if (row.succeeded !== 1) await this.release(em, row.id);
  }

  /** Its block left the chain: what was booked of it when it was final is taken back (booked again if it is mined again). */
  async onUnmined(em: EntityManager, row: EvmSendRow): Promise<void> {
    if (row.booked_at === null) return;
    const fee = Amount.fromBaseUnits(BigInt(row.fee_paid ?? '0'), NATIVE_DECIMALS);
    const arrived = row.kind === 'topup' && row.succeeded === 1 ? Amount.fromBaseUnits(BigInt(row.amount), NATIVE_DECIMALS) : Amount.zero();
    await this.deps.money.unbookOwnSend(em, { sendId: row.id, coinId: this.native, fee: row.kind === 'topup' ? Amount.zero() : fee, arrived });
  }

  async onDropped(em: EntityManager, row: EvmSendRow): Promise<void> {
    if (row.kind === 'sweep') await this.release(em, row.id);
  }

  /**
   * A stuck token sweep whose address lacks `wei` of the gas its replacement needs: the gas station
   * tops it up (at `fees`, as it must pass the same base fee), unless a top-up to it is on its way.
   */
  async onShort(row: EvmSendRow, wei: bigint, fees: EvmFees, signal?: AbortSignal): Promise<void> {
    const station = this.deps.gasStation;
    const [pending] = await this.deps.node.pendingNonces([station.address], signal);
    const [stationBalance] = await this.deps.node.balances([station.address], 'native', 'latest', signal);
    const costs = lastCosts(this.deps.node);
    if (stationBalance! < wei + maxCost(costs, nativeGas(costs), fees.maxFeePerGas)) {
      this.deps.logger.warn('the gas station cannot pay the gas of a stuck sweep', { chain: this.deps.chain.id, address: row.from_address });
      return;
    }
    const signed = await this.deps.store.write(async (em) => {
      const waiting = await rawQuery(
        em,
        `SELECT 1 FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND kind = 'topup' AND to_address = ${placeholder(em, 2)} AND status IN ('signed', 'broadcast')`,
        [this.deps.chain.id, row.from_address],
      );
      if (waiting.length > 0) return false;
      await this.deps.queue.sign(
        em,
        {
          kind: 'topup',
          from: station,
          to: row.from_address,
          coinId: this.native,
          amount: wei,
          gasLimit: nativeGas(costs),
          fees,
          accountId: row.account_id,
        },
        pending!,
      );
      return true;
    });
    if (signed)
      this.deps.logger.info('gas top-up for the replacement of a stuck sweep', { chain: this.deps.chain.id, address: row.from_address, wei: wei.toString() });
  }

  /**
   * Whether a transfer is one of the gas station's top-ups reaching a deposit address: the wallet's
   * own money, not a payment (the transfer router leaves it alone).
   */
  async isTopUp(em: EntityManager, transfer: Pick<ChainTransferRow, 'chain_id' | 'txid' | 'coin_id' | 'direction'>): Promise<boolean> {
    if (transfer.chain_id !== this.deps.chain.id || transfer.coin_id !== this.native || transfer.direction !== 'incoming') return false;
    const rows = await rawQuery(em, `SELECT 1 FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND txid = ${placeholder(em, 2)} AND kind = 'topup'`, [
      transfer.chain_id,
      transfer.txid,
    ]);
    return rows.length > 0;
  }

  /** The deposit addresses and coins due a sweep (a coin a payout waits for: whatever its minimum). */
  private dueGroups(): Promise<SweepGroup[]> {
    return takeDueSweepGroups(this.deps.store, this.deps.chain.id, this.deps.catalog, (coinId) => {
      const coin = this.deps.catalog.coin(coinId)!;
      return Amount.of(this.deps.chain.evm?.sweep_min[coin.ticker] ?? '0').toBaseUnits(coin.decimals);
    });
  }

  /** Names the deposits each sweep moves (multi-row inserts); one already named fails the pass's transaction. */
  private async markSwept(em: EntityManager, swept: ReadonlyArray<{ sendId: string; transferIds: readonly string[] }>): Promise<void> {
    await markSwept(em, this.deps.clock, swept);
  }

  private async release(em: EntityManager, sendId: string): Promise<void> {
    await releaseSwept(em, sendId);
  }

  /** A payout of the account's `coinId` waits for its treasury: that coin's deposits are swept at the next pass, whatever their minimum (a row, seen by whichever daemon sweeps). */
  wanted(em: EntityManager, accountId: string, coinId: string): Promise<void> {
    return requestSweep(em, this.deps.clock, { chainId: this.deps.chain.id, accountId, coinId });
  }

  /** Sweeps into `treasury` signed or on their way for `coinIds` (a payout waits for them). */
  async inFlightTo(em: EntityManager, treasury: string, coinIds: readonly string[]): Promise<boolean> {
    const list = inList(em, coinIds, 3);
    const rows = await rawQuery(
      em,
      `SELECT 1 FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND kind = 'sweep' AND to_address = ${placeholder(em, 2)} AND status IN ('signed', 'broadcast') AND coin_id ${list.sql}`,
      [this.deps.chain.id, treasury, ...list.params],
    );
    return rows.length > 0;
  }
}
