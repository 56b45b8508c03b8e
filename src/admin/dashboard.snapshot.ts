import type { EntityManager } from 'typeorm';
import type { KeyService } from '../auth/key.service';
import type { Catalog } from '../catalog/coins';
import type { ChainCore } from '../chains/chain-core';
import type { Config } from '../config/schema';
import { placeholder, rawQuery } from '../db/raw';
import type { Store } from '../db/store';
import { accountBook, type Ledger } from '../ledger/ledger';
import type { Amount } from '../shared/amount';
import type { Clock } from '../shared/clock';
import type { LogTail } from '../shared/log-tail';
import type { LogLevel } from '../shared/logger';
import type { TeamService } from '../team/team.service';
import type {
  GasStationStatus,
  PayoutAlert,
  SignerStatusView,
  DashboardAccount,
  DashboardDelivery,
  DashboardEndpoint,
  DashboardInvoice,
  DashboardKey,
  DashboardOverview,
  DashboardPayment,
  DashboardRefunds,
  DashboardScreen,
  DashboardSnapshot,
  DashboardWithdrawal,
  DashboardWithdrawRequest,
} from './contract';

export interface DashboardDeps {
  config: Config;
  store: Store;
  team: TeamService;
  keys: KeyService;
  catalog: Catalog;
  chains: ChainCore;
  ledger: Ledger;
  logTail: LogTail;
  clock: Clock;
  startedAt: Date;
  /** The gas stations' last known balances and needs (none: no chain pays gas from one). */
  gasStations?: () => GasStationStatus[];
  /** The payouts to look at (stuck, being cancelled, reopened lately), of every account. */
  payoutAlerts?: () => Promise<PayoutAlert[]>;
  /** The signer's state (PRODUCT §18). */
  signer?: () => SignerStatusView;
  /** One account's invoices that need a refund decision and its open refunds (the refund service's, at most 50 each). */
  refunds?: (accountId: string) => Promise<{ decisions: DashboardRefunds['decisions']; open: DashboardRefunds['open'] }>;
  /** One account's cold storage: the coins it has a rule for, and per coin what its completed forwards sent. */
  cold?: (em: EntityManager, accountId: string) => Promise<{ rules: ReadonlySet<string>; totals: ReadonlyMap<string, Amount> }>;
}

/** How many rows a list screen shows: a 24-line terminal holds about this many. */
const ROWS = 15;
const OPEN_PAYOUTS = ['review', 'awaiting_approval', 'pending', 'processing', 'broadcast'];

/**
 * What `coinkeep dashboard` shows, read in one request a tick: the daemon's facts and the data of
 * the screen on view, for one account or every account (the operator's view). Every query is by
 * account on an index that starts with account_id, so an install with many invoices costs the
 * same per tick as a small one.
 */
export class DashboardSnapshots {
  constructor(private readonly deps: DashboardDeps) {}

  async read(screen: DashboardScreen, opts: { account?: string; level: LogLevel }): Promise<DashboardSnapshot> {
    const { deps } = this;
    const all = (await deps.team.listAccounts()).map((a): DashboardAccount => ({ id: a.id, name: a.name }));
    if (opts.account !== undefined) await deps.team.getAccount(opts.account);
    const accounts = opts.account === undefined ? all : all.filter((a) => a.id === opts.account);
    const ids = accounts.map((a) => a.id);
    const now = deps.clock.now();
    const snapshot: DashboardSnapshot = {
      at: now.toISOString(),
      daemon: {
        pid: process.pid,
        network: deps.config.network,
        database: deps.store.dialect,
        started_at: deps.startedAt.toISOString(),
        uptime_seconds: Math.floor((now.getTime() - deps.startedAt.getTime()) / 1000),
      },
      // Every account, whatever the scope: the dashboard names them and steps through them.
      accounts: all,
    };
    const em = deps.store.read;
    switch (screen) {
      case 'overview':
        snapshot.overview = await this.overview(em, ids, now);
        break;
      case 'payments':
        snapshot.payments = { invoices: await this.invoices(em, ids), payments: await this.payments(em, ids) };
        break;
      case 'approvals':
        snapshot.approvals = { withdraw_requests: await this.withdrawRequests(ids), withdrawals: await this.withdrawals(em, ids) };
        break;
      case 'webhooks':
        snapshot.webhooks = await this.webhooks(em, ids);
        break;
      case 'keys':
        snapshot.keys = { items: await this.keys(ids) };
        break;
      case 'log':
        snapshot.log = { lines: deps.logTail.tail(opts.level, 200) };
        break;
      case 'refunds':
        snapshot.refunds = await this.refunds(ids);
        break;
    }
    return snapshot;
  }

