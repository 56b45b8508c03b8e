import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { getAddress } from 'ethers';
import { ArchivedScan } from '../../src/chains/archived-scan';
import { EvmAdapter } from '../../src/chains/evm/evm-adapter';
import { SEARCH_MERGE_STEP_PAGES } from '../../src/jobs/archive-static-addresses.job';
import { EvmRpc, type RpcCall } from '../../src/chains/evm/json-rpc';
import { anvilChainEntry } from '../../src/dev/anvil';
import type { Daemon } from '../../src/daemon/main';
import { systemClock } from '../../src/shared/clock';
import { killAllAnvils, startAnvil } from '../helpers/anvil';
import { merchantWithKey, startTestDaemon } from '../helpers/daemon';
import { IdleChain } from '../helpers/idle-chain';
import { COINS, TEST_CHAINS } from '../helpers/invoice-fixture';
import { signRequest } from '../helpers/signer';
import { fmt, load, report, request, type LoadResult } from './lib';

/**
 * Static addresses (issue 17 §5), two measurements:
 *
 * - Search: p99 latency of signed `GET /v1/addresses?search=` over one account's 1,000,000
 *   addresses (prefixes and substrings of customer ids, addresses and labels, a substring nearly
 *   every row holds, a 2-character prefix; each request a different one), against signed
 *   `GET /v1/currencies` in the same run, on SQLite as startTestDaemon starts it, once the daemon's
 *   upkeep has merged the search index (seedSearch). Goal: p99 under 20 ms.
 * - The slow scan of 100,000 archived EVM addresses (ETH and the test USDT: two balance calls
 *   each) against anvil. Goal: the daemon's own time ≤ 0.1 × the node's, the median of three
 *   rounds after the first. As in the chain core's benchmark (a block's processing against its
 *   fetch through the adapter), a round's wall time splits into the time the scan has at least one
 *   call to the node in flight through its RPC client (the node calls it needs: requests built,
 *   sent, answered, parsed) and the time it has none (its own: reading and writing its rows,
 *   comparing balances). The daemon sends up to 4 batched requests at once, so the round is not
 *   compared with the same calls sent one after another (that difference is still printed, and
 *   comes out negative). CPU is printed beside it: the daemon's (process.cpuUsage: the test
 *   daemon runs in this process, every thread of it counts, and nothing else of the benchmark
 *   runs during a round; anvil is quiet, its log not drained here) against anvil's (/proc); the
 *   daemon's includes building and parsing every call.
 */

const ROWS = Number(process.env.BENCH_ADDRESSES ?? 1_000_000);
const TOTAL = Number(process.env.BENCH_REQUESTS ?? 3_000);
const CONCURRENCY = 4;
/** Rows per INSERT statement. */
const INSERT_BATCH = 500;
/** Rows per write transaction when seeding the search benchmark. */
const SEED_BATCH = 50_000;

const hex = (i: number): string => createHash('sha256').update(String(i)).digest('hex').slice(0, 40);

async function measure(name: string, targets: (i: number) => string, base: string, key: { keyId: string; secret: string }): Promise<LoadResult> {
  const warm = Math.min(200, Math.floor(TOTAL / 10));
  const prepared = new Map<number, { url: string; headers: Record<string, string> }>();
  for (let i = -warm; i < TOTAL; i++) prepared.set(i, { url: base + targets(i), headers: signRequest({ ...key, method: 'GET', target: targets(i) }) });
  let failures = 0;
  let sample = '';
  const res = await load(
    async (i) => {
      const p = prepared.get(i)!;
      const r = await request(p.url, { headers: p.headers });
      if (r.status !== 200) {
        failures++;
        sample = `${r.status} ${r.body.slice(0, 200)}`;
      }
    },
    { total: TOTAL, concurrency: CONCURRENCY, warmup: warm },
  );
  if (failures > 0) throw new Error(`${name}: ${failures} answers were not 200 (e.g. ${sample})`);
  return res;
}

