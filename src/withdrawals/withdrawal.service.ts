import type { EntityManager } from 'typeorm';
import { NATIVE_ASSET, type Catalog } from '../catalog/coins';
import { familyOf } from '../chains/families';
import type { ChainSender, FeeQuote } from '../chains/types';
import { ApiKeyEntity } from '../db/entities/auth';
import type { TransactionRow } from '../db/entities/money';
import type { AccountRow, MemberRow } from '../db/entities/team';
import { WithdrawalEntity, type WithdrawalRow, type WithdrawalStatus } from '../db/entities/withdrawals';
import { GroupCommit } from '../db/group-commit';
import { applyKeyset, countUpTo, keysetBatches, type PageKey } from '../db/keyset';
import { insertRowIfAbsent, isPostgres, isUniqueViolation, lockRow, placeholder, rawQuery, rawRun, updateRows } from '../db/raw';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import { EXTERNAL_BOOK, FEE_BOOK, NETWORK_BOOK } from '../ledger/ledger';
import type { MoneyMovement } from '../money/money-movement';
import type { RateEngine } from '../rates/engine';
import { iso, type Clock } from '../shared/clock';
import { ApiError, conflict, notFound, unavailable, validationError } from '../shared/errors';
import { newTimeOrderedId } from '../shared/ids';
import { Amount } from '../shared/amount';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import { ROLES, SYSTEM, type TeamService, type Actor } from '../team/team.service';
import { approverRefusal, REFUSAL_MESSAGES } from './approver-rule';
import { FeeQuotes } from './fee-quotes';
import { reviewDecision, type ReviewDecision } from './review-policy';
import { presentWithdrawal, type EstimateView, type WithdrawalView } from './withdrawal.view';
import type { WhitelistService } from './whitelist.service';
import { creationEvent, nextMove, type WithdrawalTrigger } from './withdrawal.state';
import { addressRefused, parseEstimate, parsePayoutAmount, parseShape, payoutCoinOf, type PayoutCoin } from './withdrawal.request';
import { listWithdrawalsQuery, type WithdrawalFilters } from './withdrawal.query';
import { largestPayable, MAX_AMOUNT, type WithdrawalFees } from './withdraw-all';

/** The withdrawal as GET returns it (PRODUCT §8): its row's public fields and its coin's names. */

/** Who is asking to pay out: the signed request's key. */
export interface PayoutCaller {
  accountId: string;
  apiKeyId: string;
  /** Subjects of the sensitive-operation limits (SPEC "Limits"). */
  limits: { key: string; ip: string };
  /** The account as stored, when the caller holds it exactly (the key registry on one daemon); else it is read. */
  account?: PayoutAccount | null;
}

export interface WithdrawalServiceDeps {
  store: Store;
  catalog: Catalog;
  rates: RateEngine;
  senderOf: (chainId: string) => ChainSender | null;
  /** One of the wallet's own addresses (any account's): paying it would move coins in a circle. */
  isOwnAddress: (chainId: string, address: string) => boolean;
  money: MoneyMovement;
  outbox: Outbox;
  team: TeamService;
  whitelist: WhitelistService;
  /** The sensitive-operation limiter: counts a creation against its subjects, or answers where it is blocked. */
  /** `payouts.max_per_transaction`: per coin ticker, the signer's cap in the config's default fiat. */
  signerLimits: Readonly<Record<string, string>>;
  limit: (
    subjects: Partial<Record<'key' | 'merchant' | 'person' | 'ip', string>>,
  ) => { allowed: true } | { allowed: false; scope: string; retryAfterSeconds: number };
  clock: Clock;
  /**
   * Families whose network fee depends on the account, the sender or the destination (Bitcoin:
   * the account's coins a payout would spend; Tron: energy, bandwidth, a new account's creation):
   * what the chain will take for paying `amount` of `coinId` to `to` (null: not given, the worst
   * case) from the account's coins at `quote`, in the native coin's base units.
   */
  networkCost?: (
    chainId: string,
  ) => ((req: { accountId: string; coinId: string; to: string | null; amount: bigint; quote: FeeQuote }) => Promise<bigint>) | null;
}

/** How long an estimate's figures hold (the fee quote moves with the mempool). */
const ESTIMATE_TTL_MS = 5 * 60 * 1000;
/** The comment of a cold-storage forward (PRODUCT §18). */
export const CUSTODY_COMMENT = 'cold storage';
/** A review left undecided this long is rejected (SPEC "Limits"). */
export const REVIEW_TTL_MS = 24 * 3600 * 1000;
/**
 * The security-change window: after a change of the account's security, its payouts go to review
 * (`pattern`) this long; a cold-storage address set or changed is used only after it (PRODUCT §18).
 */
export const SECURITY_WINDOW_MS = REVIEW_TTL_MS;
/** Security changes that send the next 24 hours' payouts to review (`pattern`). */
export const PATTERN_ACTIONS = [
  'withdraw.granted',
  'withdraw.approved',
  'member.added',
  'member.role_changed',
  'whitelist.added',
  'whitelist.removed',
  'custody.address_set',
  'custody.removed',
];

/**
 * A live `transactions` row (not reverted, not an adjustment): the condition of the unique index
 * on (withdrawal_id, type). Redundant beside `status = ?`, but SQLite uses a partial index only
 * when the query states its condition: without it, a withdrawal's hold is found by a table scan.
 */
const LIVE = `status <> 'reverted' AND reverses_id IS NULL`;

/** Withdrawals in these statuses no longer count toward the daily limit. */
const UNCOUNTED = ['cancelled', 'rejected', 'failed'];
/** The ten minutes of creation time a withdrawal's amount is summed in (`withdrawal_day_sums`): the first 15 characters of its ISO time. */
const dayBucket = (createdAt: string): string => createdAt.slice(0, 15);
/** Day sums older than this are deleted (the window is 24 hours; a clock set back a little still finds its own). */
const DAY_SUMS_KEPT_MS = 48 * 3600 * 1000;

/** What a withdrawal needs of its account (read on every creation: these columns only). */
const ACCOUNT_COLUMNS = [
  'id',
  'verified',
  'platform_fee_percent',
  'default_fiat',
  'dual_approval_threshold',
  'daily_withdrawal_limit',
  'withdrawal_whitelist_enforced',
] as const;
type PayoutAccount = Pick<AccountRow, (typeof ACCOUNT_COLUMNS)[number]>;
const ACCOUNT_SELECT = ACCOUNT_COLUMNS.map((c) => `"${c}"`).join(', ');

