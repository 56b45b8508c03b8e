import { createHash } from 'node:crypto';
import { merchantWithKey, startTestDaemon } from '../helpers/daemon';
import { IdleChain } from '../helpers/idle-chain';
import { COINS, TEST_CHAINS } from '../helpers/invoice-fixture';
import { signRequest } from '../helpers/signer';
import { fmt, load, report, request, type LoadResult } from './lib';

/**
 * Static address search (issue 17 §5): p99 latency of signed `GET /v1/addresses?search=` over one
 * account's 1,000,000 addresses (a prefix of a customer id, of an address, of a label; each
 * request a different one), against signed `GET /v1/currencies` in the same run, on SQLite as
 * startTestDaemon starts it. Goal: p99 under 20 ms.
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

export async function run(): Promise<void> {
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

    const key = { keyId: m.keyId, secret: m.secret };
    const pick = (i: number) => (Math.abs(i) * 7919) % ROWS;
    const searches: Array<[string, (i: number) => string]> = [
      ['customer id prefix', (i) => `/v1/addresses?search=cust-${pick(i)}`],
      ['address prefix (12 chars)', (i) => `/v1/addresses?search=0x${hex(pick(i)).slice(0, 10)}`],
      ['label prefix', (i) => `/v1/addresses?search=${encodeURIComponent(`Customer ${pick(i)}`)}`],
    ];
    const check = JSON.parse((await request(d.url + searches[0]![1](1), { headers: signRequest({ ...key, method: 'GET', target: searches[0]![1](1) }) })).body);
    if (!Array.isArray(check.items) || check.items.length === 0 || !check.items.every((x: { customer_id: string }) => x.customer_id.startsWith(`cust-${pick(1)}`))) throw new Error(`search does not find its rows: ${JSON.stringify(check).slice(0, 300)}`);

    const currencies = await measure('signed /v1/currencies', (i) => `/v1/currencies?n=${i}`, d.url, key);
    const rows: Array<[string, string]> = [
      ['addresses seeded', `${ROWS} in ${fmt(seedSeconds)} s`],
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
