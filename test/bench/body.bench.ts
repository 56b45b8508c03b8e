import http from 'node:http';
import { merchantWithKey, startTestDaemon } from '../helpers/daemon';
import { bodyHash, hmacHex } from '../helpers/signer';
import { fmt, load, report, request, type LoadResult } from './lib';

/**
 * Work before authentication (issue 14 §4): `/healthz` p99 while a client sends 20 bodies of 1 MiB
 * of nested arrays a second, against its p99 idle. The attacker sends, in turn, a body without
 * signature headers (refused before it is read), one with a wrong signature (read and hashed, then
 * refused; its address ends up blocked and is then refused before reading) and one validly signed
 * from another address (read, authenticated, then refused by the nesting bound without parsing).
 * Goal: within 2x.
 */

const PER_SECOND = 20;
const HEALTH_REQUESTS = Number(process.env.BENCH_HEALTHZ ?? 20000);
const CONCURRENCY = 4;
const MiB = 1024 * 1024;
const NESTED = Buffer.from('['.repeat(MiB / 2) + ']'.repeat(MiB / 2));
const NESTED_HASH = bodyHash(NESTED);

/** One POST of the nested body from `from`; the answer's status (0 when the connection was cut). */
function send(url: string, target: string, from: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      `${url}${target}`,
      {
        method: 'POST',
        agent: false,
        localAddress: from,
        headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(NESTED.length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(NESTED);
  });
}

export async function run(): Promise<void> {
  const d = await startTestDaemon();
  try {
    const key = await merchantWithKey(d.daemon, { rateLimit: 100_000 });
    const healthz = `${d.url}/healthz`;
    const probe = (): Promise<LoadResult> =>
      load(
        async () => {
          const r = await request(healthz);
          if (r.status !== 200) throw new Error(`/healthz answered ${r.status}`);
        },
        { total: HEALTH_REQUESTS, concurrency: CONCURRENCY },
      );

    const idle = await probe();

    const statuses = new Map<number, number>();
    let n = 0;
    const inFlight = new Set<Promise<void>>();
    const signed = (target: string, secret: string) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const canonical = [timestamp, 'POST', target, NESTED_HASH].join('\n');
      return { 'X-API-Key': key.keyId, 'X-Timestamp': timestamp, 'X-Signature': hmacHex(secret, canonical) };
    };
    const timer = setInterval(() => {
      const i = n++;
      const kind = i % 3;
      const target = `/v1/webhooks/endpoints?n=${i}`;
      const [from, headers] =
        kind === 0 ? ['127.0.0.2', {}] : kind === 1 ? ['127.0.0.2', signed(target, 'x'.repeat(43))] : ['127.0.0.3', signed(target, key.secret)];
      const p = send(d.url, target, from, headers).then((status) => void statuses.set(status, (statuses.get(status) ?? 0) + 1));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }, 1000 / PER_SECOND);
    let attacked: LoadResult;
    try {
      attacked = await probe();
    } finally {
      clearInterval(timer);
    }
    await Promise.all(inFlight);

    const ratio = attacked.p99Ms / idle.p99Ms;
    const line = (r: LoadResult) => `${fmt(r.perSecond, 0).padStart(7)} req/s   p50 ${fmt(r.p50Ms, 2)} ms   p99 ${fmt(r.p99Ms, 2)} ms`;
    report(
      'Body before authentication: /healthz while 20 bodies of 1 MiB nested arrays arrive a second',
      [
        ['/healthz idle', line(idle)],
        ['/healthz under the nested bodies', line(attacked)],
        [
          'nested bodies sent, by answer status',
          [...statuses]
            .sort()
            .map(([s, c]) => `${s}: ${c}`)
            .join('  '),
        ],
      ],
      { name: 'p99 under the bodies / p99 idle', value: ratio, goal: '<= 2', ok: ratio <= 2 },
    );
  } finally {
    await d.stop();
  }
}