/** A concurrent request won a unique index: the write runs again and finds what it wrote. */
class Raced extends Error {}

/**
 * Withdrawals: estimate, creation with its checks in SPEC's order, the hold, the permanent binding
 * of Idempotency-Keys and payout_ids (SPEC "Idempotency" 7–10), cancel, review and dual-approval
 * decisions, the review expiry, and the payout-address whitelist. Every move goes through the
 * pure state table and writes its event in its own transaction. Payouts themselves (processing and
 * later) are the payout worker's.
 */
export class WithdrawalService {
  private readonly feeQuotes: FeeQuotes;
  /** Creations arriving together share one SQLite commit, each in its own savepoint (as invoice creations). */
  private readonly creations: GroupCommit;

  /** Told of every move of a refund's withdrawal, in the move's transaction (the refunds service follows it). */
  private refundMoved: ((em: EntityManager, withdrawal: WithdrawalRow) => Promise<void>) | null = null;

  constructor(private readonly deps: WithdrawalServiceDeps) {
    this.feeQuotes = new FeeQuotes(() => deps.clock.now().getTime());
    this.creations = new GroupCommit(deps.store);
  }

  /** Who chose the destination of a withdrawal no key asked for (a cold-storage forward: the member who set its address). */
  private destinationSetBy: ((em: EntityManager, withdrawal: WithdrawalRow) => Promise<string | null>) | null = null;

  /**
   * Cold storage (PRODUCT §18) names who set a forward's address: as the member whose security
   * change sent a payout to review, they do not approve it (PRODUCT §14's second person).
   */
  followCustody(setBy: (em: EntityManager, withdrawal: WithdrawalRow) => Promise<string | null>): void {
    this.destinationSetBy = setBy;
  }

  /** The refunds service follows the withdrawals that pay refunds (PRODUCT §16): one listener. */
  followRefunds(listener: (em: EntityManager, withdrawal: WithdrawalRow) => Promise<void>): void {
    this.refundMoved = listener;
  }

  async estimate(accountId: string, body: Record<string, unknown>): Promise<EstimateView> {
    const req = parseEstimate(body, this.deps.catalog, this.deps.senderOf, this.deps.isOwnAddress);
    const { payout, to } = req;
    const account = await this.account(accountId);
    const { amount, fees } = req.amount === MAX_AMOUNT ? await this.everything(account, payout, to) : await this.priced(account, payout, req.amount, to);
    return {
      coin_id: payout.coin.id,
      amount: amount.toString(),
      platform_fee: fees.platformFee.toString(),
      network_fee_reserved: fees.networkFee.toString(),
      network_fee_mode: req.feeMode,
      total_debit: fees.total.toString(),
      expires_at: iso(new Date(this.deps.clock.now().getTime() + ESTIMATE_TTL_MS)),
    };
  }

  private async priced(account: PayoutAccount, payout: PayoutCoin, amount: Amount, to: string | null): Promise<{ amount: Amount; fees: WithdrawalFees }> {
    return { amount, fees: await this.fees(account, payout, amount, to) };
  }

  /**
   * `amount: "max"` (PRODUCT §14): the largest amount whose total debit fits the account's
   * available balance of the coin, priced as a withdrawal of it would be. 409 `insufficient_funds`
   * when not even the least payment fits.
   */
  private async everything(account: PayoutAccount, payout: PayoutCoin, to: string | null): Promise<{ amount: Amount; fees: WithdrawalFees }> {
    const { available } = await this.deps.money.accountBalance(this.deps.store.read, account.id, payout.coin.id);
    const found = await this.largestWithin(account, payout, to, available);
    if (!found)
      throw conflict('the available balance cannot pay the least withdrawal and its fees', { reason: 'insufficient_funds', available: available.toString() });
    return found;
  }

  /**
   * The cold-storage forward's price (PRODUCT §18): the largest amount of `coinId` to `to` whose
   * total debit (its fees included, priced as its withdrawal will be) fits `budget`; null when
   * not even the least payment does. 503 when the fee cannot be priced now.
   */
  async priceWithin(accountId: string, coinId: string, to: string, budget: Amount): Promise<{ amount: Amount; fees: WithdrawalFees } | null> {
    const payout = payoutCoinOf(coinId, this.deps.catalog, this.deps.senderOf);
    return this.largestWithin(await this.account(accountId), payout, to, budget);
  }

  /** The largest amount whose total debit fits `budget` (withdraw-all.ts), or null; 503 when it cannot be priced now. */
  private largestWithin(
    account: PayoutAccount,
    payout: PayoutCoin,
    to: string | null,
    budget: Amount,
  ): Promise<{ amount: Amount; fees: WithdrawalFees } | null> {
    return largestPayable({
      available: budget,
      decimals: payout.coin.decimals,
      minimum: Amount.fromBaseUnits(payout.sender.minimumPayment, payout.coin.decimals),
      platformFee: (amount) => this.platformFee(account, payout, amount),
      feesOf: (amount) => this.fees(account, payout, amount, to),
    }).catch((err: unknown) => {
      if (err instanceof ApiError) throw err;
      throw unavailable(`the largest ${payout.coin.ticker} withdrawal cannot be priced now; retry later`);
    });
  }

