/**
 * The simulator's invariants (issue 34 §1), each with its own name: checked after every step (the
 * cheap ones) and in full once the chains are quiet (mining resumed, every withdrawal settled).
 */
import path from 'node:path';
import { availableOf, holdOf } from '../../src/ledger/balance';
import { Amount } from '../../src/shared/amount';
import { sleep } from '../helpers/cli';
import { TEST_MNEMONIC } from '../helpers/test-mnemonic';
import type { Simulation } from './simulator';

export type InvariantName =
  | 'ledger-verify'
  | 'reconcile'
  | 'paid-once'
  | 'completed-when-confirmed'
  | 'failed-not-mined'
  | 'balances-match-ledger'
  | 'events'
  | 'event-bodies-identical'
  | 'payout-id-once'
  | 'no-500'
  | 'no-secret-in-logs'
  | 'openapi'
  | 'daemon-alive';

export interface Violation {
  step: number;
  invariant: InvariantName;
  message: string;
}

/** The few calls of better-sqlite3 (it ships no types) the checks make: a read-only look at the daemon's database. */
interface ReadOnlyDb {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const openDb = require('better-sqlite3') as new (file: string, opts: { readonly: boolean; fileMustExist: boolean }) => ReadOnlyDb;

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'rejected']);

export class Invariants {
  checks = 0;
  readonly violations: Violation[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly sim: Simulation) {}