  private ticker(coinId: string): string | null {
    return this.deps.catalog.coin(coinId)?.ticker ?? null;
  }

  private async overview(em: EntityManager, ids: string[], now: Date): Promise<DashboardOverview> {
    const hourAgo = new Date(now.getTime() - 3600_000).toISOString();
    const p = (i: number) => placeholder(em, i);
    const invoices: Record<string, number> = {};
    const queue = { pending: 0, failing: 0, exhausted: 0 };
    const payouts: Record<string, number> = {};
    const balances: DashboardOverview['balances'] = [];
    const statuses = OPEN_PAYOUTS.map((_, i) => p(i + 2)).join(', ');
    for (const id of ids) {
      for (const r of await rawQuery<{ status: string; n: number | string }>(
        em,
        `SELECT status, COUNT(*) AS n FROM invoices WHERE account_id = ${p(1)} AND created_at >= ${p(2)} GROUP BY status`,
        [id, hourAgo],
      )) {
        invoices[r.status] = (invoices[r.status] ?? 0) + Number(r.n);
      }
      for (const r of await rawQuery<{ status: string; n: number | string }>(
        em,
        `SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE account_id = ${p(1)} AND status IN ('pending', 'failed', 'exhausted') GROUP BY status`,
        [id],
      )) {
        const key = r.status === 'failed' ? 'failing' : (r.status as 'pending' | 'exhausted');
        queue[key] += Number(r.n);
      }
      for (const r of await rawQuery<{ status: string; n: number | string }>(
        em,
        `SELECT status, COUNT(*) AS n FROM withdrawals WHERE account_id = ${p(1)} AND status IN (${statuses}) GROUP BY status`,
        [id, ...OPEN_PAYOUTS],
      )) {
        payouts[r.status] = (payouts[r.status] ?? 0) + Number(r.n);
      }
      const cold = await this.deps.cold?.(em, id);
      for (const b of await this.deps.ledger.balances(em, accountBook(id))) {
        const coldAmount = cold && (cold.rules.has(b.coin_id) || cold.totals.has(b.coin_id)) ? (cold.totals.get(b.coin_id)?.toString() ?? '0') : null;
        if (b.available.isZero() && b.hold.isZero() && coldAmount === null) continue;
        balances.push({
          account_id: id,
          coin_id: b.coin_id,
          ticker: this.ticker(b.coin_id),
          available: b.available.toString(),
          hold: b.hold.toString(),
          cold: coldAmount,
        });
      }
    }
    const alerts = ((await this.deps.payoutAlerts?.()) ?? []).filter((a) => ids.includes(a.account_id));
    return {
      chains: this.deps.chains.status(),
      fee_balances: this.deps.gasStations?.() ?? [],
      invoices_last_hour: invoices,
      balances,
      webhook_queue: queue,
      payout_queue: payouts,
      payout_alerts: alerts,
      ...(this.deps.signer ? { signer: this.deps.signer() } : {}),
    };
  }