  /**
   * POST /v1/withdrawals after the payout permission held: kyb, body, whitelist, destination,
   * amount, then the idempotency key, the payout_id, the limits and the hold, in one transaction.
   * `created` is false when an existing withdrawal is returned; `replayed` when its Idempotency-Key
   * was bound to it already (SPEC Idempotency 2: the answer carries `Idempotent-Replayed: true`).
   */
  async create(
    caller: PayoutCaller,
    body: Record<string, unknown>,
    idempotencyKey: string | null,
  ): Promise<{ withdrawal: WithdrawalView; created: boolean; replayed: boolean }> {
    const { catalog } = this.deps;
    const account = caller.account && caller.account.id === caller.accountId ? caller.account : await this.account(caller.accountId);
    if (!account.verified) throw new ApiError(403, 'kyb_required', 'the account must be verified before it can withdraw');
    const shape = parseShape(body, catalog, this.deps.senderOf);
    const { coin, sender } = shape.payout;
    if (account.withdrawal_whitelist_enforced && !(await this.deps.whitelist.has(this.deps.store.read, caller.accountId, coin.id, shape.toAddress))) {
      throw new ApiError(403, 'forbidden', "this address is not on the account's withdrawal whitelist");
    }
    if (!sender.payable(shape.toAddress) || this.deps.isOwnAddress(coin.chain_id, shape.toAddress)) throw addressRefused();
    const amount = parsePayoutAmount(shape.rawAmount, shape.payout);
    const request = { coin_id: coin.id, amount, to_address: shape.toAddress, payout_id: shape.payoutId, comment: shape.comment };

    // A repeat must not depend on the fee quote or the rates: when either is missing (503), the
    // request is looked up as a repeat first (it may bind the key) and answered as one if it is.
    // Otherwise the write transaction below finds repeats, with no read of its own before it.
    let fees: Awaited<ReturnType<WithdrawalService['fees']>>;
    try {
      fees = await this.fees(account, shape.payout, amount, shape.toAddress);
    } catch (err) {
      const repeat = await retrying(() => this.creations.run((em) => this.findRepeat(em, caller.accountId, request, idempotencyKey)));
      if (repeat) return { withdrawal: this.present(repeat.row), created: false, replayed: repeat.byKey };
      throw err;
    }
    return retrying(() =>
      this.creations.run(async (em) => {
        const found = await this.findRepeat(em, caller.accountId, request, idempotencyKey);
        if (found) return { withdrawal: this.present(found.row), created: false, replayed: found.byKey };
        // The unique indexes on (account, payout_id) and (account, key) are the guards: the
        // withdrawal, its key and its hold are written together or not at all.
        const row = await this.insertNew(em, account, shape.payout, {
          payout_id: shape.payoutId,
          to_address: shape.toAddress,
          comment: shape.comment,
          network_fee_mode: shape.feeMode,
          api_key_id: caller.apiKeyId,
          refund_id: null,
          amount,
          fees,
        });
        if (!row) throw new Raced();
        if (idempotencyKey !== null && !(await this.bindKey(em, caller.accountId, idempotencyKey, row.id, new Date(row.created_at)))) throw new Raced();
        // Counted only by the copy that won the guards and could be held (parallel copies of one
        // request are one payout; insufficient_funds answers first, as in the issue's order): a 429
        // rolls the withdrawal, its key and its hold back.
        this.countCreation(caller.accountId, caller.limits);
        return { withdrawal: await this.announceCreation(em, row), created: true, replayed: false };
      }),
    );
  }

  /**
   * A refund's price (PRODUCT §16), outside any transaction (the fee quote may ask the node): what
   * is sent and the fees of a withdrawal taking `refund` from what was received. With
   * `feePaidBy: 'payer'` the reserved network fee comes out of it (what is sent is the rest, at
   * least the chain's least payment); else it is on top, as for a withdrawal. `to` null: the worst
   * case, for a hold while the payer's address is awaited.
   */
  async priceRefund(req: {
    accountId: string;
    coinId: string;
    refund: Amount;
    to: string | null;
    feePaidBy: 'merchant' | 'payer';
    requireVerified: boolean;
  }): Promise<{ payout: PayoutCoin; send: Amount; fees: WithdrawalFees }> {
    const account = await this.account(req.accountId);
    if (req.requireVerified && !account.verified) throw new ApiError(403, 'kyb_required', 'the account must be verified before it can withdraw');
    const payout = this.payoutCoin(req.coinId);
    if (req.to !== null) this.checkDestination(payout, req.to);
    const minimum = Amount.fromBaseUnits(payout.sender.minimumPayment, payout.coin.decimals);
    const onTop = await this.fees(account, payout, req.refund, req.to);
    if (req.feePaidBy === 'merchant') {
      if (req.refund.cmp(minimum) < 0)
        throw validationError('amount', `amount must be at least ${minimum.toString()} ${payout.coin.ticker}`, { minimum: minimum.toString() });
      return { payout, send: req.refund, fees: onTop };
    }
    const send = req.refund.minus(onTop.networkFee);
    if (send.cmp(minimum) < 0) {
      throw validationError('amount', `amount does not cover the network fee (${onTop.networkFee.toString()} ${payout.coin.ticker}) and the least payment`, {
        network_fee: onTop.networkFee.toString(),
        minimum: minimum.toString(),
      });
    }
    const platformFee = this.platformFee(account, payout, send);
    return { payout, send, fees: { platformFee, networkFee: onTop.networkFee, total: send.plus(platformFee).plus(onTop.networkFee) } };
  }

  /** 403 `kyb_required` unless the account is verified (a refund's first check, as a withdrawal's). */
  async assertVerified(accountId: string): Promise<void> {
    if (!(await this.account(accountId)).verified) throw new ApiError(403, 'kyb_required', 'the account must be verified before it can withdraw');
  }

  /** The payout side of a coin (a refund's, a cold-storage rule's); validation_error (`coin_id`) when its chain pays nothing out. */
  payoutCoin(coinId: unknown): PayoutCoin {
    return payoutCoinOf(coinId, this.deps.catalog, this.deps.senderOf);
  }

  /** A destination other than a withdrawal's (a refund's, PRODUCT §16; a cold address, §18), checked as one: payable on the coin's chain and not the wallet's own; 422 `address_refused`. */
  checkDestination(payout: PayoutCoin, to: string): void {
    if (!payout.sender.payable(to) || this.deps.isOwnAddress(payout.coin.chain_id, to)) throw addressRefused();
  }

  /** The hold of a refund waiting for its address (the whole worst-case debit), in the caller's transaction: the pending row's id. */
  async holdForRefund(em: EntityManager, h: { accountId: string; coinId: string; refundId: string; send: Amount; fees: WithdrawalFees }): Promise<string> {
    const row = await this.deps.money.hold(em, {
      accountId: h.accountId,
      coinId: h.coinId,
      withdrawalId: null,
      refundId: h.refundId,
      amount: h.send,
      legs: holdLegs(h.send, h.fees),
    });
    if (!row) throw new Error(`refund ${h.refundId}: its hold could not be written`);
    return row.id;
  }

  /** Releases a refund's hold taken while it waited for its address. */
  async releaseRefundHold(em: EntityManager, holdId: string): Promise<void> {
    await this.deps.money.void(em, holdId);
  }

