import type { EntityManager } from 'typeorm';
import { pendingPayouts } from '../../../payouts/pending-payouts';
import { coinId, NATIVE_ASSET, type Catalog } from '../../../catalog/coins';
import { trc20TransferData, tronHexAddress, type TronContract } from '../transaction';
import type { RemoteSigner } from '../../../wallet/signer-client';
import type { SignPurpose } from '../../../wallet/signer-protocol';
import { tronDigits } from '../derive';
import type { ChainConfig } from '../../../config/schema';
import type { AddressRow } from '../../../db/entities/chain';
import { inList, placeholder, rawQuery } from '../../../db/raw';
import type { Store } from '../../../db/store';
import type { Logger } from '../../../shared/logger';
import { Amount } from '../../../shared/amount';
import { notFunded } from '../../../payouts/not-funded';
import type { PayoutCandidate, PayoutOrder, PayoutRail, RailBuild, SpendKey, StoredPayout } from '../../../payouts/rail';
import { treasuryShortfall } from '../../../payouts/treasury-shortfall';
import type { FeeCeiling } from '../../../payouts/fee-ceiling';
import { REVERTED_ON_CHAIN } from '../../../payouts/payout-worker';
import { undelivered, type Undelivered } from '../../../payouts/token-delivery';
import { TOKEN_TRANSFER_BYTES, TRX_TRANSFER_BYTES, type TronNodeApi } from './tron-node-api';
import type { TronSendQueue } from './tron-sends';
import type { TronSweeper } from './tron-sweeper';

type Prices = Awaited<ReturnType<TronNodeApi['prices']>>;

/** What `prepare` read of the node for the builds of one pass. */
interface Prepared {
  head: { height: number; blockId: string; timestamp: number };
  prices: Prices;
  treasuries: Map<string, TreasuryState>;
  /** By withdrawal: a token payout's energy from the node's dry run from the treasury (null: it would fail now); a TRX payout's: whether its destination has an account. */
  energy: Map<string, number | null>;
  activated: Map<string, boolean>;
  /** The gas station's TRX (sun). */
  stationBalance: bigint;
}

interface TreasuryState {
  address: string;
  path: string;
  account: { exists: boolean; balance: bigint; stakedEnergy: bigint; delegatedEnergy: bigint };
  resources: { energy: number; bandwidth: number; freeBandwidth: number; energyPerTrx: number };
  /** Base units by asset (`native` or the token contract). */
  held: Map<string, bigint>;
}

/** What a Tron candidate keeps in its `data`: enough to sign the same payment again on a newer block. */
interface TronCandidateData {
  from: string;
  path: string;
  contract: TronContract;
  feeLimit: string | null;
  expiration: number;
}

export interface TronRailDeps {
  chain: ChainConfig;
  node: TronNodeApi;
  store: Store;
  catalog: Catalog;
  queue: TronSendQueue;
  sweeper: TronSweeper;
  signer: Pick<RemoteSigner, 'signTron'>;
  treasuryOf: (em: EntityManager, accountId: string) => Promise<AddressRow>;
  gasStation: { address: string };
  /** The chain's `payouts.max_fee`: what one payout may burn, fee_limit included. */
  ceiling: FeeCeiling;
  logger: Logger;
}

/**
 * The Tron payout rail (issue 20 §4): one withdrawal a payout, TRX or a TRC-20 token, sent from
 * the account's treasury, signed offline on the head block. A payout waits (`payout: null`) while
 * the treasury does not hold what it pays plus what its payouts on their way take (a sweep is
 * asked for), and a token payout while the treasury has not the energy its dry run says it uses:
 * the gas station activates the treasury if it never was, then delegates staked energy to it
 * (taken back once its token payouts are done), or, without staked energy to spare, gives it the
 * TRX to burn within `sweep.max_burn`. A Tron transaction has no nonce and cannot be bumped: a
 * candidate not mined once a block at the chain's confirmations is past its expiration can never
 * be mined, and is renewed once (the same payment signed on a newer block) or the payout fails.
 * A payout that may burn more than the chain's ceiling (`payouts.max_fee`) waits.
 */
