/**
 * The simulator's invariants (issue 34 §1), each with its own name: checked after every step (the
 * cheap ones) and in full once the chains are quiet (mining resumed, every withdrawal settled).
 */
import path from 'node:path';
import { availableOf, holdOf } from '../../src/ledger/balance';
import { Amount } from '../../src/shared/amount';
import { Client } from 'pg';
import { sleep } from '../helpers/cli';
import { adminRequest } from '../helpers/admin-socket';
import { TEST_MNEMONIC } from '../helpers/test-mnemonic';
import type { InvoiceRec, Simulation, WithdrawalRec } from './simulator';
import type { SimCoin } from './world';
import type { MinedPayment } from './chain-view';
import type { TronNode, TronTxInfo } from '../helpers/tron-node';

/** The stand-in's info of a transaction on its chain now (null when not mined, or dropped by a reorganisation). */
function tronInfo(node: TronNode, txid: string): TronTxInfo | null {
  try {
    return node.info(txid.replace(/^0x/, '')) ?? null;
  } catch {
    return null;
  }
}

/** A mined Tron transaction that did what it says (a TRX transfer, or a token call that succeeded). */
const tronSucceeded = (info: TronTxInfo): boolean => info.result !== 'FAILED' && (info.receipt.result === undefined || info.receipt.result === 'SUCCESS');

interface ChainPicture {
  /** How many payments reached the payee (EVM: 2 stands for more than the amount). */
  times: number;
  paid: string;
  paidDeep: boolean;
  txMined: boolean;
  txDeep: boolean;
  txState: string;
}
import { SPENT_BY_ANOTHER } from '../../src/payouts/payout-worker';

export type InvariantName =
  | 'ledger-verify'
  | 'reconcile'
  | 'paid-once'
  | 'completed-when-confirmed'
  | 'failed-not-mined'
  | 'broadcast-held'
  | 'invoice-status'
  | 'stray-recorded'
  | 'stray-credited-only-when-asked'
  | 'stray-credited-once'
  | 'frozen-no-payout'
  | 'balances-match-ledger'
  | 'events'
  | 'deposits'
  | 'no-secret-in-errors'
  | 'event-bodies-identical'
  | 'payout-id-once'
  | 'no-500'
  | 'no-secret-in-logs'
  | 'openapi'
  | 'daemon-alive';

/** A wrong thing one read of the daemon found, under the invariant it breaks. */
type Finding = { invariant: InvariantName; message: string };

/** Where a payment the simulator sent is on its chain now: blocks deep, waiting in the pool, or gone. */
type Depths = (coin: SimCoin, txid: string) => Promise<number | 'waiting' | 'gone'>;

export interface Violation {
  step: number;
  invariant: InvariantName;
  message: string;
}