  /**
   * The withdrawal that pays a refund (PRODUCT §16), in the refund's transaction: its status by the
   * review policy, its hold of the whole total debit, its event, as `create` does; no whitelist, no
   * payout_id or Idempotency-Key of its own (the refund has them). `limits`: the creating key's
   * sensitive-operation subjects (none when the payer gave the address).
   */
  async createForRefund(
    em: EntityManager,
    r: {
      accountId: string;
      apiKeyId: string;
      refundId: string;
      payout: PayoutCoin;
      send: Amount;
      fees: WithdrawalFees;
      toAddress: string;
      comment: string | null;
      limits: { key: string; ip: string } | null;
    },
  ): Promise<WithdrawalRow> {
    const account = await this.account(r.accountId);
    const row = await this.insertNew(em, account, r.payout, {
      payout_id: null,
      to_address: r.toAddress,
      comment: r.comment,
      network_fee_mode: 'reserved',
      api_key_id: r.apiKeyId,
      refund_id: r.refundId,
      amount: r.send,
      fees: r.fees,
    });
    if (!row) throw new Error(`refund ${r.refundId}: its withdrawal could not be written`);
    if (r.limits) this.countCreation(r.accountId, r.limits);
    await this.announceCreation(em, row);
    return row;
  }

  /**
   * A cold-storage forward (PRODUCT §18): a withdrawal of the excess to the rule's address, checked
   * (kyb, whitelist, destination) and created as any withdrawal, in one transaction: `due` first
   * (the rule unchanged, the account not frozen, `keep` left after the whole debit), then the row
   * by the review policy, its hold, and `record` (the rule notes its forward; false when another run
   * did, and nothing is written). `payoutId` names the run: a withdrawal under it already is that
   * run's, and none is made again. `ruleId` stands where a plain withdrawal names its key. The new
   * row, or null when nothing was made.
   */
  async createForCustody(c: {
    accountId: string;
    ruleId: string;
    coinId: string;
    toAddress: string;
    payoutId: string;
    amount: Amount;
    fees: WithdrawalFees;
    due: (em: EntityManager, totalDebit: Amount) => Promise<boolean>;
    record: (em: EntityManager, row: WithdrawalRow) => Promise<boolean>;
  }): Promise<WithdrawalRow | null> {
    const account = await this.account(c.accountId);
    if (!account.verified) throw new ApiError(403, 'kyb_required', 'the account must be verified before it can withdraw');
    const payout = payoutCoinOf(c.coinId, this.deps.catalog, this.deps.senderOf);
    if (account.withdrawal_whitelist_enforced && !(await this.deps.whitelist.has(this.deps.store.read, c.accountId, c.coinId, c.toAddress))) {
      throw new ApiError(403, 'forbidden', "this address is not on the account's withdrawal whitelist");
    }
    this.checkDestination(payout, c.toAddress);
    return retrying(() =>
      this.deps.store.write(async (em) => {
        const p = (i: number) => placeholder(em, i);
        const [made] = await rawQuery<{ id: string }>(em, `SELECT id FROM withdrawals WHERE account_id = ${p(1)} AND payout_id = ${p(2)}`, [
          c.accountId,
          c.payoutId,
        ]);
        if (made || !(await c.due(em, c.fees.total))) return null;
        const row = await this.insertNew(em, account, payout, {
          payout_id: c.payoutId,
          to_address: c.toAddress,
          comment: CUSTODY_COMMENT,
          network_fee_mode: 'reserved',
          api_key_id: c.ruleId,
          refund_id: null,
          amount: c.amount,
          fees: c.fees,
        });
        if (!row || !(await c.record(em, row))) throw new Raced();
        await this.announceCreation(em, row);
        return row;
      }),
    );
  }

  /**
   * A new withdrawal in the caller's transaction, as every creation writes it: its first status by
   * the review policy, decided with the account locked on PostgreSQL (SQLite's writes take turns)
   * so parallel creations cannot each find the day's sum under the daily limit and together go past
   * it; the row, its day sum, and the hold of its whole total debit (409 `insufficient_funds`: the
   * caller's transaction writes nothing). Null when a unique index (its payout_id) holds another.
   */
  private async insertNew(em: EntityManager, account: PayoutAccount, payout: PayoutCoin, w: NewWithdrawal): Promise<WithdrawalRow | null> {
    await lockRow(em, 'accounts', account.id);
    const initial = await this.initialStatus(em, account, payout, w.amount);
    const row = newWithdrawalRow(this.deps.clock.now(), account.id, payout.coin.id, initial, w);
    if (!(await insertRowIfAbsent(em, 'withdrawals', row))) return null;
    await this.countInDay(em, row, 1);
    await this.deps.money.hold(em, {
      accountId: account.id,
      coinId: payout.coin.id,
      withdrawalId: row.id,
      ...(w.refund_id ? { refundId: w.refund_id } : {}),
      amount: w.amount,
      legs: holdLegs(w.amount, w.fees),
    });
    return row;
  }

  /** A new withdrawal's event (review and awaiting_approval have one), in its creating transaction; its view. */
  private async announceCreation(em: EntityManager, row: WithdrawalRow): Promise<WithdrawalView> {
    const view = this.present(row);
    const event = creationEvent(row.status);
    if (event)
      await this.deps.outbox.emit(em, { accountId: row.account_id, type: event, data: { withdrawal: view }, objectId: row.id, at: new Date(row.created_at) });
    return view;
  }

  /** A withdrawal cancelled in the caller's transaction (before processing, as the merchant's cancel): a refund's cancelled with it, a cold-storage forward whose rule changed. */
  async cancelWithin(em: EntityManager, accountId: string, withdrawalId: string): Promise<WithdrawalRow> {
    return this.move(em, await this.withdrawalOf(em, accountId, withdrawalId), 'cancel', {});
  }

  /** Counts a creation against the sensitive-operation limits of its key, merchant and IP; 429 `rate_limited` where one is spent. */
  private countCreation(accountId: string, limits: { key: string; ip: string }): void {
    const limited = this.deps.limit({ key: limits.key, merchant: accountId, ip: limits.ip });
    if (!limited.allowed) {
      throw new ApiError(
        429,
        'rate_limited',
        'too many withdrawals; wait before trying again',
        { scope: limited.scope, retry_after: limited.retryAfterSeconds },
        { 'Retry-After': String(limited.retryAfterSeconds) },
      );
    }
  }

  async get(accountId: string, id: string): Promise<WithdrawalView> {
    const row = await this.deps.store.read.findOneBy(WithdrawalEntity, { id, account_id: accountId });
    if (!row) throw notFound('withdrawal');
    return this.present(row);
  }

  async page(accountId: string, filters: WithdrawalFilters, page: PageRequest): Promise<Page<WithdrawalView>> {
    const rows = await applyKeyset(listWithdrawalsQuery(this.deps.store.read, accountId, filters), 'w', page).getMany();
    return toPage(rows, page, (r) => this.present(r));
  }