  /** The newest rows of every account in view, merged newest first. */
  private async newest<T extends { created_at: string; id: string }>(ids: string[], one: (id: string) => Promise<T[]>): Promise<T[]> {
    const rows: T[] = [];
    for (const id of ids) rows.push(...(await one(id)));
    return rows.sort((a, b) => (a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at))).slice(0, ROWS);
  }

  private invoices(em: EntityManager, ids: string[]): Promise<DashboardInvoice[]> {
    return this.newest(ids, async (id) =>
      (
        await rawQuery<Omit<DashboardInvoice, 'ticker'> & { coin_id: string | null }>(
          em,
          `SELECT id, account_id, status, amount, currency, coin_id, amount_crypto, paid_amount, created_at FROM invoices WHERE account_id = ${placeholder(em, 1)} ORDER BY created_at DESC, id DESC LIMIT ${ROWS}`,
          [id],
        )
      ).map(({ coin_id, ...r }) => ({ ...r, ticker: coin_id ? this.ticker(coin_id) : null })),
    );
  }

  private payments(em: EntityManager, ids: string[]): Promise<DashboardPayment[]> {
    return this.newest(ids, async (id) =>
      (
        await rawQuery<Omit<DashboardPayment, 'ticker'> & { coin_id: string }>(
          em,
          `SELECT t.id, t.account_id, t.type, t.status, t.coin_id, t.amount, t.invoice_id, t.txid, t.created_at, c.confirmations
             FROM transactions t LEFT JOIN chain_transfers c ON c.id = t.chain_transfer_id
            WHERE t.account_id = ${placeholder(em, 1)} AND t.type IN ('invoice_payment', 'deposit')
            ORDER BY t.created_at DESC, t.id DESC LIMIT ${ROWS}`,
          [id],
        )
      ).map(({ coin_id, ...r }) => ({ ...r, confirmations: r.confirmations === null ? null : Number(r.confirmations), ticker: this.ticker(coin_id) })),
    );
  }

  private async withdrawRequests(ids: string[]): Promise<DashboardWithdrawRequest[]> {
    const out: DashboardWithdrawRequest[] = [];
    for (const id of ids) {
      for (const r of await this.deps.keys.withdrawRequests(id)) {
        out.push({
          account_id: id,
          key_id: r.key.key_id,
          key_name: r.key.name,
          requested_by: r.request?.requested_by ?? null,
          requested_at: r.request?.requested_at ?? null,
        });
      }
    }
    return out;
  }

  private async withdrawals(em: EntityManager, ids: string[]): Promise<DashboardWithdrawal[]> {
    const out: DashboardWithdrawal[] = [];
    for (const id of ids) {
      const rows = await rawQuery<Omit<DashboardWithdrawal, 'ticker'> & { coin_id: string }>(
        em,
        `SELECT id, account_id, status, amount, coin_id, to_address, review_reason, created_at FROM withdrawals WHERE account_id = ${placeholder(em, 1)} AND status IN ('review', 'awaiting_approval') ORDER BY created_at, id`,
        [id],
      );
      out.push(...rows.map(({ coin_id, ...r }) => ({ ...r, ticker: this.ticker(coin_id) })));
    }
    return out;
  }

  private async webhooks(em: EntityManager, ids: string[]): Promise<{ deliveries: DashboardDelivery[]; endpoints: DashboardEndpoint[] }> {
    const p = (i: number) => placeholder(em, i);
    const deliveries = await this.newest(ids, (id) =>
      rawQuery<DashboardDelivery>(
        em,
        `SELECT id, account_id, event_id, event_type, endpoint_id, url, status, attempts, next_attempt_at, last_response_status, last_error, created_at, updated_at
           FROM webhook_deliveries WHERE account_id = ${p(1)} AND status IN ('failed', 'exhausted') ORDER BY created_at DESC, id DESC LIMIT ${ROWS}`,
        [id],
      ),
    );
    const endpoints: DashboardEndpoint[] = [];
    for (const id of ids) {
      const rows = await rawQuery<DashboardEndpoint>(
        em,
        `SELECT id, account_id, url, enabled FROM webhook_endpoints WHERE account_id = ${p(1)} ORDER BY created_at, id`,
        [id],
      );
      endpoints.push(...rows.map((e) => ({ ...e, enabled: Boolean(e.enabled) })));
    }
    return { deliveries: deliveries.map((d) => ({ ...d, attempts: Number(d.attempts) })), endpoints };
  }

  /** Every account's in view, merged newest first, at most 50 of each list. */
  private async refunds(ids: string[]): Promise<DashboardRefunds> {
    const out: DashboardRefunds = { decisions: [], open: [] };
    if (!this.deps.refunds) return out;
    for (const id of ids) {
      const r = await this.deps.refunds(id);
      out.decisions.push(...r.decisions);
      out.open.push(...r.open);
    }
    const newestFirst = (a: { created_at: string }, b: { created_at: string }) => b.created_at.localeCompare(a.created_at);
    return { decisions: out.decisions.sort(newestFirst).slice(0, 50), open: out.open.sort(newestFirst).slice(0, 50) };
  }

  private async keys(ids: string[]): Promise<DashboardKey[]> {
    const out: DashboardKey[] = [];
    for (const id of ids) {
      const em = this.deps.store.read;
      const used = new Map(
        (
          await rawQuery<{ key_id: string; last_used_at: string | null }>(
            em,
            `SELECT key_id, last_used_at FROM api_keys WHERE account_id = ${placeholder(em, 1)}`,
            [id],
          )
        ).map((r) => [r.key_id, r.last_used_at]),
      );
      for (const k of await this.deps.keys.list(id)) {
        out.push({
          account_id: id,
          key_id: k.key_id,
          name: k.name,
          status: k.status,
          permissions: k.permissions,
          withdraw_status: k.withdraw_status,
          secret_last4: k.secret_last4,
          rotation_required: k.rotation_required,
          created_at: k.created_at,
          last_used_at: used.get(k.key_id) ?? null,
        });
      }
    }
    return out;
  }
}
