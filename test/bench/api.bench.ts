import { merchantWithKey, startTestDaemon } from '../helpers/daemon';
import { signRequest } from '../helpers/signer';
import { fmt, load, report, request, startHelloWorld, type LoadResult } from './lib';

/**
 * The API's own cost (issues 2 §7 and 3 §7): requests/s and p99 of a bare Koa hello-world against
 * the public GET /v1/currencies through the daemon's whole middleware stack, and against the signed
 * GET /v1/currencies (a valid signature, a new target per request so replay never refuses it).
 * Everything runs in this process (the daemon as startTestDaemon starts it, on SQLite), so the
 * baseline and the stack share the same client and the same event loop. Goals: public ≥ 0.6 by
 * req/s; signed ≥ 0.7 by req/s and by CPU time (issue 14 §11: HMAC over a short string and the
 * replay and limit bookkeeping cost microseconds). Issue 22 §4: the signed ratio of a second daemon
 * with metrics on (`metrics.listen`) stays within 5 % of the ratio with metrics off.
 */
const SIGNED_GOAL = 0.7;
const METRICS_COST_GOAL = 0.05;

/** Requests a round (at 28,000 req/s a round of 5,000 lasted 0.18 s and its figures moved with every pause). */
const TOTAL = Number(process.env.BENCH_REQUESTS ?? 10_000);
/** Interleaved rounds (hello-world, public, signed back to back); medians are reported: the machine is shared and noisy. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = 32;
/** Signed requests are spread over several keys: one key may make at most 100 000 requests a minute. */
const KEYS = 8;
const WARMUP = Math.min(200, Math.floor(TOTAL / 10));

/** `headers(i)` must be cheap: signed requests are prepared before the clock starts, so the client's own HMAC is not measured. */
async function measure(name: string, url: (i: number) => string, headers?: (i: number) => Record<string, string>): Promise<LoadResult & { cpuUs: number }> {
  let failures = 0;
  let sample = '';
  const one = async (i: number) => {
    const r = await request(url(i), { headers: headers?.(i), decode: false });
    if (r.status !== 200) {
      failures++;
      sample = `${r.status} (${r.bytes} bytes)`;
    }
  };
  // The warm-up requests (one at a time, each costing the client and the server more than one of
  // 32 in flight) run before the CPU clock starts: the CPU figure is that of the measured load.
  for (let i = -WARMUP; i < 0; i++) await one(i);
  const cpu0 = process.cpuUsage();
  const res = await load(one, { total: TOTAL, concurrency: CONCURRENCY, warmup: 0 });
  const cpu = process.cpuUsage(cpu0);
  if (failures > 0) throw new Error(`${name}: ${failures} answers were not 200 (e.g. ${sample})`);
  // CPU time of this process (client and server threads) per request: steadier than wall time on a busy machine.
  return { ...res, cpuUs: (cpu.user + cpu.system) / TOTAL };
}

/** Signed GETs of /v1/currencies?n=<unique>, round-robin over the keys, for load's indices -warmup..TOTAL-1. */
function prepareSigned(base: string, keys: Array<{ keyId: string; secret: string }>, round: number) {
  const warm = WARMUP;
  const prepared = new Map<number, { url: string; headers: Record<string, string> }>();
  for (let i = -warm; i < TOTAL; i++) {
    const target = `/v1/currencies?n=${round}-${i}`;
    const key = keys[(i + warm) % keys.length]!;
    prepared.set(i, { url: base + target, headers: signRequest({ keyId: key.keyId, secret: key.secret, method: 'GET', target }) });
  }
  return { url: (i: number) => prepared.get(i)!.url, headers: (i: number) => prepared.get(i)!.headers };
}