  batches(accountId: string, filters: WithdrawalFilters, after: PageKey | null, size: number): AsyncIterable<WithdrawalRow[]> {
    const build = () => listWithdrawalsQuery(this.deps.store.read, accountId, filters);
    return keysetBatches(build, 'w', { after, batchSize: size, read: (qb) => qb.getMany() as Promise<WithdrawalRow[]>, keyOf: (r) => r });
  }

  count(accountId: string, filters: WithdrawalFilters, after: PageKey | null, cap: number): Promise<number> {
    const qb = listWithdrawalsQuery(this.deps.store.read, accountId, filters);
    if (after) applyKeyset(qb, 'w', { limit: cap, after });
    return countUpTo(qb, cap);
  }

  present(row: WithdrawalRow): WithdrawalView {
    return presentWithdrawal(row, this.deps.catalog);
  }

  /** The merchant's cancel: only before processing (SPEC), the hold released. */
  async cancel(accountId: string, id: string): Promise<WithdrawalView> {
    return this.deps.store.write(async (em) => this.present(await this.move(em, await this.withdrawalOf(em, accountId, id), 'cancel', {})));
  }

  /**
   * A member's cancel (`coinkeep withdrawals cancel`, the dashboard): any role, with their
   * two-factor code, also while the account is frozen (PRODUCT §14), written to the security log.
   */
  async cancelForMember(accountId: string, id: string, actor: Actor): Promise<WithdrawalView> {
    return this.deps.store.write(async (em) => {
      const who = await this.deps.team.authorize(em, accountId, actor, { roles: ROLES, otp: true });
      const row = await this.withdrawalOf(em, accountId, id);
      const moved = await this.move(em, row, 'cancel', {});
      await this.logDecision(em, who, 'withdrawal.cancelled', row);
      return this.present(moved);
    });
  }

  private async withdrawalOf(em: EntityManager, accountId: string, id: string): Promise<WithdrawalRow> {
    const row = await em.findOneBy(WithdrawalEntity, { id, account_id: accountId });
    if (!row) throw notFound('withdrawal');
    return row;
  }

  /** A member's decision on a withdrawal in the account's security log (never a secret). */
  private logDecision(em: EntityManager, who: string, action: string, row: WithdrawalRow): Promise<void> {
    return this.deps.team.log(em, row.account_id, who, action, {
      withdrawal_id: row.id,
      from: row.status,
      amount: row.amount,
      coin_id: row.coin_id,
      to_address: row.to_address,
    });
  }

  /** An account's withdrawals for a member (the CLI's list), newest first, at most 200; `status` filters. */
  async listForMember(accountId: string, actor: Actor, status?: WithdrawalStatus): Promise<WithdrawalView[]> {
    const em = this.deps.store.read;
    await this.deps.team.authorize(em, accountId, actor, { roles: ['owner', 'admin', 'developer'], otp: false });
    const rows = await listWithdrawalsQuery(em, accountId, status ? { status } : {})
      .limit(200)
      .getMany();
    return rows.map((r) => this.present(r));
  }

  async getForMember(accountId: string, actor: Actor, id: string): Promise<WithdrawalView> {
    await this.deps.team.authorize(this.deps.store.read, accountId, actor, { roles: ['owner', 'admin', 'developer'], otp: false });
    return this.get(accountId, id);
  }

  /**
   * An owner's or admin's decision on a withdrawal in `review` or `awaiting_approval`, with their
   * two-factor code. An approval counts only from a second person (PRODUCT §14, approver-rule.ts).
   */
  async decide(accountId: string, id: string, actor: Actor, decision: 'approve' | 'reject'): Promise<WithdrawalView> {
    return this.deps.store.write(async (em) => {
      const who = await this.deps.team.authorize(em, accountId, actor, { roles: ['owner', 'admin'], otp: true });
      const row = await this.withdrawalOf(em, accountId, id);
      if (row.status !== 'review' && row.status !== 'awaiting_approval')
        throw conflict(`only a withdrawal in review or awaiting approval is decided; this one is ${row.status}`, { status: row.status });
      const member = await this.deps.team.memberByEmail(em, accountId, who);
      if (decision === 'approve') await this.checkApprover(em, row, member);
      const now = iso(this.deps.clock.now());
      const moved = await this.move(em, row, decision, { decided_by: member.id, decided_at: now });
      await this.logDecision(em, who, `withdrawal.${decision === 'approve' ? 'approved' : 'rejected'}`, row);
      return this.present(moved);
    });
  }

  /** Refuses (403 `forbidden`, `details.reason` naming the rule) an approval PRODUCT §14 does not count. */
  private async checkApprover(em: EntityManager, row: WithdrawalRow, approver: MemberRow): Promise<void> {
    const key = await em.findOneBy(ApiKeyEntity, { id: row.api_key_id });
    const changedBy =
      row.status === 'review' && row.review_reason === 'pattern' ? await this.securityChanges(em, row.account_id, new Date(row.created_at)) : [];
    const setBy = !key && this.destinationSetBy ? await this.destinationSetBy(em, row) : null;
    if (setBy) changedBy.push(setBy);
    const refusal = approverRefusal({
      approver,
      keyHolders: key ? [key.created_by, key.secret_holder, key.previous_secret_holder] : [],
      changedBy,
      now: this.deps.clock.now(),
    });
    if (refusal) throw new ApiError(403, 'forbidden', REFUSAL_MESSAGES[refusal], { reason: refusal });
  }

  /**
   * PRODUCT §14, in the payout worker's claiming transaction: which of an account's pending
   * withdrawals may be paid, by the account as it is now. None while it is frozen: they wait in
   * `pending`. When it is not verified, or a destination is off its enforced whitelist, that
   * withdrawal moves to `review` (`compliance`), its hold kept, for an owner or admin to decide.
   */
  async claimable(em: EntityManager, accountId: string, pending: WithdrawalRow[]): Promise<WithdrawalRow[]> {
    if (pending.length === 0) return [];
    const [account] = await rawQuery<Pick<AccountRow, 'status' | 'verified' | 'withdrawal_whitelist_enforced'>>(
      em,
      `SELECT status, verified, withdrawal_whitelist_enforced FROM accounts WHERE id = ${placeholder(em, 1)}`,
      [accountId],
    );
    if (!account || account.status === 'frozen') return [];
    const claimable: WithdrawalRow[] = [];
    for (const w of pending) {
      const reason = !account.verified
        ? 'unverified'
        : // PRODUCT §16: the whitelist does not apply to a refund's address.
          account.withdrawal_whitelist_enforced && !w.refund_id && !(await this.deps.whitelist.has(em, accountId, w.coin_id, w.to_address))
          ? 'not_whitelisted'
          : null;
      if (reason === null) {
        claimable.push(w);
        continue;
      }
      await this.move(em, w, 'compliance', { review_reason: 'compliance' });
      await this.deps.team.log(em, accountId, SYSTEM, 'withdrawal.compliance_review', { withdrawal_id: w.id, reason });
    }
    return claimable;
  }

