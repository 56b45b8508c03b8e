import { COINS, startInvoiceFixture } from '../helpers/invoice-fixture';
import { signRequest } from '../helpers/signer';
import { fmt, load, report, request, startHelloWorld, type LoadResult } from './lib';

const TOTAL = Number(process.env.BENCH_INVOICES ?? 3000);
const CONCURRENCY = 16;
const ROUNDS = 5;
/** Requests of each side run before any round is measured, so neither is timed while the JIT and caches warm up. */
const WARMUP = 1000;

/**
 * Signed POST /v1/invoices (a coin invoice: address derived from the wallet, index, address and row written in one transaction) per
 * second, against a bare Koa hello-world in the same run. Goal: ratio ≥ 0.25, judged on the median of
 * the per-round ratios (the machine is shared and noisy). The client signs each request in this
 * process, as a merchant back end would.
 */
export async function run(): Promise<void> {
  const hello = await startHelloWorld();
  const f = await startInvoiceFixture({ rateLimit: 100_000, realWallet: true });
  try {
    const { keyId, secret } = f.api;
    const post = async (i: number) => {
      const body = JSON.stringify({ amount: '0.01', currency: 'ETH', coin_id: COINS.ETH, order_id: `bench-${i}` });
      const headers = signRequest({ keyId, secret, method: 'POST', target: '/v1/invoices', body });
      const r = await request(`${f.td.url}/v1/invoices`, { method: 'POST', headers, body });
      if (r.status !== 201) throw new Error(`POST /v1/invoices answered ${r.status}: ${r.body}`);
    };
    const get = async () => {
      const r = await request(hello.url);
      if (r.status !== 200) throw new Error(`hello-world answered ${r.status}`);
    };
    // The machine is shared: rounds alternate so both sides see the same background load.
    const bases: LoadResult[] = [];
    const invs: LoadResult[] = [];
    await load(get, { total: WARMUP, concurrency: CONCURRENCY, warmup: 0 });
    await load((i) => post(-1_000_000 - i), { total: WARMUP, concurrency: CONCURRENCY, warmup: 0 });
    let offset = 0;
    for (let round = 0; round < ROUNDS; round++) {
      bases.push(await load(get, { total: TOTAL / ROUNDS, concurrency: CONCURRENCY }));
      const from = offset;
      invs.push(await load((i) => post(i < 0 ? i - from : from + i), { total: TOTAL / ROUNDS, concurrency: CONCURRENCY }));
      offset += TOTAL / ROUNDS;
    }
    const rate = (rs: LoadResult[]) => rs.reduce((a, r) => a + r.requests, 0) / rs.reduce((a, r) => a + r.seconds, 0);
    const base = rate(bases);
    const inv = rate(invs);
    const perRound = invs.map((r, i) => r.perSecond / bases[i]!.perSecond);
    const ratio = [...perRound].sort((a, b) => a - b)[Math.floor(perRound.length / 2)]!;
    const last = invs[invs.length - 1]!;
    report(
      `signed POST /v1/invoices (coin invoice), ${TOTAL} requests in ${ROUNDS} rounds alternating with the baseline, concurrency ${CONCURRENCY}, ${f.td.daemon.store.dialect}`,
      [
        ['koa hello-world req/s (baseline)', fmt(base)],
        ['POST /v1/invoices req/s', fmt(inv)],
        ['POST /v1/invoices p50 / p99 ms (last round)', `${fmt(last.p50Ms, 2)} / ${fmt(last.p99Ms, 2)}`],
        ['per round hello req/s', bases.map((r) => fmt(r.perSecond)).join(' ')],
        ['per round invoices req/s', invs.map((r) => fmt(r.perSecond)).join(' ')],
        ['per round ratios', perRound.map((r) => fmt(r, 3)).join(' ')],
        ['ratio of the totals', fmt(inv / base, 3)],
      ],
      { name: 'ratio invoices / hello-world (median of rounds)', value: ratio, goal: '>= 0.25', ok: ratio >= 0.25 },
    );
  } finally {
    await f.stop();
    await hello.close();
  }
}