export class TronRail implements PayoutRail {
  readonly chainId: string;
  readonly maxBatch = 1;
  private readonly native: string;

  constructor(private readonly deps: TronRailDeps) {
    this.chainId = deps.chain.id;
    this.native = coinId(deps.chain.id, NATIVE_ASSET);
  }

  async height(signal?: AbortSignal): Promise<number> {
    return (await this.deps.node.tip(signal)).height;
  }

  /** The head block and prices; the treasuries of accounts with pending withdrawals here, their holdings and resources; each order's energy or destination. */
  async prepare(signal?: AbortSignal): Promise<Prepared> {
    const { store, node, catalog } = this.deps;
    const { coins, pending, treasuries: rows } = await pendingPayouts(store, catalog, this.chainId, this.deps.treasuryOf);
    const [head, prices] = await Promise.all([node.head(signal), node.prices(signal)]);
    const treasuries = new Map<string, TreasuryState>();
    for (const [accountId, t] of rows) {
      const assets = coins.map((c) => c.asset);
      const [account, resources, held] = await Promise.all([
        node.account(t.address, signal),
        node.resources(t.address, signal),
        node.holdings({ outputs: [], addresses: [t.address], assets, height: null }, signal),
      ]);
      treasuries.set(accountId, { address: t.address, path: t.derivation_path, account, resources, held });
    }
    const energy = new Map<string, number | null>();
    const activated = new Map<string, boolean>();
    for (const w of pending) {
      const coin = catalog.coin(w.coin_id)!;
      const t = treasuries.get(w.account_id)!;
      if (coin.asset === NATIVE_ASSET) {
        activated.set(w.id, (await node.account(w.to_address, signal)).exists);
      } else {
        const amount = Amount.of(w.amount).toBaseUnits(coin.decimals);
        energy.set(
          w.id,
          t.account.exists && (t.held.get(coin.asset) ?? 0n) >= amount ? await node.transferEnergy(t.address, w.to_address, coin.asset, amount, signal) : null,
        );
      }
    }
    const station = await node.account(this.deps.gasStation.address, signal);
    return { head, prices, treasuries, energy, activated, stationBalance: station.balance };
  }