  /** Reviews left undecided for 24 hours are rejected, their holds released. How many. */
  async expireReviews(): Promise<number> {
    const now = this.deps.clock.now().getTime();
    // The day sums the daily limit can no longer read go with it (this job runs every minute).
    await this.deps.store.write((em) =>
      rawRun(em, `DELETE FROM withdrawal_day_totals WHERE bucket < ${placeholder(em, 1)}`, [dayBucket(iso(new Date(now - DAY_SUMS_KEPT_MS)))]),
    );
    const cutoff = iso(new Date(now - REVIEW_TTL_MS));
    // A review's 24 hours start when it entered review (its last move): at creation, or later when
    // the payout worker held it for compliance.
    const due = await this.deps.store.read
      .createQueryBuilder(WithdrawalEntity, 'w')
      .where("w.status = 'review' AND w.updated_at <= :cutoff", { cutoff })
      .orderBy('w.updated_at', 'ASC')
      .limit(200)
      .getMany();
    let done = 0;
    for (const row of due) {
      const moved = await this.deps.store.write(async (em) => {
        try {
          await this.move(em, row, 'expire', {});
        } catch (err) {
          // Decided or cancelled meanwhile.
          if (err instanceof ApiError && err.status === 409) return false;
          throw err;
        }
        await this.deps.team.log(em, row.account_id, 'system', 'withdrawal.review_expired', { withdrawal_id: row.id });
        return true;
      });
      if (moved) done++;
    }
    return done;
  }

  /**
   * A move made by the payout worker (claim, broadcast, confirm, fail, reorg), as `move`. `posted`:
   * on `confirm`, what each hold leg really took (by leg code). A confirmation after a
   * reorganisation finds the hold settled already and leaves it: settled money stays settled.
   */
  payoutMove(
    em: EntityManager,
    row: WithdrawalRow,
    trigger: WithdrawalTrigger,
    patch: Partial<WithdrawalRow>,
    posted?: ReadonlyMap<string, Amount>,
  ): Promise<WithdrawalRow> {
    return this.move(em, row, trigger, patch, posted);
  }

  /**
   * One move of the state table, guarded by the status the row was read in, with its hold action
   * and its event in the caller's transaction. A move the state does not allow is 409 `conflict`.
   */
  private async move(
    em: EntityManager,
    row: WithdrawalRow,
    trigger: WithdrawalTrigger,
    patch: Partial<WithdrawalRow>,
    posted?: ReadonlyMap<string, Amount>,
  ): Promise<WithdrawalRow> {
    const m = nextMove(row.status, trigger);
    if (!m) throw conflict(`a withdrawal in ${row.status} cannot be ${trigger === 'cancel' ? 'cancelled' : `moved by ${trigger}`}`, { status: row.status });
    const now = this.deps.clock.now();
    const next: WithdrawalRow = { ...row, ...patch, status: m.to, updated_at: iso(now) };
    if ((await updateRows(em, 'withdrawals', { ...patch, status: m.to, updated_at: next.updated_at }, { id: row.id, status: row.status })) !== 1) {
      throw conflict('the withdrawal changed meanwhile; read it again');
    }
    if (UNCOUNTED.includes(m.to) && !UNCOUNTED.includes(row.status)) await this.countInDay(em, row, -1);
    if (!UNCOUNTED.includes(m.to) && UNCOUNTED.includes(row.status)) await this.countInDay(em, row, 1);
    if (m.hold === 'recharge') {
      if (!(await this.deps.money.recharge(em, row.id, posted))) throw new Error(`withdrawal ${row.id} has no released hold to charge again`);
    } else if (m.hold !== 'keep') {
      const [hold] = await rawQuery<Pick<TransactionRow, 'id'>>(
        em,
        `SELECT id FROM transactions WHERE withdrawal_id = ${placeholder(em, 1)} AND type = 'withdrawal' AND status = 'pending' AND ${LIVE}`,
        [row.id],
      );
      if (hold) {
        if (m.hold === 'release') await this.deps.money.void(em, hold.id);
        else await this.deps.money.settle(em, hold.id, posted);
      } else if (!(m.hold === 'settle' && (await this.settled(em, row.id)))) {
        throw new Error(`withdrawal ${row.id} has no pending hold`);
      }
    }
    if (m.event)
      await this.deps.outbox.emit(em, { accountId: row.account_id, type: m.event, data: { withdrawal: this.present(next) }, objectId: row.id, at: now });
    if (next.refund_id && this.refundMoved) await this.refundMoved(em, next);
    return next;
  }

  /** Whether the withdrawal's hold was settled (a completion before a reorganisation). */
  private async settled(em: EntityManager, withdrawalId: string): Promise<boolean> {
    const rows = await rawQuery<Pick<TransactionRow, 'id'>>(
      em,
      `SELECT id FROM transactions WHERE withdrawal_id = ${placeholder(em, 1)} AND type = 'withdrawal' AND status = 'confirmed' AND ${LIVE}`,
      [withdrawalId],
    );
    return rows.length > 0;
  }

  /**
   * The withdrawal a request repeats, if any. The key decides first (rule 9): bound to a
   * withdrawal, the request must carry the same values (rule 8). Then the payout_id: the same coin,
   * amount and address return its withdrawal and bind a new key to it (rule 10); others are 409.
   * `byKey`: found by its key (a replay), not by its payout_id.
   */
  private async findRepeat(
    em: EntityManager,
    accountId: string,
    req: { coin_id: string; amount: Amount; to_address: string; payout_id: string | null; comment: string | null },
    key: string | null,
  ): Promise<{ row: WithdrawalRow; byKey: boolean } | null> {
    const p = (i: number) => placeholder(em, i);
    if (key !== null) {
      const [w] = await rawQuery<WithdrawalRow>(
        em,
        `SELECT w.* FROM withdrawal_keys k JOIN withdrawals w ON w.id = k.withdrawal_id WHERE k.account_id = ${p(1)} AND k."key" = ${p(2)}`,
        [accountId, key],
      );
      if (w) {
        const same = samePayment(w, req) && w.payout_id === req.payout_id && (w.comment ?? null) === req.comment;
        if (!same) throw new ApiError(422, 'idempotency.mismatch', 'this Idempotency-Key was used for a different withdrawal');
        return { row: w, byKey: true };
      }
    }
    if (req.payout_id === null) return null;
    const [w] = await rawQuery<WithdrawalRow>(em, `SELECT * FROM withdrawals WHERE account_id = ${p(1)} AND payout_id = ${p(2)}`, [accountId, req.payout_id]);
    if (!w) return null;
    if (!samePayment(w, req)) throw conflict('this payout_id names a withdrawal with other parameters', { withdrawal_id: w.id });
    if (key !== null && !(await this.bindKey(em, accountId, key, w.id, this.deps.clock.now()))) throw new Raced();
    return { row: w, byKey: false };
  }

