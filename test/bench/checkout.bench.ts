import { COINS, startInvoiceFixture } from '../helpers/invoice-fixture';
import http from 'node:http';
import { fmt, load, report, request, startHelloWorld, type LoadResult } from './lib';

/** Bytes on the wire of one answer's body (not decoded). */
function rawSize(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
      })
      .on('error', reject);
  });
}

/**
 * The payment page's cost (issue 18 §5): page loads (GET /pay/{id}, HTML with its QR code) and
 * status polls (GET /pay/{id}/status) per second against a bare Koa hello-world in the same run,
 * over 200 invoices with a coin fixed; page loads ask for gzip as every browser does. The daemon trusts X-Forwarded-For here and each request
 * comes from one of 4096 addresses, so the per-address limit of the public routes is passed as
 * payers behind a proxy would pass it. Goals: ≥ 0.4 (page) and ≥ 0.6 (status).
 */

const TOTAL = Number(process.env.BENCH_REQUESTS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 32;
const INVOICES = 200;

/** What a phone's browser sends with a page load. */
const BROWSER = { 'accept-encoding': 'gzip, deflate, br', 'accept-language': 'en-US,en;q=0.9' };

async function measure(name: string, url: (i: number) => string, headers: Record<string, string> = {}): Promise<LoadResult> {
  let failures = 0;
  let sample = '';
  const res = await load(
    async (i) => {
      const n = i + 10_000;
      const r = await request(url(i), { headers: { ...headers, 'x-forwarded-for': `10.0.${(n >> 8) % 16}.${n % 256}` }, decode: false });
      if (r.status !== 200) {
        failures++;
        sample = `${r.status} (${r.bytes} bytes)`;
      }
    },
    { total: TOTAL, concurrency: CONCURRENCY },
  );
  if (failures > 0) throw new Error(`${name}: ${failures} answers were not 200 (e.g. ${sample})`);
  return res;
}

export async function run(): Promise<void> {
  const hello = await startHelloWorld();
  const f = await startInvoiceFixture({ overrides: { trust_proxy: true } });
  try {
    const ids: string[] = [];
    for (let k = 0; k < INVOICES; k++) {
      const res = await f.api.post('/v1/invoices', { amount: '25', currency: 'USD', coin_id: k % 2 ? COINS.BTC : COINS.ETH });
      if (res.status !== 201) throw new Error(`invoice: ${res.status}`);
      ids.push(res.body.id);
    }
    const at = (i: number) => ids[(i + INVOICES) % INVOICES]!;
    const sizes = (await request(`${f.td.url}/pay/${ids[0]}`)).body.length;
    const gzipped = Number(await rawSize(`${f.td.url}/pay/${ids[0]}`, BROWSER));
    const runs = { hello: [] as LoadResult[], page: [] as LoadResult[], status: [] as LoadResult[] };
    for (let round = 0; round < ROUNDS; round++) {
      runs.hello.push(await measure('hello-world', () => hello.url));
      runs.page.push(await measure('GET /pay/{id}', (i) => `${f.td.url}/pay/${at(i)}`, BROWSER));
      runs.status.push(await measure('GET /pay/{id}/status', (i) => `${f.td.url}/pay/${at(i)}/status`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rate = (rs: LoadResult[]) => median(rs.map((r) => r.perSecond));
    const summary = (rs: LoadResult[]) => `${fmt(rate(rs), 0).padStart(7)} req/s   p99 ${fmt(median(rs.map((r) => r.p99Ms)), 2)} ms`;
    const page = rate(runs.page) / rate(runs.hello);
    const status = rate(runs.status) / rate(runs.hello);
    console.log(`\n  medians of ${ROUNDS} interleaved rounds of ${TOTAL} requests each, ${CONCURRENCY} in flight, ${INVOICES} invoices`);
    report(
      'Payment page: page loads and status polls vs a bare Koa hello-world',
      [
        ['bare Koa hello-world', summary(runs.hello)],
        [`GET /pay/{id} (${sizes} B of HTML, ${gzipped} B gzipped)`, summary(runs.page)],
        ['GET /pay/{id}/status', summary(runs.status)],
      ],
      { name: 'ratio page / hello-world', value: page, goal: '>= 0.4', ok: page >= 0.4 },
    );
    console.log(`  ${'ratio status / hello-world'.padEnd(44)} ${status.toFixed(3)}  (goal >= 0.6: ${status >= 0.6 ? 'met' : 'NOT met'})`);
  } finally {
    await f.stop();
    await hello.close();
  }
}
