import { createHash } from 'node:crypto';
import { getAddress } from 'ethers';
import { ArchivedScan } from '../../src/chains/archived-scan';
import { EvmAdapter } from '../../src/chains/evm/evm-adapter';
import { SEARCH_MERGE_STEP_PAGES } from '../../src/jobs/archive-static-addresses.job';
import { EvmRpc, type RpcCall } from '../../src/chains/evm/json-rpc';
import { anvilChainEntry } from '../../src/dev/anvil';
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
 *   upkeep has merged the search index. Goal: p99 under 20 ms.
 * - The slow scan of 100,000 archived EVM addresses (ETH and the test USDT: two balance calls
 *   each) against anvil: a round's time against the same batched node calls sent straight to the
 *   node just before and after it, at the same block. Goal: the daemon's own time (round − node
 *   calls) ≤ 0.1 × the node's, the median of three rounds after the first.
 */

const ROWS = Number(process.env.BENCH_ADDRESSES ?? 1_000_000);
const TOTAL = Number(process.env.BENCH_REQUESTS ?? 3_000);
const CONCURRENCY = 4;
const INSERT_BATCH = 500;

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

async function searchBench(): Promise<void> {
  const d = await startTestDaemon({ chains: TEST_CHAINS }, { adapterFor: (chain) => new IdleChain(chain.id) });
  try {
    const m = await merchantWithKey(d.daemon, { rateLimit: 100_000 });
    const coinId = COINS.ETH;
    const seedStarted = Date.now();
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    for (let from = 0; from < ROWS; from += INSERT_BATCH) {
      const n = Math.min(INSERT_BATCH, ROWS - from);
      const values: unknown[] = [];
      for (let i = from; i < from + n; i++) {
        const at = new Date(t0 + i * 1000).toISOString();
        values.push(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, m.accountId, `cust-${i}`, coinId, `0x${hex(i)}`, `Customer ${i}`, i % 10 === 0 ? 'archived' : 'active', null, null, at, null, at, at);
      }
      const row = `(${Array(13).fill('?').join(',')})`;
      await d.daemon.store.write((em) =>
        em.query(
          `INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at) VALUES ${Array(n).fill(row).join(',')}`,
          values,
        ),
      );
    }
    await d.daemon.store.read.query('ANALYZE');
    const seedSeconds = (Date.now() - seedStarted) / 1000;
    // The daemon's search index upkeep (its job merges up to 2 s a minute), run until it is done:
    // a million addresses inserted in one go leave the index as many segments as it ever has.
    const mergeStarted = Date.now();
    const merged = await d.daemon.staticAddresses.service.mergeSearchIndex({ stepPages: SEARCH_MERGE_STEP_PAGES, budgetMs: Infinity });
    const mergeSeconds = (Date.now() - mergeStarted) / 1000;

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
    if (!Array.isArray(check.items) || check.items.length === 0 || !check.items.every((x: { customer_id: string }) => x.customer_id.startsWith(`cust-${pick(1)}`))) throw new Error(`search does not find its rows: ${JSON.stringify(check).slice(0, 300)}`);

    const currencies = await measure('signed /v1/currencies', (i) => `/v1/currencies?n=${i}`, d.url, key);
    const rows: Array<[string, string]> = [
      ['addresses seeded', `${ROWS} in ${fmt(seedSeconds)} s`],
      ['search index merged (the daemon\'s upkeep)', `${merged.steps} steps of ${SEARCH_MERGE_STEP_PAGES} pages in ${fmt(mergeSeconds)} s`],
      ['signed GET /v1/currencies', `p50 ${fmt(currencies.p50Ms, 2)} ms, p99 ${fmt(currencies.p99Ms, 2)} ms, ${fmt(currencies.perSecond, 0)}/s`],
    ];
    let worst = 0;
    for (const [name, target] of searches) {
      const r = await measure(name, target, d.url, key);
      worst = Math.max(worst, r.p99Ms);
      rows.push([`GET /v1/addresses?search= (${name})`, `p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, ${fmt(r.perSecond, 0)}/s`]);
    }
    report(`static address search over ${ROWS} addresses (concurrency ${CONCURRENCY})`, rows, { name: 'worst search p99 (ms)', value: worst, goal: '< 20', ok: worst < 20 });
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

/** An EvmRpc that counts the time its callers wait for the node. */
class TimedRpc {
  waitedMs = 0;
  constructor(private readonly rpc: EvmRpc) {}
  async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    const t = performance.now();
    try {
      return await this.rpc.call<T>(method, params, signal);
    } finally {
      this.waitedMs += performance.now() - t;
    }
  }
  async batch<T>(calls: RpcCall[], signal?: AbortSignal): Promise<T[]> {
    const t = performance.now();
    try {
      return await this.rpc.batch<T>(calls, signal);
    } finally {
      this.waitedMs += performance.now() - t;
    }
  }
}

/** The node's own share: the round's balance calls posted straight to the node, 100 a POST as EvmRpc does, answers read as text. */
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
  const { node, usdt } = await startAnvil();
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: 3, options: { poll_interval_ms: 200, stall_seconds: 0 } });
  const d = await startTestDaemon({ chains: [chain], static_addresses: { archived_scan_hours: 100 } });
  try {
    const m = await merchantWithKey(d.daemon, { rateLimit: 100_000 });
    const config = d.daemon.config.chains[0]!;
    const store = d.daemon.store;
    const cursor = async () => Number((await store.read.query('SELECT height FROM chain_cursors WHERE chain_id = ?', [config.id]))[0].height);
    const coinId = d.daemon.catalog.coins().find((c) => c.chain_id === config.id && c.asset === 'native')!.id;
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
      const values = (cols: number) => Array(n).fill(`(${Array(cols).fill('?').join(',')})`).join(',');
      await store.write(async (em) => {
        await em.query(`INSERT INTO addresses (id, account_id, chain_id, coin_id, address, derivation_path, derivation_index, purpose, invoice_id, status, created_at, updated_at) VALUES ${values(12)}`, rows[0]);
        await em.query(`INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at) VALUES ${values(13)}`, rows[1]);
        await em.query(`INSERT INTO archived_scans (address_id, chain_id, address, checked_height, rewatched_height, balances, updated_at) VALUES ${values(7)}`, rows[2]);
      });
    }
    const seedSeconds = (Date.now() - seedStarted) / 1000;

    const rpc = new TimedRpc(new EvmRpc(node.rpcUrl, 60_000));
    const { daemon } = d;
    const scan = new ArchivedScan({ chain: config, adapter: new EvmAdapter(config, rpc), store, recorder: daemon.recorder, watched: daemon.watched, catalog: daemon.catalog, clock: systemClock, logger: daemon.logger });
    const rounds: Array<[string, string]> = [['archived addresses seeded', `${ARCHIVED} in ${fmt(seedSeconds)} s`]];
    /** A round at a new block, between the same calls sent straight to the node before and after it (the node warms up its state at that block). */
    const measureRound = async () => {
      await node.mine(1);
      const tip = await node.blockNumber();
      while ((await cursor()) < tip) await new Promise((r) => setTimeout(r, 50));
      const before = await nodeCalls(node.rpcUrl, addresses, usdt, tip);
      rpc.waitedMs = 0;
      const t = performance.now();
      const round = await scan.run();
      const total = performance.now() - t;
      if (round.checked !== ARCHIVED || round.found !== 0) throw new Error(`unexpected round: ${JSON.stringify(round)}`);
      const after = await nodeCalls(node.rpcUrl, addresses, usdt, tip);
      const direct = (before + after) / 2;
      return { total, waited: rpc.waitedMs, before, after, own: total - direct, ratio: (total - direct) / direct };
    };
    const line = (name: string, m: Awaited<ReturnType<typeof measureRound>>) => {
      rounds.push([name, `${fmt(m.total / 1000, 2)} s; waiting in EvmRpc ${fmt(m.waited / 1000, 2)} s; outside it ${fmt((m.total - m.waited) / 1000, 2)} s`]);
      rounds.push([`  same ${ARCHIVED * 2} calls straight to the node`, `${fmt(m.before / 1000, 2)} s before, ${fmt(m.after / 1000, 2)} s after`]);
      rounds.push([`  daemon's own time (round − node calls)`, `${fmt(m.own / 1000, 2)} s (${fmt(m.ratio, 3)} × the node's)`]);
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
    rounds.push([`  daemon's own time outside EvmRpc (median)`, `${fmt(median(next.map((m) => m.total - m.waited)) / 1000, 2)} s`]);
    report(`slow scan of ${ARCHIVED} archived EVM addresses (ETH + USDT balances) on anvil`, rounds, { name: `daemon's own time / node's (median of ${NEXT_ROUNDS} next rounds)`, value: ratio, goal: '<= 0.1', ok: ratio <= 0.1 });
  } finally {
    await d.stop();
    await killAllAnvils();
  }
}

export async function run(): Promise<void> {
  if (process.env.BENCH_ADDRESSES_PART !== 'scan') await searchBench();
  if (process.env.BENCH_ADDRESSES_PART !== 'search') await archivedScanBench();
}