  violate(invariant: InvariantName, message: string): void {
    // One report per invariant and message: a broken state seen after every later step is one finding.
    const key = `${invariant}\u0000${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.violations.push({ step: this.sim.stepNo, invariant, message });
    this.sim.note(`VIOLATION ${invariant}: ${message}`);
  }

  private db<T>(read: (db: ReadOnlyDb) => T): T {
    const db = new openDb(path.join(this.sim.world.env.dataDir, 'coinkeep.db'), { readonly: true, fileMustExist: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  }

  async afterStep(): Promise<void> {
    await this.ledgerVerify();
    await this.balances(this.sim.rng.int(0, this.sim.merchants.length - 1));
    this.eventBodies();
    this.checks++; // no-500 and the OpenAPI contract: every answer of the step was checked as it came
  }

  /** `coinkeep ledger verify`: the journal and the cached balances agree, every entry is sound. */
  async ledgerVerify(): Promise<void> {
    this.checks++;
    const r = await this.sim.world.env.run(['--json', 'ledger', 'verify'], { timeoutMs: 60_000 });
    if (r.code === 0 && r.json?.ok) return;
    if (!this.sim.world.alive()) return;
    this.violate('ledger-verify', `ledger verify: ${(r.stdout + r.stderr).trim().slice(0, 400)}`);
  }

  /** Every balance GET /v1/balances shows equals the ledger's book of the account (read again on a difference: the daemon runs on). */
  async balances(m: number): Promise<void> {
    this.checks++;
    const accountId = this.sim.merchants[m]!.accountId;
    let last = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const res = await this.sim.api(m, 'GET', '/v1/balances');
      if (!res || res.status !== 200) return;
      const rows = this.db((db) =>
        db
          .prepare('SELECT coin_id, debits_posted, credits_posted, debits_pending, credits_pending FROM ledger_balances WHERE book = ?')
          .all(`account:${accountId}`),
      ) as Array<Record<string, string>>;
      const diffs: string[] = [];
      for (const item of res.json.items as Array<{ coin_id: string; available: string; hold: string }>) {
        const row = rows.find((r) => r.coin_id === item.coin_id);
        const sums = row
          ? {
              debits_posted: Amount.of(row.debits_posted!),
              credits_posted: Amount.of(row.credits_posted!),
              debits_pending: Amount.of(row.debits_pending!),
              credits_pending: Amount.of(row.credits_pending!),
            }
          : null;
        const available = sums ? availableOf(sums) : Amount.zero();
        const hold = sums ? holdOf(sums) : Amount.zero();
        if (!available.eq(Amount.of(item.available)) || !hold.eq(Amount.of(item.hold)))
          diffs.push(`${item.coin_id}: API ${item.available}/${item.hold}, ledger ${available.toString()}/${hold.toString()}`);
        if (Amount.of(item.hold).isNegative()) diffs.push(`${item.coin_id}: a negative hold ${item.hold}`);
      }
      if (diffs.length === 0) return;
      last = diffs.join('; ');
      await sleep(200);
    }
    this.violate('balances-match-ledger', `merchant ${m}: ${last}`);
  }

  /** Every delivery of one event_id carries the same body. */
  eventBodies(): void {
    this.checks++;
    const bodies = new Map<string, string>();
    for (const r of this.sim.world.sink.requests) {
      let id: string | undefined;
      try {
        id = (JSON.parse(r.body.toString('utf8')) as { event_id?: string }).event_id;
      } catch {
        continue;
      }
      if (!id) continue;
      const body = r.body.toString('utf8');
      const before = bodies.get(id);
      if (before !== undefined && before !== body) this.violate('event-bodies-identical', `event ${id} delivered with two different bodies`);
      bodies.set(id, body);
    }
  }

  /**
   * The full check once the chains are quiet: mining resumes until every withdrawal the run made is
   * settled (or a bound passes), then reconcile, the withdrawals against the chain, the events and
   * the logs. At the end (`final`) every event must also have reached the endpoints that always answered 2xx.
   */
  async quiet(final = false): Promise<void> {
    const sim = this.sim;
    sim.note(`quiet check${final ? ' (final)' : ''}`);
    const deadline = Date.now() + 60_000;
    let open: string[] = [];
    for (;;) {
      await sim.reviveIfGone();
      open = [];
      const ids = new Set(sim.withdrawals.map((w) => w.id));
      for (let m = 0; m < sim.merchants.length; m++) {
        for (const [id, w] of (await sim.withdrawalsOf(m)) ?? []) if (ids.has(id) && !TERMINAL.has(w.status)) open.push(`${id} ${w.status}`);
      }
      if (open.length === 0 || Date.now() > deadline) break;
      await sim.mine(1);
      await sleep(600);
    }
    if (open.length > 0) sim.note(`quiet: still open after 60 s: ${open.join(', ')}`);
    await sim.mine(3);
    await sleep(2000);
    await this.ledgerVerify();
    await this.reconcile();
    await this.withdrawalsOnChain();
    await this.events(final);
    for (let m = 0; m < sim.merchants.length; m++) await this.balances(m);
    this.secrets();
  }

  async reconcile(): Promise<void> {
    this.checks++;
    const r = await this.sim.world.env.run(['--json', 'ledger', 'reconcile'], { timeoutMs: 60_000 });
    if (r.code === 0 && r.json?.ok) return;
    let detail = (r.stdout + r.stderr).trim();
    try {
      const report = JSON.parse(r.stdout) as { coins: Array<Record<string, unknown>> };
      detail = JSON.stringify(report.coins.filter((c) => c.ok === false || c.status === 'mismatch' || c.difference !== '0'));
    } catch {
      /* not JSON: the raw output says it */
    }
    this.violate('reconcile', `ledger reconcile: ${detail.slice(0, 600)}`);
  }

  /** Every withdrawal paid on chain at most once; completed only with its payment confirmed; none failed with its transaction mined. */
  async withdrawalsOnChain(): Promise<void> {
    const sim = this.sim;
    const { tip, byAddress, mined } = await sim.chainView.payments();
    const conf = sim.btc.confirmations;
    const listed = await Promise.all(sim.merchants.map((_, m) => sim.withdrawalsOf(m)));
    for (const w of sim.withdrawals) {
      this.checks++;
      const pays = byAddress.get(w.to) ?? [];
      const txids = new Set(pays.map((p) => p.txid));
      if (txids.size > 1)
        this.violate('paid-once', `withdrawal ${w.id || '(answer lost to a kill)'} to ${w.to} paid by ${txids.size} transactions: ${[...txids].join(', ')}`);
      const found = w.id ? listed[w.merchant]?.get(w.id) : undefined;
      if (!found) continue;
      const { status, txid } = found;
      const at = txid ? mined.get(txid) : undefined;
      const deep = at !== undefined && tip - at + 1 >= conf;
      if (status === 'completed' && !deep)
        this.violate(
          'completed-when-confirmed',
          `withdrawal ${w.id} completed, its transaction ${txid} ${at === undefined ? 'is not on the best chain' : `has ${tip - at + 1} confirmations`}`,
        );
      const paidDeep = pays.some((p) => tip - p.height + 1 >= conf);
      if (paidDeep && TERMINAL.has(status) && status !== 'completed')
        this.violate(
          'completed-when-confirmed',
          `withdrawal ${w.id} is ${status}, yet ${w.to} was paid by ${pays.map((p) => p.txid).join(', ')} with the confirmations`,
        );
      if (status === 'failed' && (at !== undefined || pays.length > 0))
        this.violate('failed-not-mined', `withdrawal ${w.id} failed while its transaction is mined`);
    }
  }

  /** Each paid invoice has its invoice.paid event; at the end, each event reached every endpoint that always answered 2xx. */
  async events(final: boolean): Promise<void> {
    const sim = this.sim;
    for (let m = 0; m < sim.merchants.length; m++) {
      const res = await sim.api(m, 'GET', '/v1/invoices?status=paid&limit=100');
      if (res?.status !== 200) continue;
      const ids = (res.json.items as Array<{ id: string }>).map((i) => i.id);
      const withEvent = new Set(
        this.db(
          (db) =>
            db.prepare(`SELECT object_id FROM events WHERE type = 'invoice.paid' AND account_id = ?`).all(sim.merchants[m]!.accountId) as Array<{
              object_id: string;
            }>,
        ).map((r) => r.object_id),
      );
      for (const id of ids) {
        this.checks++;
        if (!withEvent.has(id)) this.violate('events', `invoice ${id} is paid and has no invoice.paid event`);
      }
    }
    if (!final) return;
    const steady = sim.endpoints.filter((e) => e.behaviour === 'ok' && !sim.flipped.has(e.path));
    for (const e of steady) {
      const expected = this.db(
        (db) =>
          db.prepare('SELECT id FROM events WHERE account_id = ? AND created_at > ?').all(sim.merchants[e.merchant]!.accountId, e.createdAt) as Array<{
            id: string;
          }>,
      ).map((r) => r.id);
      const deadline = Date.now() + 20_000;
      let missing: string[] = [];
      for (;;) {
        const got = new Set(
          sim.world.sink.at(e.path).map((r) => {
            try {
              return (JSON.parse(r.body.toString('utf8')) as { event_id: string }).event_id;
            } catch {
              return '';
            }
          }),
        );
        missing = expected.filter((id) => !got.has(id));
        if (missing.length === 0 || Date.now() > deadline) break;
        await sleep(250);
      }
      this.checks++;
      if (missing.length > 0) this.violate('events', `endpoint ${e.path} never received ${missing.length} of ${expected.length} events (first ${missing[0]})`);
    }
  }

  /** No key secret, webhook secret or the wallet's words in any daemon log line. */
  secrets(): void {
    this.checks++;
    const sim = this.sim;
    const secrets = [...sim.merchants.map((m) => m.secret), ...sim.endpoints.map((e) => e.secret).filter(Boolean), TEST_MNEMONIC];
    for (const text of sim.world.logs()) {
      for (const line of text.split('\n')) {
        const s = secrets.find((x) => x && line.includes(x));
        if (s) this.violate('no-secret-in-logs', `a log line holds a secret (…${s.slice(-4)}): ${line.replace(s, '<secret>').slice(0, 200)}`);
      }
    }
  }
}