/** The few calls of better-sqlite3 (it ships no types) the checks make: a read-only look at the daemon's SQLite database. */
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

  /** A read of the daemons' database (`?` placeholders): the SQLite file read-only, or the PostgreSQL database they share. */
  private async query<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    const pg = this.sim.world.pg;
    if (pg) {
      let i = 0;
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      try {
        return (
          await client.query(
            sql.replace(/\?/g, () => `$${++i}`),
            params,
          )
        ).rows as T[];
      } finally {
        await client.end();
      }
    }
    const db = new openDb(path.join(this.sim.world.env.dataDir, 'coinkeep.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }

  async afterStep(): Promise<void> {
    await this.ledgerVerify(false);
    await this.frozenUnpaid();
    await this.balances(this.sim.rng.int(0, this.sim.merchants.length - 1));
    this.eventBodies();
    this.checks++; // no-500 and the OpenAPI contract: every answer of the step was checked as it came
  }

  /**
   * `coinkeep ledger verify`: the journal and the cached balances agree, every entry is sound. After
   * each step the CLI's own request to the admin socket is made from this process (a CLI process a
   * step is most of a step's time on two cores); the quiet checks run the CLI itself.
   */
  async ledgerVerify(cli = true): Promise<void> {
    this.checks++;
    if (!cli) {
      const r = await adminRequest(this.sim.world.cli().dataDir, 'GET', '/admin/ledger/verify').catch(() => null);
      if (!r || !this.sim.world.alive() || (r.status === 200 && r.body?.ok)) return;
      this.violate('ledger-verify', `ledger verify: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
      return;
    }
    const r = await this.sim.world.cli().run(['--json', 'ledger', 'verify'], { timeoutMs: 60_000 });
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
      const rows = await this.query<Record<string, string>>(
        'SELECT coin_id, debits_posted, credits_posted, debits_pending, credits_pending FROM ledger_balances WHERE book = ?',
        `account:${accountId}`,
      );
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

  /** No withdrawal of a frozen merchant claimed for a payout after its freeze was answered (PRODUCT §14: they wait). */
  async frozenUnpaid(): Promise<void> {
    for (const [m, since] of this.sim.frozen) {
      this.checks++;
      const rows = await this.query<{ id: string; status: string; claimed_at: string }>(
        'SELECT id, status, claimed_at FROM withdrawals WHERE account_id = ? AND claimed_at > ?',
        this.sim.merchants[m]!.accountId,
        since,
      );
      for (const r of rows)
        this.violate(
          'frozen-no-payout',
          `withdrawal ${r.id} of frozen merchant ${m} (frozen at ${since}) claimed for a payout at ${r.claimed_at} (${r.status})`,
        );
    }
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
    // The chains are quiet on healthy nodes: every provider fault is cleared first.
    await sim.clearProviderFaults(true);
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
    // That mining may have let a daemon armed at a payout checkpoint reach it: checked on a running one.
    await sim.reviveIfGone();
    // Quiet means the daemon has scanned every chain to its node's tip (a reorganisation just made
    // is scanned only then): the node's balances are read at the tip, the books at the scan.
    await this.scannedToTips(30_000);
    await this.ledgerVerify();
    // The withdrawals against the chain before reconcile: a payout's bug is named by the invariant it breaks, not only by the books it moves.
    await this.withdrawalsOnChain();
    await this.broadcastHeld();
    await this.reconcile();
    await this.events(final);
    // Where the simulator's payments are on the chains, read once for both checks.
    const depth = await this.depths();
    await this.invoiceStatuses(depth);
    await this.deposits(depth);
    await this.strays();
    for (let m = 0; m < sim.merchants.length; m++) await this.balances(m);
    this.secrets();
  }

  /** Waits (at most `ms`) until `coinkeep status` shows every chain scanned to its node's tip; a note when it does not. */
  private async scannedToTips(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    let behind = '';
    for (;;) {
      const r = await this.sim.world.cli().run(['--json', 'status'], { timeoutMs: 30_000 });
      const chains = (r.json?.chains ?? []) as Array<{ chain_id: string; node_tip: number | null; scanned_height: number | null }>;
      behind = chains
        .filter((c) => c.node_tip === null || c.scanned_height === null || c.scanned_height < c.node_tip)
        .map((c) => `${c.chain_id} ${c.scanned_height}/${c.node_tip}`)
        .join(', ');
      if (r.code === 0 && chains.length > 0 && behind === '') return;
      if (Date.now() > deadline) return this.sim.note(`quiet: not scanned to the tips after ${ms / 1000} s: ${behind || (r.stderr || r.stdout).slice(0, 200)}`);
      await sleep(500);
    }
  }

  async reconcile(): Promise<void> {
    this.checks++;
    for (let attempt = 1; ; attempt++) {
      const r = await this.sim.world.cli().run(['--json', 'ledger', 'reconcile'], { timeoutMs: 60_000 });
      if (r.code === 0 && r.json?.ok) {
        // Clean only counts if the wrong network's coins were reconciled too.
        const lines = (r.json.coins ?? []) as Array<{ chain_id: string; ticker: string }>;
        for (const c of this.sim.world.wrongCoins)
          if (!lines.some((l) => l.chain_id === c.network && l.ticker === c.ticker))
            this.violate('reconcile', `ledger reconcile has no line for ${c.ticker} on ${c.network}`);
        return;
      }
      // The daemon killed itself at a payout checkpoint meanwhile: the next quiet check asks again.
      if (!this.sim.world.alive()) return;
      let detail = (r.stdout + r.stderr).trim();
      let unanswered = false;
      try {
        const report = JSON.parse(r.stdout) as { coins: Array<Record<string, unknown>> };
        const bad = report.coins.filter((c) => c.ok === false || c.status === 'mismatch' || c.difference !== '0');
        detail = JSON.stringify(bad);
        // A node that did not answer in time (the stand-in shares the simulator's busy process) proves no books wrong: asked again.
        unanswered = bad.length > 0 && bad.every((c) => c.status === 'unavailable');
      } catch {
        /* not JSON: the raw output says it */
      }
      if (!unanswered) return this.violate('reconcile', `ledger reconcile: ${detail.slice(0, 600)}`);
      if (attempt >= 3) return this.sim.note(`reconcile: a node did not answer three times, left for the next quiet check: ${detail.slice(0, 300)}`);
      await sleep(1000);
    }
  }

  /** Every withdrawal paid on chain at most once; completed only with its payment confirmed; none failed with its transaction mined. */
  async withdrawalsOnChain(): Promise<void> {
    const sim = this.sim;
    const { tip, byAddress, mined } = await sim.chainView.payments();
    const evmTip = await sim.world.evm.blockNumber();
    const listed = await Promise.all(sim.merchants.map((_, m) => sim.withdrawalsOf(m)));
    const failedAs = new Map<string, string>();
    for (const e of await this.query<{ object_id: string; body: string }>(`SELECT object_id, body FROM events WHERE type = 'withdrawal.failed'`)) {
      const reason = (JSON.parse(e.body) as { data?: { withdrawal?: { failure_reason?: string } } }).data?.withdrawal?.failure_reason ?? '';
      if (reason !== SPENT_BY_ANOTHER) failedAs.set(e.object_id, reason);
    }
    for (const w of sim.withdrawals) {
      this.checks++;
      const found = w.id ? listed[w.merchant]?.get(w.id) : undefined;
      const chain =
        w.coin.ticker === 'BTC'
          ? this.btcPicture(w, found?.txid ?? null, tip, byAddress, mined)
          : w.coin.network === 'tron'
            ? this.tronPicture(w, found?.txid ?? null)
            : await this.evmPicture(w, found?.txid ?? null, evmTip);
      if (chain.times > 1) this.violate('paid-once', `withdrawal ${w.id || '(answer lost to a kill)'} of ${w.coin.ticker} to ${w.to} paid ${chain.paid}`);
      if (!found) continue;
      const { status, txid } = found;
      if (status === 'completed' && !chain.txDeep)
        this.violate('completed-when-confirmed', `withdrawal ${w.id} completed, its transaction ${txid} ${chain.txState}`);
      if (chain.paidDeep && TERMINAL.has(status) && status !== 'completed')
        this.violate('completed-when-confirmed', `withdrawal ${w.id} is ${status}, yet ${w.to} was paid ${chain.paid} with the confirmations`);
      if (status === 'failed' && (chain.txMined || chain.times > 0))
        this.violate('failed-not-mined', `withdrawal ${w.id} failed while its transaction is mined`);
      // A failure is final for the merchant (they may pay again): one told "failed" on a proof
      // other than a rival spend (which a reorganisation deeper than the confirmations can undo)
      // must never be paid, even if the daemon reopened it since.
      const told = failedAs.get(w.id);
      if (told !== undefined && status !== 'failed' && chain.times > 0)
        this.violate('failed-not-mined', `withdrawal ${w.id} was failed ("${told}") and its payee was paid ${chain.paid} (now ${status})`);
    }
  }

  /**
   * Once the chains are quiet, a withdrawal still `broadcast` is waiting for a block, nothing else:
   * its transaction is in bcoin's mempool or on the best chain short of the confirmations (the
   * daemon hands one that left the mempool to the node again, and the harness's reorganisations put
   * every transaction back as Bitcoin Core does, so none loses its inputs: `broadcast-held`), and
   * one with the confirmations on any chain is `completed` (`completed-when-confirmed`). The daemon
   * gets a few seconds to scan the blocks just mined and to send a replacement it just signed.
   */
  async broadcastHeld(): Promise<void> {
    const sim = this.sim;
    const deadline = Date.now() + 20_000;
    let found: Array<{ invariant: InvariantName; message: string }> = [];
    for (;;) {
      // A daemon that killed itself at a payout checkpoint moves nothing: the next quiet check asks again.
      if (!sim.world.alive()) return;
      found = [];
      const { tip, byAddress, mined } = await sim.chainView.payments();
      const pool = new Set(await sim.world.btc.mempool());
      const evmTip = await sim.world.evm.blockNumber();
      const listed = await Promise.all(sim.merchants.map((_, m) => sim.withdrawalsOf(m)));
      for (const w of sim.withdrawals) {
        const now = w.id ? listed[w.merchant]?.get(w.id) : undefined;
        if (now?.status !== 'broadcast' || !now.txid) continue;
        const chain =
          w.coin.ticker === 'BTC'
            ? this.btcPicture(w, now.txid, tip, byAddress, mined)
            : w.coin.network === 'tron'
              ? this.tronPicture(w, now.txid)
              : await this.evmPicture(w, now.txid, evmTip);
        if (chain.txDeep)
          found.push({ invariant: 'completed-when-confirmed', message: `withdrawal ${w.id} is broadcast, its transaction ${now.txid} ${chain.txState}` });
        else if (w.coin.ticker === 'BTC' && !chain.txMined && !pool.has(now.txid))
          found.push({
            invariant: 'broadcast-held',
            message: `withdrawal ${w.id} is broadcast, its transaction ${now.txid} neither in bcoin's mempool nor on the best chain`,
          });
      }
      if (found.length === 0 || Date.now() > deadline) break;
      await sleep(1000);
    }
    this.checks++;
    for (const f of found) this.violate(f.invariant, f.message);
  }

  /** What bcoin's best chain shows of a withdrawal: the transactions paying its payee, and its own txid's depth. */
  private btcPicture(w: WithdrawalRec, txid: string | null, tip: number, byAddress: Map<string, MinedPayment[]>, mined: Map<string, number>): ChainPicture {
    const conf = this.sim.btc.confirmations;
    const pays = byAddress.get(w.to) ?? [];
    const txids = [...new Set(pays.map((p) => p.txid))];
    const at = txid ? mined.get(txid) : undefined;
    return {
      times: txids.length,
      paid: `by ${txids.length} transaction(s): ${txids.join(', ')}`,
      paidDeep: pays.some((p) => tip - p.height + 1 >= conf),
      txMined: at !== undefined,
      txDeep: at !== undefined && tip - at + 1 >= conf,
      txState: at === undefined ? 'is not on the best chain' : `has ${tip - at + 1} confirmations`,
    };
  }

  /** What anvil shows of a withdrawal: the payee's balance (a fresh address: what the withdrawal paid it) and its txid's receipt. */
  private async evmPicture(w: WithdrawalRec, txid: string | null, tip: number): Promise<ChainPicture> {
    const evm = this.sim.world.evm;
    const conf = w.coin.confirmations;
    const balance =
      w.coin.ticker === 'ETH'
        ? BigInt(await evm.rpc<string>('eth_getBalance', [w.to, 'latest']))
        : BigInt(
            (await evm.rpc<string>('eth_call', [{ to: this.sim.world.usdt, data: `0x70a08231${w.to.slice(2).toLowerCase().padStart(64, '0')}` }, 'latest'])) ||
              '0x0',
          );
    const amount = Amount.of(w.amount).toBaseUnits(w.coin.decimals);
    const receipt = txid ? await evm.rpc<{ blockNumber: string; status: string } | null>('eth_getTransactionReceipt', [txid]) : null;
    const depth = receipt ? tip - Number(receipt.blockNumber) + 1 : 0;
    // Every block of the payee's balance is deep at a quiet check (three blocks mined on top).
    return {
      times: balance === 0n ? 0 : balance > amount ? 2 : 1,
      paid: `${balance} base units for an amount of ${amount}`,
      paidDeep: balance > 0n,
      txMined: receipt !== null && Number(receipt.status) === 1,
      txDeep: receipt !== null && Number(receipt.status) === 1 && depth >= conf,
      txState: receipt === null ? 'has no receipt on the best chain' : `has ${depth} confirmations (status ${receipt.status})`,
    };
  }

  /** What the Tron stand-in shows of a withdrawal: the payee's TRX or token balance (a fresh address: what the withdrawal paid it) and its txid's info. */
  private tronPicture(w: WithdrawalRec, txid: string | null): ChainPicture {
    const tron = this.sim.world.tron;
    const balance = w.coin.ticker === 'TRX' ? tron.trxBalance(w.to) : tron.tokenBalance(w.to);
    const amount = Amount.of(w.amount).toBaseUnits(w.coin.decimals);
    const info = txid ? tronInfo(tron, txid) : null;
    const ok = info !== null && tronSucceeded(info);
    const depth = info ? tron.height - info.blockNumber + 1 : 0;
    // Every block of the payee's balance is deep at a quiet check (three blocks mined on top).
    return {
      times: balance === 0n ? 0 : balance > amount ? 2 : 1,
      paid: `${balance} base units for an amount of ${amount}`,
      paidDeep: balance > 0n,
      txMined: ok,
      txDeep: ok && depth >= w.coin.confirmations,
      txState:
        info === null
          ? 'is not on the best chain'
          : `has ${depth} confirmations (${info.result ?? 'ok'}${info.receipt.result ? ` ${info.receipt.result}` : ''})`,
    };
  }

  private async deliveriesOf(endpointId: string, eventIds: string[]) {
    if (eventIds.length === 0) return [];
    return this.query<{ status: string; attempts: number; next_attempt_at: string | null; last_response_status: number | null; last_error: string | null }>(
      `SELECT status, attempts, next_attempt_at, last_response_status, last_error FROM webhook_deliveries WHERE endpoint_id = ? AND event_id IN (${eventIds.map(() => '?').join(', ')})`,
      endpointId,
      ...eventIds,
    );
  }

  /** Each paid invoice has its invoice.paid event; at the end, each event reached every endpoint that always answered 2xx. */
  async events(final: boolean): Promise<void> {
    const sim = this.sim;
    for (let m = 0; m < sim.merchants.length; m++) {
      const res = await sim.api(m, 'GET', '/v1/invoices?status=paid&limit=100');
      if (res?.status !== 200) continue;
      const ids = (res.json.items as Array<{ id: string }>).map((i) => i.id);
      const withEvent = new Set(
        (
          await this.query<{ object_id: string }>(`SELECT object_id FROM events WHERE type = 'invoice.paid' AND account_id = ?`, sim.merchants[m]!.accountId)
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
      const expected = (
        await this.query<{ id: string }>('SELECT id FROM events WHERE account_id = ? AND created_at > ?', sim.merchants[e.merchant]!.accountId, e.createdAt)
      ).map((r) => r.id);
      // 20 s for what is due now; a delivery whose attempt failed (a kill mid-POST, an attempt timed
      // out under load) is waited for until its retry is due, up to 3 minutes.
      let deadline = Date.now() + 20_000;
      const limit = Date.now() + 180_000;
      let missing: string[] = [];
      let extended = false;
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
        if (missing.length === 0) break;
        if (Date.now() > deadline) {
          if (extended) break;
          extended = true;
          const due = (await this.deliveriesOf(e.id, missing))
            .filter((d) => d.next_attempt_at !== null && d.status !== 'succeeded' && d.status !== 'exhausted')
            .map((d) => new Date(String(d.next_attempt_at)).getTime());
          if (due.length === 0) break;
          deadline = Math.min(limit, Math.max(...due) + 15_000);
        }
        await sleep(250);
      }
      this.checks++;
      if (missing.length > 0) {
        const rows = await this.deliveriesOf(e.id, missing.slice(0, 1));
        const state =
          rows.length === 0
            ? 'no delivery row'
            : rows
                .map((d) => `delivery ${d.status}, ${d.attempts} attempts, next ${d.next_attempt_at}, last ${d.last_response_status ?? d.last_error ?? '-'}`)
                .join('; ');
        this.violate('events', `endpoint ${e.path} never received ${missing.length} of ${expected.length} events (first ${missing[0]}: ${state})`);
      }
    }
  }

  /**
   * Every invoice's status equals the one the simulator recomputes from what it paid the invoice
   * and what is on each chain's best chain now (reorganisations remove payments): enough (within
   * the invoice's tolerance) deep → paid; something deep → underpaid; nothing → new, or expired past
   * its TTL. Invoices with a payment still shallow or waiting, or sent near their TTL, are left for
   * a later check.
   */
  /**
   * The daemon may be a scan behind the chains: what `read` finds wrong is read again (four reads,
   * a second apart) before it counts. `read` is told whether this is its first read (a check counts
   * once) and answers null when the daemon did not answer (nothing concluded; false is returned).
   */
  private async readAgain(read: (first: boolean) => Promise<Finding[] | null>): Promise<boolean> {
    let found: Finding[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) await sleep(1000);
      const got = await read(attempt === 0);
      if (got === null) return false;
      found = got;
      if (found.length === 0) return true;
    }
    for (const f of found) this.violate(f.invariant, f.message);
    return true;
  }

  /** How deep a payment the simulator sent is on its chain's best chain now: blocks, waiting in the pool, or gone. */
  private async depths(): Promise<Depths> {
    const sim = this.sim;
    const btc = await sim.chainView.payments();
    const mempool = new Set(await sim.world.btc.rpc.call<string[]>('getrawmempool', []));
    const evmTip = await sim.world.evm.blockNumber();
    return async (coin, txid) => {
      if (coin.ticker === 'BTC') {
        const h = btc.mined.get(txid);
        if (h !== undefined) return btc.tip - h + 1;
        return mempool.has(txid) ? 'waiting' : 'gone';
      }
      if (coin.network === 'tron') {
        const info = tronInfo(sim.world.tron, txid);
        if (info) return tronSucceeded(info) ? sim.world.tron.height - info.blockNumber + 1 : 'gone';
        return sim.world.tron.pendingTxids().includes(txid) ? 'waiting' : 'gone';
      }
      const receipt = await sim.world.evm.rpc<{ blockNumber: string; status: string } | null>('eth_getTransactionReceipt', [txid]);
      if (!receipt) return 'gone';
      if (Number(receipt.status) !== 1) return 'gone';
      return evmTip - Number(receipt.blockNumber) + 1;
    };
  }

  async invoiceStatuses(depth: Depths): Promise<void> {
    const sim = this.sim;
    const depthOf = (inv: InvoiceRec, txid: string) => depth(inv.coin, txid);
    const tolerance = new Map(
      (await this.query<{ id: string; tolerance_percent: string }>('SELECT id, tolerance_percent FROM invoices')).map((r) => [r.id, r.tolerance_percent]),
    );
    // By invoice: its status, and whether a payment after its TTL is deep (then late_payment is true).
    const expected = new Map<string, { status: string; late: boolean }>();
    const now = Date.now();
    for (const inv of sim.invoices) {
      const ttl = Date.parse(inv.ttl);
      // Which side of the TTL the daemon saw a payment sent near it on is a race: left out.
      if (inv.pays.some((p) => Math.abs(p.sentAt - ttl) < 60_000)) continue;
      if (inv.pays.length === 0 && Math.abs(now - ttl) < 60_000) continue;
      let deep = Amount.zero();
      let unsettled = false;
      let late = false;
      for (const p of inv.pays) {
        const d = await depthOf(inv, p.txid);
        if (p.sentAt > ttl) {
          // After expiry (or after a final underpayment): it changes no status, and marks the invoice late once confirmed.
          if (typeof d === 'number' && d >= inv.coin.confirmations) late = true;
          continue;
        }
        if (d === 'gone') continue;
        if (d === 'waiting' || d < inv.coin.confirmations) unsettled = true;
        else deep = deep.plus(Amount.of(p.amount));
      }
      if (unsettled) continue;
      const due = Amount.of(inv.due);
      const tol = Amount.of(tolerance.get(inv.id) ?? '0');
      const enough = deep.isPositive() && deep.times('100').gte(due.times(Amount.of('100').minus(tol)));
      // A paid invoice's later payments are `late` in the simulator's words, but not late_payment's (it names funds after expiry, cancel or a final underpayment).
      expected.set(inv.id, { status: enough ? 'paid' : deep.isPositive() ? 'underpaid' : now > ttl ? 'expired' : 'new', late: late && !enough });
    }
    await this.readAgain(async (first) => {
      const found: Finding[] = [];
      for (let m = 0; m < sim.merchants.length; m++) {
        if (sim.frozen.has(m)) continue;
        const statuses = await sim.invoicesOf(m);
        if (!statuses) continue;
        for (const [id, got] of statuses) {
          const want = expected.get(id);
          if (want === undefined) continue;
          if (first) this.checks++;
          if (got.status !== want.status) found.push({ invariant: 'invoice-status', message: `invoice ${id} is ${got.status}, recomputed ${want.status}` });
          else if (want.late && !got.late)
            found.push({ invariant: 'invoice-status', message: `invoice ${id} (${got.status}) was paid after its TTL and late_payment is false` });
        }
      }
      return found;
    });
  }

  /**
   * Each payment the simulator sent to a static address, once deep on its best chain, is listed
   * once among the address's deposits, `confirmed`, with its exact amount; one gone from the chain
   * (a reorganisation) is not listed `confirmed`; nothing the simulator did not send is listed.
   */
  async deposits(depth: Depths): Promise<void> {
    const sim = this.sim;
    // Where each payment is on its chain: the chains do not move while the daemon's answers are read again.
    const where = new Map<string, number | 'waiting' | 'gone'>();
    for (const a of sim.statics) for (const p of a.pays) where.set(p.txid, await depth(a.coin, p.txid));
    const same = (x: string | null, y: string) => x !== null && x.toLowerCase() === y.toLowerCase();
    await this.readAgain(async (first) => {
      const found: string[] = [];
      for (const a of sim.statics) {
        if (sim.frozen.has(a.merchant)) continue;
        const res = await sim.api(a.merchant, 'GET', `/v1/addresses/${a.id}`);
        if (res?.status !== 200) continue;
        const listed = res.json.deposits as Array<{ txid: string | null; amount: string; status: string; coin_id: string }>;
        for (const p of a.pays) {
          const d = where.get(p.txid)!;
          const rows = listed.filter((r) => same(r.txid, p.txid));
          if (first) this.checks++;
          if (typeof d === 'number' && d >= a.coin.confirmations) {
            const confirmed = rows.filter((r) => r.status === 'confirmed');
            if (confirmed.length !== 1 || !Amount.of(confirmed[0]!.amount).eq(Amount.of(p.amount)))
              found.push(
                `static address ${a.id}: deposit ${p.txid} of ${p.amount} ${a.coin.name} is ${d} deep, listed ${JSON.stringify(rows.map((r) => [r.status, r.amount]))}`,
              );
          } else if (d === 'gone' && rows.some((r) => r.status === 'confirmed')) {
            found.push(`static address ${a.id}: deposit ${p.txid} left the chain and is listed confirmed`);
          }
        }
        for (const r of listed) {
          if (r.txid !== null && !a.pays.some((p) => same(r.txid, p.txid))) found.push(`static address ${a.id}: deposit ${r.txid} listed, never sent`);
        }
      }
      return found.map((message) => ({ invariant: 'deposits' as const, message }));
    });
  }

  /**
   * The payments the simulator sent on the wrong network (strays, PRODUCT §17), once deep on the
   * second EVM chain: each is listed exactly once by GET /v1/strays of its merchant, with its txid,
   * amount, network, coin, address and invoice (`stray-recorded`; nothing else is listed on that
   * network, where only the simulator pays); credited only if the simulator asked for it
   * (`stray-credited-only-when-asked`); and the merchant's available balance of each of that
   * chain's coins is exactly what the credited strays brought, less the platform fee: each credited
   * once (`stray-credited-once`). That no stray paid its invoice is invoice-status's: it recomputes
   * each status from the simulator's own payments to the invoice, which never include a stray.
   */
  async strays(): Promise<void> {
    const sim = this.sim;
    const evm2 = sim.world.evm2;
    const tip = await evm2.blockNumber();
    const deep = new Set<string>();
    for (const s of sim.strays) {
      const receipt = await evm2.rpc<{ blockNumber: string; status: string } | null>('eth_getTransactionReceipt', [s.txid]);
      if (receipt && Number(receipt.status) === 1 && tip - Number(receipt.blockNumber) + 1 >= s.coin.confirmations) deep.add(s.txid.toLowerCase());
    }
    type Listed = {
      id: string;
      coin_id: string;
      ticker: string;
      network: string;
      amount: string;
      txid: string;
      to_address: string;
      invoice_id: string;
      status: string;
    };
    const network = sim.world.wrongCoins[0]!.network;
    for (let m = 0; m < sim.merchants.length; m++) {
      const expected = sim.strays.filter((s) => s.merchant === m);
      const answered = await this.readAgain(async (first) => {
        const listed: Listed[] = [];
        let cursor: string | null = null;
        do {
          const res = await sim.api(m, 'GET', `/v1/strays?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          if (res?.status !== 200) return null;
          listed.push(...(res.json.items as Listed[]));
          cursor = res.json.next_cursor as string | null;
        } while (cursor);
        const balances = await sim.api(m, 'GET', '/v1/balances');
        if (balances?.status !== 200) return null;
        const found: Finding[] = [];
        for (const s of expected) {
          if (!deep.has(s.txid.toLowerCase())) continue;
          if (first) this.checks++;
          const rows = listed.filter((x) => x.txid.toLowerCase() === s.txid.toLowerCase());
          const what = `the wrong-network payment ${s.txid} of m${m} (${s.amount} ${s.coin.name} to invoice ${s.invoiceId})`;
          if (rows.length !== 1) {
            found.push({ invariant: 'stray-recorded', message: `${what} is listed ${rows.length} times by GET /v1/strays` });
            continue;
          }
          const x = rows[0]!;
          const wrong = [
            !Amount.of(x.amount).eq(Amount.of(s.amount)) && `amount ${x.amount}`,
            x.network !== s.coin.network && `network ${x.network}`,
            x.coin_id !== s.coin.id && `coin ${x.coin_id} (${x.ticker})`,
            x.to_address.toLowerCase() !== s.address.toLowerCase() && `to_address ${x.to_address}`,
            x.invoice_id !== s.invoiceId && `invoice ${x.invoice_id}`,
            !['open', 'credited'].includes(x.status) && `status ${x.status}`,
          ].filter(Boolean);
          if (wrong.length > 0) found.push({ invariant: 'stray-recorded', message: `${what} is listed as stray ${x.id} with ${wrong.join(', ')}` });
          if (x.status === 'credited' && !s.creditAsked)
            found.push({ invariant: 'stray-credited-only-when-asked', message: `${what}: stray ${x.id} is credited, the simulator never asked` });
          if (s.credited && x.status !== 'credited')
            found.push({ invariant: 'stray-recorded', message: `${what}: stray ${x.id} was credited (200) and is now ${x.status}` });
        }
        for (const x of listed)
          if (x.network === network && !expected.some((s) => s.txid.toLowerCase() === x.txid.toLowerCase()))
            found.push({
              invariant: 'stray-recorded',
              message: `m${m}: stray ${x.id} (${x.amount} ${x.ticker}, tx ${x.txid}) listed on ${network}, where the simulator sent no such payment`,
            });
        const [account] = await this.query<{ platform_fee_percent: string }>(
          'SELECT platform_fee_percent FROM accounts WHERE id = ?',
          sim.merchants[m]!.accountId,
        );
        const keep = Amount.of('100').minus(Amount.of(account?.platform_fee_percent ?? '0'));
        for (const c of sim.world.wrongCoins) {
          this.checks++;
          const credited = listed.filter((x) => x.coin_id === c.id && x.status === 'credited');
          const gross = credited.reduce((sum, x) => sum.plus(Amount.of(x.amount)), Amount.zero());
          const want = credited.reduce((sum, x) => sum.plus(Amount.of(x.amount).percent(keep, c.decimals, 'down')), Amount.zero());
          const item = (balances.json.items as Array<{ coin_id: string; available: string }>).find((b) => b.coin_id === c.id);
          const available = Amount.of(item?.available ?? '0');
          if (!available.eq(want))
            found.push({
              invariant: 'stray-credited-once',
              message: `m${m}: ${c.name} available ${available.toString()}, the ${credited.length} credited stray(s) bring ${want.toString()} (${gross.toString()} less the fee)`,
            });
        }
        return found;
      });
      if (!answered) return;
    }
  }

  /** What must never be written out: the keys' secrets (old ones too), the webhook endpoints' secrets, the wallet's words. */
  private knownSecrets(): string[] {
    const sim = this.sim;
    return [...sim.merchants.map((m) => m.secret), ...sim.oldSecrets, ...sim.endpoints.map((e) => e.secret).filter(Boolean), TEST_MNEMONIC];
  }

  /** No key secret, webhook secret or the wallet's words in any daemon log line. */
  secrets(): void {
    this.checks++;
    const secrets = this.knownSecrets();
    for (const text of this.sim.world.logs()) {
      for (const line of text.split('\n')) {
        const s = secrets.find((x) => x && line.includes(x));
        if (s) this.violate('no-secret-in-logs', `a log line holds a secret (…${s.slice(-4)}): ${line.replace(s, '<secret>').slice(0, 200)}`);
      }
    }
  }

  /** An error answer (4xx, 5xx) names no secret. */
  secretsIn(what: string, text: string): void {
    this.checks++;
    const s = this.knownSecrets().find((x) => x && text.includes(x));
    if (s) this.violate('no-secret-in-errors', `${what} with a secret (…${s.slice(-4)}): ${text.replace(s, '<secret>').slice(0, 200)}`);
  }
}