  private bindKey(em: EntityManager, accountId: string, key: string, withdrawalId: string, now: Date): Promise<boolean> {
    return insertRowIfAbsent(em, 'withdrawal_keys', { account_id: accountId, key, withdrawal_id: withdrawalId, created_at: iso(now) });
  }

  /**
   * Adds a withdrawal's amount to (`sign` 1) or takes it from (-1) the exact total of its account,
   * coin and ten minutes of creation time, in the caller's transaction. PostgreSQL adds in one
   * statement (`numeric` arithmetic, exact); SQLite has no exact type, so the total is read and
   * written back, which its one writer at a time makes safe.
   */
  private async countInDay(em: EntityManager, row: Pick<WithdrawalRow, 'account_id' | 'coin_id' | 'amount' | 'created_at'>, sign: 1 | -1): Promise<void> {
    const p = (i: number) => placeholder(em, i);
    const key = [row.account_id, dayBucket(row.created_at), row.coin_id];
    const change = sign === 1 ? Amount.of(row.amount) : Amount.zero().minus(Amount.of(row.amount));
    if (isPostgres(em)) {
      await rawRun(
        em,
        `INSERT INTO withdrawal_day_totals (account_id, bucket, coin_id, total) VALUES ($1, $2, $3, $4)
         ON CONFLICT (account_id, bucket, coin_id) DO UPDATE SET total = CAST(CAST(withdrawal_day_totals.total AS numeric) + CAST(excluded.total AS numeric) AS varchar)`,
        [...key, change.toString()],
      );
      return;
    }
    const [was] = await rawQuery<{ total: string }>(
      em,
      `SELECT total FROM withdrawal_day_totals WHERE account_id = ${p(1)} AND bucket = ${p(2)} AND coin_id = ${p(3)}`,
      key,
    );
    await rawRun(
      em,
      `INSERT INTO withdrawal_day_totals (account_id, bucket, coin_id, total) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})
       ON CONFLICT (account_id, bucket, coin_id) DO UPDATE SET total = excluded.total`,
      [...key, (was ? Amount.of(was.total).plus(change) : change).toString()],
    );
  }

  /** The platform's percentage of a withdrawal's amount, rounded up, in the withdrawn coin. */
  private platformFee(account: PayoutAccount, payout: PayoutCoin, amount: Amount): Amount {
    return amount.percent(account.platform_fee_percent, payout.coin.decimals, 'up');
  }

  /** Fees in the withdrawn coin: the platform's percentage (rounded up) and the reserved network fee. */
  private async fees(account: PayoutAccount, payout: PayoutCoin, amount: Amount, to: string | null): Promise<WithdrawalFees> {
    const platformFee = this.platformFee(account, payout, amount);
    let quote: FeeQuote;
    try {
      quote = await this.feeQuotes.quote(payout.sender);
    } catch {
      throw unavailable(`no ${payout.coin.ticker} network fee estimate now; retry later`);
    }
    // The payout rail's own pricing where it has one (Bitcoin: the account's coins; Tron: the
    // destination and energy), else the family's reserve at the quote (EVM: gas times the fee cap).
    const cost = this.deps.networkCost?.(payout.coin.chain_id);
    let native: bigint | null = null;
    try {
      if (cost) native = await cost({ accountId: account.id, coinId: payout.coin.id, to, amount: amount.toBaseUnits(payout.coin.decimals), quote });
      else native = familyOf(payout.coin.family).networkFeeReserve(quote, payout.coin.asset !== NATIVE_ASSET);
    } catch {
      native = null;
    }
    if (native === null) throw unavailable(`no ${payout.coin.ticker} network fee estimate now; retry later`);
    const networkFee = this.inWithdrawnCoin(payout, native);
    return { platformFee, networkFee, total: amount.plus(platformFee).plus(networkFee) };
  }

  /** `nativeBaseUnits` of the chain's native coin in the withdrawn coin: itself, or a token's worth at the current rates, rounded up. */
  private inWithdrawnCoin(payout: PayoutCoin, nativeBaseUnits: bigint): Amount {
    const token = payout.coin.asset !== NATIVE_ASSET;
    const native = this.deps.catalog.nativeOf(payout.coin.chain_id)!;
    const inNative = Amount.fromBaseUnits(nativeBaseUnits, native.decimals);
    if (!token) return inNative;
    const fiat = this.deps.catalog.defaultFiat;
    const nativeRate = Amount.of(this.deps.rates.rate(native.ticker, fiat).rate);
    const tokenRate = Amount.of(this.deps.rates.rate(payout.coin.ticker, fiat).rate);
    return inNative.times(nativeRate).div(tokenRate, payout.coin.decimals, 'up');
  }

  /**
   * PRODUCT §8: `awaiting_approval` above the dual-approval threshold (valued in the default fiat
   * at the current rate: 503 without one); else `review` with `pattern` after a security change
   * in the last 24 hours, `limit` when the last 24 hours' withdrawals with this one are worth more
   * than the account's daily limit, or `signer_limit` above the signer's cap for the coin; else
   * `pending`.
   */
  /** The first status (review-policy.ts), from the account, the day's withdrawals and the security log, every amount exact. */
  private async initialStatus(em: EntityManager, account: PayoutAccount, payout: PayoutCoin, amount: Amount): Promise<ReviewDecision> {
    const fiat = account.default_fiat ?? this.deps.catalog.defaultFiat;
    const value = this.valued(payout.coin.ticker, amount, fiat);
    const limit = account.daily_withdrawal_limit === null ? null : Amount.of(account.daily_withdrawal_limit);
    const cap = this.deps.signerLimits[payout.coin.ticker];
    return reviewDecision({
      value,
      dualApprovalThreshold: account.dual_approval_threshold === null ? null : Amount.of(account.dual_approval_threshold),
      recentSecurityChange: (await this.securityChanges(em, account.id, this.deps.clock.now(), 1)).length > 0,
      dailyLimit: limit,
      dayValue: limit === null ? Amount.zero() : await this.dayValue(em, account.id, fiat, limit.minus(value)),
      signer: cap === undefined ? { value, cap: null } : { value: this.valued(payout.coin.ticker, amount, this.deps.catalog.defaultFiat), cap: Amount.of(cap) },
    });
  }