/**
 * Seeds `rows` static addresses of one account and brings the search index to the state the
 * daemon's upkeep keeps it in, without writing the index row by row:
 *
 * - the index's triggers are dropped while the rows go in, 50,000 a transaction (a million rows
 *   in 100,000-row transactions, on this machine: 142 s through the triggers, 51 s without them
 *   and then 25-35 s for the rebuild);
 * - the triggers are created again from their own text in the schema, and FTS5's `rebuild` writes
 *   the index from the table in one go, in the same transaction. The triggers write each row's
 *   rowid, address, customer id and label; `rebuild` reads exactly these columns of every row of
 *   its content table, so the index holds the same entries, only cut into other segments;
 * - the daemon's upkeep itself (mergeSearchIndex, the job's step size) then merges until FTS5 finds
 *   nothing left to merge: no level of the index holds two segments, where the upkeep ends too.
 *   Which segments remain depends on how the rows came in (a million rows through the triggers
 *   ended in 2 segments, as here): the benchmark prints how many.
 */
async function seedSearch(daemon: Daemon, accountId: string, coinId: string, rows: number): Promise<Array<[string, string]>> {
  const { store } = daemon;
  const started = Date.now();
  const triggers = (await store.read.query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'static_addresses_search_%'`)) as Array<{
    name: string;
    sql: string;
  }>;
  if (triggers.length !== 3) throw new Error(`expected the search index's 3 triggers, found ${triggers.map((t) => t.name).join(', ')}`);
  await store.write(async (em) => {
    for (const t of triggers) await em.query(`DROP TRIGGER ${t.name}`);
  });
  // One a second up to now: none idle long enough for the daemon's automatic archive. Dated from
  // a fixed day more than 180 days ago, the daemon warned and archived them one by one all along
  // the measurement.
  const t0 = Date.now() - rows * 1000;
  const row = `(${Array(13).fill('?').join(',')})`;
  for (let from = 0; from < rows; from += SEED_BATCH) {
    const end = Math.min(rows, from + SEED_BATCH);
    await store.write(async (em) => {
      for (let at = from; at < end; at += INSERT_BATCH) {
        const n = Math.min(INSERT_BATCH, end - at);
        const values: unknown[] = [];
        for (let i = at; i < at + n; i++) {
          const time = new Date(t0 + i * 1000).toISOString();
          values.push(
            `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
            accountId,
            `cust-${i}`,
            coinId,
            `0x${hex(i)}`,
            `Customer ${i}`,
            i % 10 === 0 ? 'archived' : 'active',
            null,
            null,
            time,
            null,
            time,
            time,
          );
        }
        await em.query(
          `INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at) VALUES ${Array(n).fill(row).join(',')}`,
          values,
        );
      }
    });
  }
  const inserted = Date.now();
  await store.write(async (em) => {
    for (const t of triggers) await em.query(t.sql);
    await em.query(`INSERT INTO static_addresses_search (static_addresses_search) VALUES ('rebuild')`);
  });
  const built = Date.now();
  return [
    ['addresses inserted (index triggers dropped)', `${rows} in ${fmt((inserted - started) / 1000)} s`],
    ['search index rebuilt (FTS5 rebuild)', `${fmt((built - inserted) / 1000)} s`],
    ...(await settle(daemon)),
  ];
}

/**
 * Brings the daemon to rest after seeding, so that only the measured work runs: its search index
 * upkeep merged to the end (else its job merges up to 2 s a minute during the measurement), the
 * planner's statistics taken, and the log copied into the database file (else the daemon's
 * checkpoint thread copies it meanwhile).
 */
async function settle(daemon: Daemon): Promise<Array<[string, string]>> {
  const { store } = daemon;
  const started = Date.now();
  const merged = await daemon.staticAddresses.service.mergeSearchIndex({ stepPages: SEARCH_MERGE_STEP_PAGES, budgetMs: Infinity });
  if (!merged.done) throw new Error('the search index upkeep stopped before the end');
  const done = Date.now();
  await store.read.query('ANALYZE');
  // Busy while the checkpoint thread copies: each try waits up to the busy timeout, then again.
  while (((await store.read.query('PRAGMA wal_checkpoint(TRUNCATE)')) as Array<{ busy: number }>)[0]!.busy !== 0);
  const checkpointed = Date.now();
  const [segments] = (await store.read.query('SELECT COUNT(DISTINCT segid) AS n FROM static_addresses_search_idx')) as Array<{ n: number }>;
  return [
    [
      "search index merged (the daemon's upkeep)",
      `${merged.steps} steps of ${SEARCH_MERGE_STEP_PAGES} pages in ${fmt((done - started) / 1000)} s; ${segments!.n} segments left`,
    ],
    ['ANALYZE, WAL checkpoint', `${fmt((checkpointed - done) / 1000)} s`],
  ];
}

async function searchBench(): Promise<void> {
  const d = await startTestDaemon({ chains: TEST_CHAINS }, { adapterFor: (chain) => new IdleChain(chain.id) });
  try {
    const m = await merchantWithKey(d.daemon, { rateLimit: 100_000 });
    const seeded = await seedSearch(d.daemon, m.accountId, COINS.ETH, ROWS);
    const key = { keyId: m.keyId, secret: m.secret };
    const pick = (i: number) => (Math.abs(i) * 7919) % ROWS;
    const searches: Array<[string, (i: number) => string]> = [
      ['customer id prefix', (i) => `/v1/addresses?search=cust-${pick(i)}`],
      ['address prefix (12 chars)', (i) => `/v1/addresses?search=0x${hex(pick(i)).slice(0, 10)}`],
      ['label prefix', (i) => `/v1/addresses?search=${encodeURIComponent(`Customer ${pick(i)}`)}`],
      ['address substring (10 chars)', (i) => `/v1/addresses?search=${hex(pick(i)).slice(15, 25)}`],
      ['customer id substring', (i) => `/v1/addresses?search=ust-${pick(i)}`],
      ['label substring', (i) => `/v1/addresses?search=${encodeURIComponent(`omer ${pick(i)}`)}`],
      // The same texts again and again: `n` makes each request (and its signature) its own.
      ['substring of nearly every row', (i) => `/v1/addresses?search=${['ustom', 'cust-', 'Custo'][Math.abs(i) % 3]}&n=${i}`],
      ['2-character prefix', (i) => `/v1/addresses?search=${['cu', 'Cu', '0x'][Math.abs(i) % 3]}&n=${i}`],
    ];
    const check = JSON.parse((await request(d.url + searches[0]![1](1), { headers: signRequest({ ...key, method: 'GET', target: searches[0]![1](1) }) })).body);
    if (
      !Array.isArray(check.items) ||
      check.items.length === 0 ||
      !check.items.every((x: { customer_id: string }) => x.customer_id.startsWith(`cust-${pick(1)}`))
    )
      throw new Error(`search does not find its rows: ${JSON.stringify(check).slice(0, 300)}`);

    const currencies = await measure('signed /v1/currencies', (i) => `/v1/currencies?n=${i}`, d.url, key);
    const rows: Array<[string, string]> = [
      ...seeded,
      ['signed GET /v1/currencies', `p50 ${fmt(currencies.p50Ms, 2)} ms, p99 ${fmt(currencies.p99Ms, 2)} ms, ${fmt(currencies.perSecond, 0)}/s`],
    ];
    let worst = 0;
    for (const [name, target] of searches) {
      const r = await measure(name, target, d.url, key);
      worst = Math.max(worst, r.p99Ms);
      rows.push([`GET /v1/addresses?search= (${name})`, `p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, ${fmt(r.perSecond, 0)}/s`]);
    }
    report(`static address search over ${ROWS} addresses (concurrency ${CONCURRENCY})`, rows, {
      name: 'worst search p99 (ms)',
      value: worst,
      goal: '< 20',
      ok: worst < 20,
    });
  } finally {
    await d.stop();
  }
}

const ARCHIVED = Number(process.env.BENCH_ARCHIVED ?? 100_000);
/** Rounds after the first, each between its own direct node calls; the ratio is their median. */
const NEXT_ROUNDS = 3;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** An EvmRpc that counts the wall time with at least one call in flight (overlapping calls counted once). */
class TimedRpc {
  inFlightMs = 0;
  private open = 0;
  private since = 0;
  constructor(private readonly rpc: EvmRpc) {}
  async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    return this.timed(() => this.rpc.call<T>(method, params, signal));
  }
  async batch<T>(calls: RpcCall[], signal?: AbortSignal): Promise<T[]> {
    return this.timed(() => this.rpc.batch<T>(calls, signal));
  }
  private async timed<T>(call: () => Promise<T>): Promise<T> {
    if (this.open++ === 0) this.since = performance.now();
    try {
      return await call();
    } finally {
      if (--this.open === 0) this.inFlightMs += performance.now() - this.since;
    }
  }
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

/** A process's CPU time so far (all its threads, user and system), in ms: Linux counts it in /proc in hundredths of a second. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command's closing parenthesis, from the third (state): utime is the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The round's balance calls posted straight to the node, 100 a POST one after another, answers read as text: their wall time. */
async function nodeCalls(rpcUrl: string, addresses: string[], usdt: string, height: number): Promise<number> {
  const at = `0x${height.toString(16)}`;
  const calls = addresses.flatMap((a) => [
    { method: 'eth_getBalance', params: [a, at] },
    { method: 'eth_call', params: [{ to: usdt, data: '0x70a08231' + a.slice(2).toLowerCase().padStart(64, '0') }, at] },
  ]);
  const t = performance.now();
  for (let i = 0; i < calls.length; i += 100) {
    const body = JSON.stringify(calls.slice(i, i + 100).map((c, id) => ({ jsonrpc: '2.0', id, ...c })));
    const res = await fetch(rpcUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    await res.text();
  }
  return performance.now() - t;
}

async function archivedScanBench(): Promise<void> {
  // Quiet: anvil's log of every call would be drained by this process, the daemon's, during the round.
  const { node, usdt } = await startAnvil({ quiet: true });
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: 3, options: { poll_interval_ms: 200, stall_seconds: 0 } });
  const d = await startTestDaemon({ chains: [chain], static_addresses: { archived_scan_hours: 100 } });
  const { daemon } = d;
  try {
    const m = await merchantWithKey(daemon, { rateLimit: 100_000 });
    const config = daemon.config.chains[0]!;
    const { store } = daemon;
    const cursor = async () => Number((await store.read.query('SELECT height FROM chain_cursors WHERE chain_id = ?', [config.id]))[0].height);
    const coinId = daemon.catalog.coins().find((c) => c.chain_id === config.id && c.asset === 'native')!.id;
    const seedStarted = Date.now();
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    const h0 = await cursor();
    const addresses: string[] = [];
    for (let from = 0; from < ARCHIVED; from += INSERT_BATCH) {
      const n = Math.min(INSERT_BATCH, ARCHIVED - from);
      const rows: unknown[][] = [[], [], []];
      for (let i = from; i < from + n; i++) {
        const id = `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`;
        const at = new Date(t0 + i * 1000).toISOString();
        const address = getAddress(`0x${hex(ARCHIVED + i)}`);
        addresses.push(address);
        rows[0]!.push(id, m.accountId, config.id, coinId, address, `m/44'/60'/9'/0/${i}`, 1_000_000 + i, 'static', null, 'archived', at, at);
        rows[1]!.push(id, m.accountId, `bench-${i}`, coinId, address, null, 'archived', at, null, at, null, at, at);
        rows[2]!.push(id, config.id, address, h0, null, null, at);
      }
      const values = (cols: number) =>
        Array(n)
          .fill(`(${Array(cols).fill('?').join(',')})`)
          .join(',');
      await store.write(async (em) => {
        await em.query(
          `INSERT INTO addresses (id, account_id, chain_id, coin_id, address, derivation_path, derivation_index, purpose, invoice_id, status, created_at, updated_at) VALUES ${values(12)}`,
          rows[0],
        );
        await em.query(
          `INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at) VALUES ${values(13)}`,
          rows[1],
        );
        await em.query(
          `INSERT INTO archived_scans (address_id, chain_id, address, checked_height, rewatched_height, balances, updated_at) VALUES ${values(7)}`,
          rows[2],
        );
      });
    }
    const seedSeconds = (Date.now() - seedStarted) / 1000;
    const settled = await settle(daemon);

    const anvilPid = node.pid;
    if (anvilPid === undefined) throw new Error('anvil has no process id');
    const rpc = new TimedRpc(new EvmRpc(node.rpcUrl, 60_000));
    const scan = new ArchivedScan({
      chain: config,
      adapter: new EvmAdapter(config, rpc),
      store,
      recorder: daemon.recorder,
      watched: daemon.watched,
      catalog: daemon.catalog,
      clock: systemClock,
      logger: daemon.logger,
    });
    const rounds: Array<[string, string]> = [['archived addresses seeded', `${ARCHIVED} in ${fmt(seedSeconds)} s`], ...settled];
    /** A round at a new block, between the same calls sent straight to the node before and after it (the node warms up its state at that block). */
    const measureRound = async () => {
      await node.mine(1);
      const tip = await node.blockNumber();
      while ((await cursor()) < tip) await new Promise((r) => setTimeout(r, 50));
      const before = await nodeCalls(node.rpcUrl, addresses, usdt, tip);
      rpc.inFlightMs = 0;
      const nodeCpu = processCpuMs(anvilPid);
      const cpu = process.cpuUsage();
      const t = performance.now();
      const round = await scan.run();
      const total = performance.now() - t;
      const daemonCpuMs = cpuMs(process.cpuUsage(cpu));
      const nodeCpuMs = processCpuMs(anvilPid) - nodeCpu;
      if (round.checked !== ARCHIVED || round.found !== 0) throw new Error(`unexpected round: ${JSON.stringify(round)}`);
      const after = await nodeCalls(node.rpcUrl, addresses, usdt, tip);
      const direct = (before + after) / 2;
      const calls = rpc.inFlightMs;
      return { total, calls, before, after, direct: total - direct, daemonCpuMs, nodeCpuMs, ratio: (total - calls) / calls };
    };
    const line = (name: string, m: Awaited<ReturnType<typeof measureRound>>) => {
      rounds.push([
        name,
        `${fmt(m.total / 1000, 2)} s: node calls in flight ${fmt(m.calls / 1000, 2)} s, none ${fmt((m.total - m.calls) / 1000, 2)} s (${fmt(m.ratio, 3)} × the calls')`,
      ]);
      rounds.push([
        `  same ${ARCHIVED * 2} calls straight to the node`,
        `${fmt(m.before / 1000, 2)} s before, ${fmt(m.after / 1000, 2)} s after, one at a time; the round − them ${fmt(m.direct / 1000, 2)} s`,
      ]);
      rounds.push([
        `  CPU during the round: daemon, anvil`,
        `${fmt(m.daemonCpuMs / 1000, 2)} s, ${fmt(m.nodeCpuMs / 1000, 2)} s (${fmt(m.daemonCpuMs / m.nodeCpuMs, 3)} × the node's)`,
      ]);
    };
    line('first round (books as reference)', await measureRound());
    // The next rounds: the median of a few, the machine being shared.
    const next: Array<Awaited<ReturnType<typeof measureRound>>> = [];
    for (let i = 1; i <= NEXT_ROUNDS; i++) {
      const m = await measureRound();
      next.push(m);
      line(`next round ${i}`, m);
    }
    const ratio = median(next.map((m) => m.ratio));
    rounds.push([`daemon's CPU / anvil's (median of ${NEXT_ROUNDS} next rounds)`, fmt(median(next.map((m) => m.daemonCpuMs / m.nodeCpuMs)), 3)]);
    report(`slow scan of ${ARCHIVED} archived EVM addresses (ETH + USDT balances) on anvil`, rounds, {
      name: `own time / node calls' (median of ${NEXT_ROUNDS} next rounds)`,
      value: ratio,
      goal: '<= 0.1',
      ok: ratio <= 0.1,
    });
  } finally {
    await d.stop();
    await killAllAnvils();
  }
}

export async function run(): Promise<void> {
  if (process.env.BENCH_ADDRESSES_PART !== 'scan') await searchBench();
  if (process.env.BENCH_ADDRESSES_PART !== 'search') await archivedScanBench();
}