  async build(em: EntityManager, req: { accountId: string; orders: readonly PayoutOrder[]; prepared: unknown }): Promise<RailBuild> {
    const p = req.prepared as Prepared;
    const order = req.orders[0]!;
    const coin = this.deps.catalog.coin(order.coinId)!;
    const t = p.treasuries.get(req.accountId);
    const wait: RailBuild = { payout: null, refused: [] };
    if (!t) return wait;
    // A payout never spends what a sweep on its way has not delivered, nor what the gas station is still giving.
    if (await this.deps.sweeper.inFlightTo(em, t.address, [order.coinId, this.native])) return wait;
    if ((await this.deps.queue.busy(em, t.address)).length > 0) return wait;
    const owed = await this.unfinished(em, req.accountId);
    const free = (asset: string) => (t.held.get(asset) ?? 0n) - (owed.get(asset) ?? 0n);
    const token = coin.asset !== NATIVE_ASSET;
    let contract: TronContract;
    let fee: bigint;
    let feeLimit: bigint | undefined;
    /** The most the chain may burn for it (stored as the candidate's fee, as EVM stores its max cost): bandwidth at the burn price, and its account creation or a token call's burn or fee_limit. */
    let most: bigint;
    if (!token) {
      const bandwidth = t.resources.freeBandwidth + t.resources.bandwidth >= TRX_TRANSFER_BYTES ? 0n : BigInt(TRX_TRANSFER_BYTES) * p.prices.getTransactionFee;
      const activation = p.activated.get(order.withdrawalId) === false ? p.prices.getCreateNewAccountFeeInSystemContract + p.prices.getCreateAccountFee : 0n;
      fee = bandwidth + activation;
      most = BigInt(TRX_TRANSFER_BYTES) * p.prices.getTransactionFee + activation;
      if (!this.deps.ceiling.admits('payouts', fee)) return wait;
      if (free(NATIVE_ASSET) < order.amount + fee)
        return this.short(em, req.accountId, order, t, p, { short: order.amount + fee - free(NATIVE_ASSET), fee, unfinished: owed.size > 0 });
      contract = {
        type: 'TransferContract',
        value: { owner_address: tronHexAddress(t.address), to_address: tronHexAddress(order.address), amount: Number(order.amount) },
      };
    } else {
      if (free(coin.asset) < order.amount)
        return this.short(em, req.accountId, order, t, p, { short: order.amount - free(coin.asset), fee: 0n, unfinished: owed.size > 0 });
      const energy = p.energy.get(order.withdrawalId) ?? null;
      const plan = await this.deps.sweeper.energyPlan(
        'payouts',
        t.address,
        { exists: t.account.exists, balance: free(NATIVE_ASSET) },
        t.resources,
        t.account.exists ? energy : null,
        TOKEN_TRANSFER_BYTES,
        p.prices,
      );
      if (plan.step === 'wait') return wait;
      if (plan.step !== 'send') {
        await this.deps.sweeper.give(em, t.address, plan, p.head, req.accountId);
        this.deps.logger.info('tron treasury prepared for a token payout', { chain: this.chainId, treasury: t.address, step: plan.step });
        return wait;
      }
      fee = plan.burn;
      feeLimit = plan.feeLimit;
      most = BigInt(TOKEN_TRANSFER_BYTES) * p.prices.getTransactionFee + maxOf(fee, feeLimit ?? 0n);
      contract = {
        type: 'TriggerSmartContract',
        value: { owner_address: tronHexAddress(t.address), contract_address: tronHexAddress(coin.asset), data: trc20TransferData(order.address, order.amount) },
      };
    }
    const candidate = await this.sign({ from: t.address, path: t.path, contract, feeLimit: feeLimit?.toString() ?? null, expiration: 0 }, p.head, most, {
      kind: 'payout',
      account_id: req.accountId,
      withdrawal_ids: [order.withdrawalId],
    });
    return { payout: { candidate, legs: [{ withdrawalId: order.withdrawalId, output: 0 }], reservation: `tron:${order.withdrawalId}` }, refused: [] };
  }

  /**
   * The treasury holds `short` less of the order's coin than its payout needs (nothing is on its
   * way to or from it: `build` waited for that). A sweep brings it (asked for: the account's
   * deposits of the coin are swept whatever their minimum). Else, for TRX, the gas station gives
   * what the operator's book took from the account's coins (takenByOperator), its deposits too
   * small to be worth a sweep, and what the payout costs now above the withdrawal's reserve: the
   * payout waits for that top-up. Else it waits while a payout of the account is on its way, and
   * once none is, it cannot be funded (refused with what is missing).
   */
  private async short(
    em: EntityManager,
    accountId: string,
    order: PayoutOrder,
    t: TreasuryState,
    p: Prepared,
    need: { short: bigint; fee: bigint; unfinished: boolean },
  ): Promise<RailBuild> {
    const wait: RailBuild = { payout: null, refused: [] };
    const coin = this.deps.catalog.coin(order.coinId)!;
    const bandwidth = BigInt(TRX_TRANSFER_BYTES) * p.prices.getTransactionFee;
    // A deposit is swept only when it moves more than its bandwidth may cost (TronSweeper.plan).
    const next = await treasuryShortfall(em, {
      chainId: this.chainId,
      accountId,
      treasury: t.address,
      coin,
      order,
      short: need.short,
      fee: need.fee,
      worth: 2n * bandwidth,
    });
    if (next.step === 'sweep') await this.deps.sweeper.wanted(em, accountId, order.coinId);
    else if (next.step === 'topup' && p.stationBalance < need.short + bandwidth) {
      this.deps.logger.warn("the gas station cannot pay a treasury's top-up", { chain: this.chainId, treasury: t.address, sun: need.short.toString() });
    } else if (next.step === 'topup') {
      await this.deps.sweeper.give(em, t.address, { step: 'topup', sun: need.short }, p.head, accountId);
      this.deps.logger.info("treasury topped up by the gas station: the operator's costs came out of the account's coins", {
        chain: this.chainId,
        treasury: t.address,
        sun: need.short.toString(),
      });
    } else if (!need.unfinished) {
      return { payout: null, refused: [{ withdrawalId: order.withdrawalId, reason: notFunded(next.missing, coin.decimals, coin.ticker) }] };
    }
    return wait;
  }