  /**
   * What the account's withdrawals of the last 24 hours that count toward its daily limit are worth
   * in `fiat`. First an upper bound that does not grow with the day's withdrawals: the exact
   * ten-minute totals since the one the window starts in (counted whole). When that is within
   * `room`, it decides as the exact value would; otherwise the day's withdrawals are summed exactly.
   */
  private async dayValue(em: EntityManager, accountId: string, fiat: string, room: Amount): Promise<Amount> {
    const p = (i: number) => placeholder(em, i);
    const since = iso(new Date(this.deps.clock.now().getTime() - REVIEW_TTL_MS));
    const inFiat = (rows: ReadonlyArray<{ coin_id: string; amount: string }>): Amount => {
      const perCoin = new Map<string, Amount>();
      for (const r of rows) perCoin.set(r.coin_id, (perCoin.get(r.coin_id) ?? Amount.zero()).plus(Amount.of(r.amount)));
      let total = Amount.zero();
      for (const [coinId, sum] of perCoin) {
        const ticker = this.deps.catalog.coin(coinId)?.ticker;
        if (ticker) total = total.plus(this.valued(ticker, sum, fiat));
      }
      return total;
    };
    const bound = inFiat(
      await rawQuery<{ coin_id: string; amount: string }>(
        em,
        `SELECT coin_id, total AS amount FROM withdrawal_day_totals WHERE account_id = ${p(1)} AND bucket >= ${p(2)}`,
        [accountId, dayBucket(since)],
      ),
    );
    if (bound.cmp(room) <= 0) return bound;
    return inFiat(
      await rawQuery<{ coin_id: string; amount: string }>(
        em,
        `SELECT coin_id, amount FROM withdrawals WHERE account_id = ${p(1)} AND created_at >= ${p(2)} AND status NOT IN ('cancelled', 'rejected', 'failed')`,
        [accountId, since],
      ),
    );
  }

  /** `amount` of the coin `ticker` in `fiat` at the current rate. */
  private valued(ticker: string, amount: Amount, fiat: string): Amount {
    return amount.times(this.deps.rates.rate(ticker, fiat).rate);
  }

  private async securityChanges(em: EntityManager, accountId: string, at: Date, limit?: number): Promise<string[]> {
    const p = (i: number) => placeholder(em, i);
    const rows = await rawQuery<{ actor: string }>(
      em,
      `SELECT actor FROM security_log WHERE account_id = ${p(1)} AND created_at >= ${p(2)} AND created_at <= ${p(3)}
       AND action IN (${PATTERN_ACTIONS.map((_, i) => p(i + 4)).join(', ')})${limit === undefined ? '' : ` LIMIT ${limit}`}`,
      [accountId, iso(new Date(at.getTime() - SECURITY_WINDOW_MS)), iso(at), ...PATTERN_ACTIONS],
    );
    return rows.map((r) => r.actor);
  }

  private async account(accountId: string): Promise<PayoutAccount> {
    const em = this.deps.store.read;
    const [a] = await rawQuery<PayoutAccount>(em, `SELECT ${ACCOUNT_SELECT} FROM accounts WHERE id = ${placeholder(em, 1)}`, [accountId]);
    if (!a) throw notFound('account');
    return { ...a, verified: Boolean(a.verified), withdrawal_whitelist_enforced: Boolean(a.withdrawal_whitelist_enforced) };
  }
}

/** What a creation hands the new row besides its account, coin and review decision. */
type NewWithdrawal = Pick<WithdrawalRow, 'payout_id' | 'to_address' | 'comment' | 'network_fee_mode' | 'api_key_id'> & {
  refund_id: string | null;
  amount: Amount;
  fees: WithdrawalFees;
};

/** A new withdrawal as stored: what its creation decided, the rest as none yet. */
function newWithdrawalRow(now: Date, accountId: string, coinId: string, initial: ReviewDecision, w: NewWithdrawal): WithdrawalRow {
  // One literal with every field in the entity's order: built by rest and spread, the row took
  // V8's slow path (about 10 % of a creation's CPU in the withdrawals benchmark).
  const at = iso(now);
  return {
    id: newTimeOrderedId(now.getTime()),
    account_id: accountId,
    status: initial.status,
    payout_id: w.payout_id,
    coin_id: coinId,
    amount: w.amount.toString(),
    to_address: w.to_address,
    comment: w.comment,
    review_reason: initial.reviewReason,
    txid: null,
    confirmations: 0,
    failure_reason: null,
    platform_fee: w.fees.platformFee.toString(),
    network_fee_reserved: w.fees.networkFee.toString(),
    network_fee_charged: null,
    network_fee_mode: w.network_fee_mode,
    total_debit: w.fees.total.toString(),
    api_key_id: w.api_key_id,
    decided_by: null,
    decided_at: null,
    signed_tx: null,
    candidate_txids: '[]',
    claimed_by: null,
    claimed_at: null,
    refund_id: w.refund_id,
    created_at: at,
    updated_at: at,
    completed_at: null,
  };
}

/** Where a withdrawal's held money goes once settled: the amount out, the platform's fee, the network's. */
function holdLegs(amount: Amount, fees: WithdrawalFees): Array<{ book: string; amount: Amount; code: string }> {
  return [
    { book: EXTERNAL_BOOK, amount, code: 'withdrawal' },
    { book: FEE_BOOK, amount: fees.platformFee, code: 'platform_fee' },
    { book: NETWORK_BOOK, amount: fees.networkFee, code: 'network_fee' },
  ].filter((l) => l.amount.isPositive());
}

/** Rule 7's comparison: values, not bytes (`0.10` equals `0.1`). */
function samePayment(w: WithdrawalRow, req: { coin_id: string; amount: Amount; to_address: string }): boolean {
  return w.coin_id === req.coin_id && Amount.of(w.amount).eq(req.amount) && w.to_address === req.to_address;
}

/** Runs `fn` again while a concurrent request wins a unique index first (a few times at most). */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err instanceof Raced || isUniqueViolation(err)) && attempt < 5) continue;
      throw err;
    }
  }
}
