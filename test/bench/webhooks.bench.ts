import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { WebhookDeliveryEntity } from '../../src/db/entities/webhooks';
import { DEFAULT_LIMITS } from '../../src/webhooks/dispatcher';
import { WEBHOOK_USER_AGENT } from '../../src/webhooks/delivery-signer';
import { startWebhookFixture } from '../helpers/webhook-fixture';
import { fmt, report } from './lib';

const PER_ROUND = Number(process.env.BENCH_WEBHOOKS ?? 2000);
const ROUNDS = 4;
/** Rounds of each side run before any is measured, so neither is timed while the JIT and caches warm up. */
const WARMUP_ROUNDS = 1;
const CONCURRENCY = DEFAULT_LIMITS.perTarget;

/** The bare client sends what a delivery sends but does not sign: a signature header of the same length. */
const UNSIGNED = `sha256=${'0'.repeat(64)}`;

interface Posted {
  id: string;
  body: string;
}

const cpuMsSince = (from: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

/** The receiver runs in its own process, as a merchant's server would. */
async function startReceiver(): Promise<{ base: string; count(path: string): Promise<number>; stop(): void }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'webhook-receiver.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', () => reject(new Error('the receiver exited')));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    count: async (p) => Number(await (await fetch(`${base}/count?path=${encodeURIComponent(p)}`)).text()),
    stop: () => child.stdin!.end(),
  };
}

/**
 * Webhook deliveries per second to one endpoint on a local receiver (outbox rows fanned out, each
 * attempt claimed, signed, sent and recorded in the store), against a bare HTTP client posting the
 * same bodies with the same headers (unsigned) to the same receiver with the same number in
 * flight, over keep-alive connections as the dispatcher's. Goal: ratio ≥ 0.5.
 */
export async function run(): Promise<void> {
  const receiver = await startReceiver();
  const f = await startWebhookFixture();
  const agent = new http.Agent({ keepAlive: true });
  try {
    const res = await f.api.post('/v1/webhooks/endpoints', { url: `${receiver.base}/deliveries`, event_types: ['deposit.confirmed'] });
    if (res.status !== 201) throw new Error(`endpoint create answered ${res.status}`);
    const endpointId = res.body.id as string;
    const dispatcher = f.td.daemon.webhooks.dispatcher;

    const bare = async (events: Posted[]): Promise<{ seconds: number; cpuMs: number }> => {
      let next = 0;
      const cpu = process.cpuUsage();
      const started = process.hrtime.bigint();
      const worker = async () => {
        for (let i = next++; i < events.length; i = next++) {
          const { id, body } = events[i]!;
          // The same request line, headers and body as a delivery's: the receiver parses the same bytes.
          const headers = {
            'Content-Type': 'application/json',
            'Content-Length': String(Buffer.byteLength(body)),
            'User-Agent': WEBHOOK_USER_AGENT,
            'X-Event-Id': id,
            'X-Event-Type': 'deposit.confirmed',
            'X-Timestamp': String(Math.floor(Date.now() / 1000)),
            'X-Signature': UNSIGNED,
          };
          await new Promise<void>((resolve, reject) => {
            const req = http.request(`${receiver.base}/bare`, { method: 'POST', agent, headers }, (r) => {
              r.resume();
              r.on('end', () => (r.statusCode === 200 ? resolve() : reject(new Error(`receiver answered ${r.statusCode}`))));
            });
            req.on('error', reject);
            req.end(body);
          });
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      return { seconds: Number(process.hrtime.bigint() - started) / 1e9, cpuMs: cpuMsSince(cpu) };
    };

    const delivered = async (round: number): Promise<{ seconds: number; cpuMs: number; events: Posted[] }> => {
      // The events exist first, as the domain writes them; the clock runs from the dispatcher's wake.
      const events = await f.td.daemon.store.write(async (em) => {
        const out: Posted[] = [];
        for (let i = 0; i < PER_ROUND; i++) {
          const e = await f.td.daemon.outbox.emit(em, {
            accountId: f.accountId,
            type: 'deposit.confirmed',
            data: { round, n: i, deposit: { amount: '0.001', status: 'confirmed' } },
            at: new Date(),
          });
          out.push({ id: e.id, body: e.body });
        }
        return out;
      });
      const cpu = process.cpuUsage();
      const started = process.hrtime.bigint();
      await dispatcher.tick();
      await dispatcher.idle();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpuMs = cpuMsSince(cpu);
      const received = await receiver.count('/deliveries');
      const ok = await f.td.daemon.store.read.count(WebhookDeliveryEntity, { where: { endpoint_id: endpointId, status: 'succeeded' } });
      if (received !== PER_ROUND * (round + 1) || ok !== received) throw new Error(`round ${round}: ${received} received, ${ok} succeeded`);
      return { seconds, cpuMs, events };
    };

    // The machine is shared: rounds alternate so both sides see the same background load.
    const bareSecs: number[] = [];
    const deliverSecs: number[] = [];
    let bareCpu = 0;
    let deliverCpu = 0;
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      const d = await delivered(round);
      const b = await bare(d.events);
      if (round < WARMUP_ROUNDS) continue;
      deliverSecs.push(d.seconds);
      deliverCpu += d.cpuMs;
      bareSecs.push(b.seconds);
      bareCpu += b.cpuMs;
    }
    const rate = (secs: number[]) => (PER_ROUND * secs.length) / secs.reduce((a, s) => a + s, 0);
    const base = rate(bareSecs);
    const deliveries = rate(deliverSecs);
    const ratio = deliveries / base;
    report(
      `webhook deliveries to one endpoint on a receiver process, ${PER_ROUND * ROUNDS} in ${ROUNDS} rounds alternating with the baseline (after ${WARMUP_ROUNDS} unmeasured round of each), ${CONCURRENCY} in flight, ${f.td.daemon.store.dialect}`,
      [
        ['bare HTTP client POSTs/s (baseline)', fmt(base)],
        ['deliveries/s (fan-out, claim, sign, send, record)', fmt(deliveries)],
        ['per round bare POSTs/s', bareSecs.map((s) => fmt(PER_ROUND / s)).join(' ')],
        ['per round deliveries/s', deliverSecs.map((s) => fmt(PER_ROUND / s)).join(' ')],
        ['CPU ms of this process per bare POST / per delivery', `${fmt(bareCpu / (PER_ROUND * ROUNDS), 3)} / ${fmt(deliverCpu / (PER_ROUND * ROUNDS), 3)}`],
      ],
      { name: 'ratio deliveries / bare client', value: ratio, goal: '>= 0.5', ok: ratio >= 0.5 },
    );
  } finally {
    agent.destroy();
    await f.stop();
    receiver.stop();
  }
}