  async broadcast(candidate: PayoutCandidate, signal?: AbortSignal): Promise<void> {
    await this.deps.node.broadcast(candidate.raw, signal);
  }

  /** A Tron transaction has no nonce another could take: it dies by its expiration (`expiredBy`). */
  spendKey(): SpendKey {
    return null;
  }

  /** Whether the block at `height` is past the candidate's expiration: no block from it on can hold it. */
  async expiredBy(candidate: PayoutCandidate, height: number, signal?: AbortSignal): Promise<boolean> {
    return (await this.deps.node.blockTime(height, signal)) >= (candidate.data as unknown as TronCandidateData).expiration;
  }

  /** No fee to bump on Tron: a candidate waits until it is mined or expires. */
  async replace(): Promise<PayoutCandidate | null> {
    return null;
  }

  /**
   * The payout's only candidate expired for good: the same payment signed once more on the head
   * block (it may be mined now, as the old one never can); null when it was renewed already (the
   * payout fails, its hold released).
   */
  async renew(_em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null> {
    if (payout.candidates.length > 1) return null;
    const last = payout.candidates[0]!;
    return this.sign(last.data as unknown as TronCandidateData, (prepared as Prepared).head, last.fee, {
      kind: 'payout',
      account_id: payout.accountId,
      withdrawal_ids: payout.legs.map((l) => l.withdrawalId),
    });
  }

  async feePaid(_payout: StoredPayout, txid: string, signal?: AbortSignal): Promise<bigint> {
    const info = await this.deps.node.transactionInfo(txid, signal);
    if (!info) throw new Error(`payout transaction ${txid} has no info on the node`);
    return info.fee;
  }

  /**
   * Why the mined candidate did not pay, or null when it did: a token call that failed (REVERT,
   * OUT_OF_ENERGY), or one whose logs lack the `Transfer` of the amount to the destination. Either
   * way it took its fee.
   */
  async failure(payout: StoredPayout, txid: string, signal?: AbortSignal): Promise<Undelivered | null> {
    const info = await this.deps.node.transactionInfo(txid, signal);
    if (!info) throw new Error(`payout transaction ${txid} has no info on the node`);
    if (!info.succeeded) return { reason: REVERTED_ON_CHAIN, left: 0n };
    const [w] = await rawQuery<{ coin_id: string; to_address: string; amount: string }>(
      this.deps.store.read,
      `SELECT coin_id, to_address, amount FROM withdrawals WHERE id = ${placeholder(this.deps.store.read, 1)}`,
      [payout.legs[0]!.withdrawalId],
    );
    if (!w) throw new Error(`payout ${payout.id} has no withdrawal`);
    const coin = this.deps.catalog.coin(w.coin_id)!;
    const { from } = payout.candidates.find((c) => c.txid === txid)!.data as unknown as TronCandidateData;
    const sent = { coin_id: w.coin_id, from_address: from, to_address: w.to_address, amount: Amount.of(w.amount).toBaseUnits(coin.decimals).toString() };
    return undelivered(this.deps.catalog, sent, info.transfers, tronDigits);
  }

  /** Nothing is reserved on Tron (no nonce, no coins): what the treasury holds is counted at each build. */
  async release(): Promise<void> {}

  /**
   * What paying `amount` of `coinId` to `to` will take (sun), for the withdrawal's reserve: its
   * bandwidth at the burn price; a TRX payment to an address without an account (or to no address
   * given yet) its creation; a token transfer its energy at the burn price, from the node's dry run
   * from the account's treasury (`sweep.token_energy` while the treasury cannot make it: its
   * deposits not swept yet, or no destination given). Energy the gas station delegates is charged
   * all the same: the merchant pays what the transfer is worth on chain, the operator's stake earns it.
   */
  async networkCost(req: { accountId: string; coinId: string; to: string | null; amount: bigint }, signal?: AbortSignal): Promise<bigint> {
    const { node, catalog, store } = this.deps;
    const coin = catalog.coin(req.coinId)!;
    const prices = await node.prices(signal);
    if (coin.asset === NATIVE_ASSET) {
      const creates = req.to === null || !(await node.account(req.to, signal)).exists;
      return (
        BigInt(TRX_TRANSFER_BYTES) * prices.getTransactionFee + (creates ? prices.getCreateNewAccountFeeInSystemContract + prices.getCreateAccountFee : 0n)
      );
    }
    const [treasury] = await rawQuery<{ address: string }>(
      store.read,
      `SELECT address FROM addresses WHERE account_id = ${placeholder(store.read, 1)} AND chain_id = ${placeholder(store.read, 2)} AND purpose = 'treasury'`,
      [req.accountId, this.chainId],
    );
    const dryRun = treasury && req.to !== null ? await node.transferEnergy(treasury.address, req.to, coin.asset, req.amount, signal).catch(() => null) : null;
    const energy = dryRun ?? this.deps.chain.tron!.token_energy;
    return BigInt(TOKEN_TRANSFER_BYTES) * prices.getTransactionFee + BigInt(energy) * prices.getEnergyFee;
  }

  private async sign(data: TronCandidateData, head: Prepared['head'], fee: bigint, purpose: SignPurpose): Promise<PayoutCandidate> {
    const feeLimit = data.feeLimit === null ? undefined : BigInt(data.feeLimit);
    // The signer builds the transaction from these fields itself, checks it against the withdrawal and signs it.
    const signed = await this.deps.signer.signTron(
      this.chainId,
      { path: data.path, contract: data.contract, ref: head, expiresInMs: this.deps.chain.tron!.expiration_ms, feeLimit },
      purpose,
    );
    const kept: TronCandidateData = { ...data, expiration: signed.expiration };
    return { txid: signed.txid, raw: signed.raw, fee, data: kept as unknown as Record<string, unknown> };
  }

  /**
   * What the account's payouts on their way (claimed, not final) will still take from its treasury,
   * by asset: what they pay, and in TRX the most the chain may burn for each (its candidates' stored
   * fee, the highest of them: only one can be mined). A payout that counts on TRX another payout may
   * burn first waits for it (issue 34: a max TRX payout beside a token payout).
   */
  private async unfinished(em: EntityManager, accountId: string): Promise<Map<string, bigint>> {
    const coins = this.deps.catalog.coins().filter((c) => c.chain_id === this.chainId);
    const list = inList(
      em,
      coins.map((c) => c.id),
      2,
    );
    const rows = await rawQuery<{ id: string; coin_id: string; amount: string }>(
      em,
      `SELECT id, coin_id, amount FROM withdrawals WHERE account_id = ${placeholder(em, 1)} AND status IN ('processing', 'broadcast') AND coin_id ${list.sql}`,
      [accountId, ...list.params],
    );
    const out = new Map<string, bigint>();
    const add = (asset: string, units: bigint) => out.set(asset, (out.get(asset) ?? 0n) + units);
    for (const r of rows) {
      const coin = this.deps.catalog.coin(r.coin_id)!;
      add(coin.asset, Amount.of(r.amount).toBaseUnits(coin.decimals));
    }
    if (rows.length === 0) return out;
    const ids = inList(
      em,
      rows.map((r) => r.id),
      1,
    );
    const candidates = await rawQuery<{ withdrawal_id: string; fee: string }>(
      em,
      `SELECT l.withdrawal_id, c.fee FROM chain_payout_legs l JOIN chain_payout_candidates c ON c.payout_id = l.payout_id WHERE l.withdrawal_id ${ids.sql}`,
      ids.params,
    );
    const most = new Map<string, bigint>();
    for (const c of candidates) most.set(c.withdrawal_id, maxOf(most.get(c.withdrawal_id) ?? 0n, BigInt(c.fee)));
    for (const burn of most.values()) add(NATIVE_ASSET, burn);
    return out;
  }
}

const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);
