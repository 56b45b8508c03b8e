import test from 'ava';
import { execFileSync } from 'node:child_process';
import { promises as dns } from 'node:dns';
import { mkdtempSync, openSync, closeSync, promises as fsp, rmSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dnsResolver, RESOLUTIONS_PER_ACCOUNT } from '../../../src/shared/target-guard';
import { merchantWithKey } from '../../helpers/daemon';
import { TestNameserver } from '../../helpers/dns-server';
import { ApiClient, TEST_CHAINS } from '../../helpers/invoice-fixture';
import { signedGet } from '../../helpers/signed-get';
import { startWebhookFixture } from '../../helpers/webhook-fixture';

/**
 * `webhooks.dns.timeout_ms` in these tests, and what "on time" means for everyone else meanwhile.
 * The tests run one at a time: one of them holds the thread pool the others' exports need.
 */
const TIMEOUT_MS = 2000;
const ON_TIME_MS = 1000;

const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
};

/**
 * Holds every thread of libuv's pool (four unless UV_THREADPOOL_SIZE says otherwise) in an open()
 * of a FIFO without a writer, which blocks without using the CPU; `release` opens the writers.
 */
async function pinThreadPool(): Promise<{ release(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-pool-'));
  const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const fifos = Array.from({ length: size }, (_, i) => path.join(dir, `fifo-${i}`));
  for (const f of fifos) execFileSync('mkfifo', [f]);
  const readers = fifos.map((f) => fsp.readFile(f));
  return {
    release: async () => {
      // A writer opened without blocking fails (ENXIO) while its reader has not reached open() yet
      // (a loaded machine schedules the pool's threads late): then again, until every reader has
      // its writer. Left without one, a reader blocks its thread for good and the process never ends.
      for (const f of fifos) {
        for (const deadline = Date.now() + 30_000; ;) {
          try {
            closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
            break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENXIO' || Date.now() > deadline) throw err;
            await new Promise((r) => setTimeout(r, 10));
          }
        }
      }
      await Promise.all(readers);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test.serial('the guard resolves A and AAAA from the configured nameserver, also while the thread pool is held', async (t) => {
  const ns = await TestNameserver.start({ 'hooks.shop.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
  t.teardown(() => ns.close());
  const resolve = dnsResolver({ servers: [ns.address], timeout_ms: TIMEOUT_MS });
  const pool = await pinThreadPool();
  let lookedUp = false;
  const lookup = dns.lookup('localhost').then(() => (lookedUp = true));
  let resolved: { value: unknown; ms: number };
  let lookedUpMeanwhile: boolean;
  try {
    resolved = await timed(() => resolve('hooks.shop.test'));
    lookedUpMeanwhile = lookedUp;
  } finally {
    await pool.release();
  }
  await lookup;
  t.deepEqual(resolved.value, [
    { address: '93.184.215.14', family: 4 },
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ]);
  t.true(resolved.ms < ON_TIME_MS, `${resolved.ms} ms`);
  t.false(lookedUpMeanwhile, "the pool was held: the system's lookup had to wait");
  await t.throwsAsync(resolve('nowhere.shop.test'), { code: 'ENOTFOUND' });
});

test.serial('a name whose nameserver never answers does not resolve, within the timeout', async (t) => {
  const ns = await TestNameserver.start('swallow');
  t.teardown(() => ns.close());
  const resolve = dnsResolver({ servers: [ns.address], timeout_ms: TIMEOUT_MS });
  const { value: err, ms } = await timed(() => t.throwsAsync(resolve('hangs.shop.test')));
  t.truthy(err);
  t.true(ms >= TIMEOUT_MS / 3 && ms < TIMEOUT_MS + 300, `${ms} ms`);
  t.deepEqual(
    [...new Set(ns.queries.map((q) => q.type))].sort((a, b) => a - b),
    [1, 28],
    'A and AAAA were asked',
  );
});

test.serial(
  "webhook_urls on a name whose nameserver never answers are refused in bounded time, while another account's invoice, export and webhook are served on time",
  async (t) => {
    const ns = await TestNameserver.start('swallow');
    // Coins configured (fiat invoices offer them) on idle nodes.
    const f = await startWebhookFixture({
      overrides: { chains: TEST_CHAINS, webhooks: { allow_private_targets: true, dns: { servers: [ns.address], timeout_ms: TIMEOUT_MS } } },
    });
    t.teardown(async () => {
      await f.stop();
      await ns.close();
    });
    const other = await merchantWithKey(f.td.daemon);
    const otherApi = new ApiClient(f.td.url, other.keyId, other.secret);
    const endpoint = await otherApi.post('/v1/webhooks/endpoints', { url: f.sink.url('/other-account'), event_types: ['deposit.confirmed'] });
    t.is(endpoint.status, 201);

    // The export's workbook library is loaded on first use: loaded before the stall, so what is
    // timed below is being served beside it, not a module load on a busy machine.
    t.is((await signedGet(f.td.url, { keyId: other.keyId, secret: other.secret }, '/v1/invoices?format=xlsx')).status, 200);

    // More names than one account may have resolving at once: the rest are refused at once.
    const names = Array.from({ length: RESOLUTIONS_PER_ACCOUNT + 2 }, (_, i) => `shop-${i}.stalled.test`);
    let stalledDone = false;
    const stalled = Promise.all(
      names.map((n) => timed(() => f.api.post('/v1/invoices', { amount: '10', currency: 'USD', webhook_url: `https://${n}/hook` }))),
    ).finally(() => (stalledDone = true));
    await ns.waitForNames(RESOLUTIONS_PER_ACCOUNT, ON_TIME_MS);

    const [invoice, xlsx, delivery] = await Promise.all([
      timed(() => otherApi.post('/v1/invoices', { amount: '10', currency: 'USD' })),
      timed(() => signedGet(f.td.url, { keyId: other.keyId, secret: other.secret }, '/v1/invoices?format=xlsx')),
      timed(async () => {
        await f.emit('deposit.confirmed', { deposit: { amount: '1' } }, { accountId: other.accountId });
        return f.sink.waitFor('/other-account', 1);
      }),
    ]);
    t.false(stalledDone, 'the stalled names were still resolving');
    t.is(invoice.value.status, 201);
    t.is(xlsx.value.status, 200);
    t.is(delivery.value.length, 1);
    for (const [what, ms] of [
      ['invoice', invoice.ms],
      ['export', xlsx.ms],
      ['delivery', delivery.ms],
    ] as const)
      // Served beside the stall, not behind it: behind it would take the whole resolver timeout.
      t.true(ms < TIMEOUT_MS, `${what}: ${ms} ms`);

    const answers = await stalled;
    const refused = answers.filter((a) => a.value.status === 400);
    const busy = answers.filter((a) => a.value.status === 503);
    t.is(refused.length, RESOLUTIONS_PER_ACCOUNT);
    t.is(busy.length, 2);
    for (const a of refused) {
      t.like(a.value.body, { error: { code: 'validation_error', details: { field: 'webhook_url' } } });
      t.regex(a.value.body.error.message, /does not resolve/);
      t.true(a.ms < TIMEOUT_MS + ON_TIME_MS, `${a.ms} ms`);
    }
    for (const a of busy) {
      t.like(a.value.body, { error: { code: 'unavailable', details: { field: 'webhook_url' } } });
      t.true(a.ms < TIMEOUT_MS, `${a.ms} ms`);
    }
    t.deepEqual((await f.api.get('/v1/invoices')).body.items, [], 'nothing was created');
  },
);