export async function run(): Promise<void> {
  const hello = await startHelloWorld();
  const d = await startTestDaemon();
  const dm = await startTestDaemon({ metrics: { listen: '127.0.0.1:0' } });
  try {
    const keys: Array<Awaited<ReturnType<typeof merchantWithKey>>> = [];
    const keysM: typeof keys = [];
    for (let k = 0; k < KEYS; k++) keys.push(await merchantWithKey(d.daemon, { rateLimit: 100_000 }));
    for (let k = 0; k < KEYS; k++) keysM.push(await merchantWithKey(dm.daemon, { rateLimit: 100_000 }));
    const pub = `${d.url}/v1/currencies`;
    const check = await request(pub);
    if (check.status !== 200) throw new Error(`GET /v1/currencies answered ${check.status}`);

    type Run = LoadResult & { cpuUs: number };
    const runs = { hello: [] as Run[], helloSame: [] as Run[], pub: [] as Run[], signed: [] as Run[], signedMetrics: [] as Run[] };
    const ratios = { pub: [] as number[], signed: [] as number[], signedSame: [] as number[], signedMetrics: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const h = await measure('hello-world', () => hello.url);
      const p = await measure('public /v1/currencies', () => pub);
      const prepared = prepareSigned(d.url, keys, round);
      const preparedM = prepareSigned(dm.url, keysM, round);
      // Metrics off and on back to back, in alternating order, so neither always runs on a warmer process.
      const signedOff = () => measure('signed /v1/currencies', prepared.url, prepared.headers);
      const signedOn = () => measure('signed /v1/currencies, metrics on', preparedM.url, preparedM.headers);
      const [s, sm] = round % 2 === 0 ? [await signedOff(), await signedOn()] : (([on, off]) => [off, on] as const)([await signedOn(), await signedOff()]);
      runs.signedMetrics.push(sm);
      ratios.signedMetrics.push(sm.perSecond / h.perSecond);
      // The same request bytes (target and signature headers) to the hello-world: the client's cost
      // of sending them is not the server's, so this is the like-for-like baseline of the signed path.
      const helloBase = hello.url.replace(/\/$/, '');
      const sameUrls = new Map<number, string>();
      for (let i = -WARMUP; i < TOTAL; i++) sameUrls.set(i, helloBase + prepared.url(i).slice(d.url.length));
      const same = await measure('hello-world, signed request bytes', (i) => sameUrls.get(i)!, prepared.headers);
      runs.hello.push(h);
      runs.helloSame.push(same);
      ratios.signedSame.push(s.perSecond / same.perSecond);
      runs.pub.push(p);
      runs.signed.push(s);
      ratios.pub.push(p.perSecond / h.perSecond);
      ratios.signed.push(s.perSecond / h.perSecond);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const summary = (rs: Run[]) =>
      `${fmt(median(rs.map((r) => r.perSecond)), 0).padStart(7)} req/s   p50 ${fmt(median(rs.map((r) => r.p50Ms)), 2)} ms   p99 ${fmt(median(rs.map((r) => r.p99Ms)), 2)} ms   cpu ${fmt(median(rs.map((r) => r.cpuUs)), 0)} us/req`;
    const rows: Array<[string, string]> = [
      [`bare Koa hello-world`, summary(runs.hello)],
      ['public GET /v1/currencies (full stack)', summary(runs.pub)],
      [`signed GET /v1/currencies (${KEYS} keys)`, summary(runs.signed)],
      ["hello-world, the signed requests' bytes", summary(runs.helloSame)],
      ['ratios public / hello-world per round', ratios.pub.map((r) => r.toFixed(2)).join(' ')],
      ['ratios signed / hello-world per round', ratios.signed.map((r) => r.toFixed(2)).join(' ')],
      ['ratios signed / same-bytes hello per round', ratios.signedSame.map((r) => r.toFixed(2)).join(' ')],
      [`signed GET, metrics on (${KEYS} keys)`, summary(runs.signedMetrics)],
      ['ratios signed, metrics on / hello per round', ratios.signedMetrics.map((r) => r.toFixed(2)).join(' ')],
    ];
    console.log(`\n  medians of ${ROUNDS} interleaved rounds of ${TOTAL} requests each, ${CONCURRENCY} in flight`);
    const rp = median(ratios.pub);
    report('API: public and signed GET /v1/currencies vs a bare Koa hello-world', rows, {
      name: 'ratio public / hello-world (median req/s)',
      value: rp,
      goal: '>= 0.6',
      ok: rp >= 0.6,
    });
    const rs = median(ratios.signed);
    const goal = (value: number, min: number) => `${value.toFixed(3)}  (goal >= ${min}: ${value >= min ? 'met' : 'NOT met'})`;
    console.log(`  ${'ratio signed / hello-world (median req/s)'.padEnd(44)} ${goal(rs, SIGNED_GOAL)}`);
    const cpu = (rs: Run[]) => median(rs.map((r) => r.cpuUs));
    console.log(`  ${'ratio public / hello-world (by CPU time)'.padEnd(44)} ${(cpu(runs.hello) / cpu(runs.pub)).toFixed(3)}`);
    console.log(`  ${'ratio signed / hello-world (by CPU time)'.padEnd(44)} ${goal(cpu(runs.hello) / cpu(runs.signed), SIGNED_GOAL)}`);
    console.log(`  ${'ratio signed / same-bytes hello (median req/s)'.padEnd(44)} ${goal(median(ratios.signedSame), SIGNED_GOAL)}`);
    console.log(`  ${'ratio signed / same-bytes hello (by CPU time)'.padEnd(44)} ${goal(cpu(runs.helloSame) / cpu(runs.signed), SIGNED_GOAL)}`);
    const rsm = median(ratios.signedMetrics);
    const cost = (rs - rsm) / rs;
    console.log(`  ${'ratio signed / hello-world, metrics OFF'.padEnd(44)} ${rs.toFixed(3)}`);
    console.log(`  ${'ratio signed / hello-world, metrics ON'.padEnd(44)} ${rsm.toFixed(3)}`);
    console.log(
      `  ${'metrics cost (OFF - ON) / OFF'.padEnd(44)} ${(cost * 100).toFixed(1)} %  (goal <= ${METRICS_COST_GOAL * 100} %: ${cost <= METRICS_COST_GOAL ? 'met' : 'NOT met'})`,
    );
    const paired = median(runs.signed.map((off, i) => runs.signedMetrics[i]!.perSecond / off.perSecond));
    console.log(`  ${'signed req/s ON / OFF, median of rounds'.padEnd(44)} ${paired.toFixed(3)}`);
    const cpuOff = cpu(runs.signed);
    const cpuOn = cpu(runs.signedMetrics);
    console.log(
      `  ${'signed CPU per request OFF / ON'.padEnd(44)} ${fmt(cpuOff, 0)} / ${fmt(cpuOn, 0)} us  (metrics cost by CPU ${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)} %)`,
    );
    const metricsText = await (await fetch(dm.daemon.metricsUrl!)).text();
    if (!metricsText.includes('route="/v1/currencies"')) throw new Error('the metrics daemon did not count its requests');
    const p99 = (rs: Run[]) => median(rs.map((r) => r.p99Ms));
    console.log(`  ${'p99 public / p99 hello-world (medians)'.padEnd(44)} ${(p99(runs.pub) / p99(runs.hello)).toFixed(2)}x`);
    console.log(`  ${'p99 signed / p99 hello-world (medians)'.padEnd(44)} ${(p99(runs.signed) / p99(runs.hello)).toFixed(2)}x`);
  } finally {
    await dm.stop();
    await d.stop();
    await hello.close();
  }
}
