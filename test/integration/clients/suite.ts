/**
 * The tests every client library of clients/<language>/ passes, through its test driver (a small
 * program of the language that prints one JSON object; see clients/python/tests/driver.py):
 * the shared signing and webhook vectors; a run against a test daemon (a webhook endpoint,
 * invoices created, read back and paged through, typed errors, a delivered webhook verified);
 * retries against a scripted server (one Idempotency-Key across attempts, a fresh signature
 * on each, Retry-After honoured, a replayed 5xx not retried); and stray payments, refunds and
 * invoices.accept (PRODUCT §16, §17) against a daemon with seeded paid and underpaid invoices.
 *
 * A missing runtime fails the tests under CI=true (./install.sh installs Go and PHP as root);
 * elsewhere they are skipped, which ava reports by name.
 */
import type { TestFn } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { merchantWithKey } from '../../helpers/daemon';
import { seedRefundable, type RefundSeed } from '../../helpers/refund-seed';
import { TEST_CHAINS } from '../../helpers/invoice-fixture';
import { canonical, hmacHex } from '../../helpers/signer';
import { projectRoot, readSharedVectors, vectorsPath } from '../../helpers/vectors';
import { startWebhookFixture, type WebhookFixture } from '../../helpers/webhook-fixture';

export interface Language {
  name: string;
  /** Why the runtime cannot run here, or null when it can (checked when the file loads). */
  missing(): string | null;
  /** Builds what needs building (in `tmp`) and returns the driver's command line. */
  prepare(tmp: string): Promise<{ command: string[]; env?: Record<string, string> }>;
}

export const root = projectRoot();

export async function run(
  argv: string[],
  opts: { env?: Record<string, string>; stdin?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A command that exits without reading its input closes the pipe first: its exit code and output tell, not an EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.stdin ?? '');
  });
}

/** Whether `argv` runs and exits 0 (synchronous: only before any daemon of this process runs). */
export function runs(argv: string[]): boolean {
  return spawnSync(argv[0]!, argv.slice(1), { stdio: 'ignore', timeout: 20_000 }).status === 0;
}

interface SigningVectors {
  vectors: Array<{ name: string; signature: string }>;
}
interface WebhookVectors {
  cases: Array<{ name: string; valid: boolean }>;
}

const KEY_ID = 'ck_live_clientretrytest0000000000';
const SECRET = 'retry-test secret: not a real one';

/** A server that answers POSTs from a script, checking nothing but recording every request. */
async function scriptedServer() {
  const requests: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string; at: number }> = [];
  const err = (code: string, message = code) => JSON.stringify({ error: { code, message, details: {} } });
  const invoiceScript: Array<(res: http.ServerResponse) => void> = [
    (res) => res.socket?.destroy(),
    (res) => res.writeHead(503, { 'Content-Type': 'application/json' }).end(err('unavailable')),
    (res) => res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(err('rate_limited')),
    (res) => res.writeHead(409, { 'Content-Type': 'application/json' }).end(err('idempotency.in_progress')),
    (res) => res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: 'inv-1', status: 'new' })),
    (res) => res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: 'inv-2', status: 'new' })),
  ];
  let invoiceCalls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const p = req.url ?? '/';
      requests.push({ path: p, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      if (p === '/v1/invoices') (invoiceScript[invoiceCalls++] ?? ((r) => r.writeHead(500).end(err('internal_error'))))(res);
      else res.writeHead(500, { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' }).end(err('internal_error'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function clientSuite(test: TestFn, lang: Language): void {
  const missing = lang.missing();
  let command: string[] = [];
  let env: Record<string, string> = {};
  let tmp = '';
  let f: WebhookFixture | undefined;
  let seeded: Promise<RefundSeed> | undefined;
  /** One daemon for the strays and refunds checks: a verified merchant with paid and underpaid invoices. */
  const seed = () => (seeded ??= seedRefundable());

  test.before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), `coinkeep-client-${lang.name}-`));
    if (missing) return;
    ({ command, env = {} } = await lang.prepare(tmp));
  });
  test.after.always(async () => {
    await f?.stop();
    await (await seeded?.catch(() => undefined))?.fx.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** Runs the driver; its stdout must be one JSON object. */
  const driver = async (args: string[], extraEnv: Record<string, string> = {}, stdin?: string): Promise<any> => {
    const res = await run([...command, ...args], { env: { ...env, ...extraEnv }, stdin });
    if (res.code !== 0) throw new Error(`${lang.name} driver ${args[0]} exited ${res.code}: ${res.stderr || res.stdout}`);
    try {
      return JSON.parse(res.stdout);
    } catch {
      throw new Error(`${lang.name} driver ${args[0]} printed no JSON: ${res.stdout} ${res.stderr}`);
    }
  };
  // Without the runtime: failed under CI=true, skipped elsewhere (ava reports skipped tests by name).
  if (missing && process.env.CI !== 'true') console.warn(`${lang.name} client tests skipped: ${missing}`);
  const check = (title: string, fn: (t: any) => Promise<void>) =>
    missing && process.env.CI !== 'true'
      ? test.serial.skip(title, async () => {})
      : test.serial(title, async (t) => {
          if (missing) return t.fail(`${lang.name}: ${missing} (CI=true: the client tests must run; ./install.sh installs it as root)`);
          await fn(t);
        });

  check(`${lang.name}: the shared request-signing and webhook vectors`, async (t) => {
    const out = await driver(['vectors', vectorsPath('request-signing.json'), vectorsPath('webhook-signing.json')]);
    const req = readSharedVectors<SigningVectors>('request-signing.json');
    const wh = readSharedVectors<WebhookVectors>('webhook-signing.json');
    t.deepEqual(out.requests, Object.fromEntries(req.vectors.map((v) => [v.name, v.signature])));
    t.deepEqual(out.webhooks, Object.fromEntries(wh.cases.map((c) => [c.name, c.valid])));
    t.deepEqual(out.tolerance, [true, true, false, false], '300 s either way passes, 301 s does not');
  });

  check(`${lang.name}: against a test daemon: invoices created, read back and paged; typed errors; a delivered webhook verified`, async (t) => {
    f = await startWebhookFixture({ overrides: { chains: TEST_CHAINS } });
    const m = await merchantWithKey(f.td.daemon);
    const webhookSecret = `${lang.name} receiver: p@ss, with spaces & punctuation!`;
    const sinkPath = `/${lang.name}`;
    const base = { COINKEEP_URL: f.td.url, COINKEEP_KEY: m.keyId, COINKEEP_SECRET: m.secret, WEBHOOK_SECRET: webhookSecret };
    const out = await driver(['e2e'], { ...base, SINK_URL: f.sink.url(sinkPath) });

    t.is(out.created.length, 3);
    for (const [i, inv] of (out.created as any[]).entries()) t.like(inv, { status: 'new', currency: 'USD', order_id: `${lang.name}-${i}` });
    t.like(out.read, { id: out.created[0].id, status: 'new', order_id: `${lang.name}-0` });
    t.deepEqual([...out.listed].sort(), out.created.map((i: any) => i.id).sort(), 'three invoices over pages of two');
    t.like(out.missing, { error: { status: 404, code: 'not_found' } });
    t.like(out.invalid, { error: { status: 400, code: 'validation_error', details: { field: 'amount' } } });
    // Each POST carried its own Idempotency-Key: the daemon remembered one per POST.
    const keys = await f.td.daemon.store.read.query('SELECT COUNT(*) AS n FROM idempotency_keys');
    t.is(Number(keys[0].n), 4, 'the endpoint and three invoices (the refused POST released its key)');

    // The invoice expires; its invoice.expired event goes to the endpoint the client made.
    const id = out.created[0].id as string;
    await f.td.daemon.store.write((em) => em.update(InvoiceEntity, { id }, { ttl_expires_at: new Date(Date.now() - 60_000).toISOString() }));
    await f.td.daemon.invoices.service.expireDue();
    const [req] = await f.sink.waitFor(sinkPath, 1);
    const bodyFile = path.join(tmp, 'delivery.json');
    writeFileSync(bodyFile, req!.body);
    const headers = JSON.stringify(req!.headers);
    const verified = await driver(['verify', bodyFile], base, headers);
    t.like(verified, { ok: { event_id: req!.headers['x-event-id'], type: 'invoice.expired', data: { invoice: { id, status: 'expired' } } } });

    writeFileSync(bodyFile, Buffer.concat([req!.body, Buffer.from(' ')]));
    t.like(await driver(['verify', bodyFile], base, headers), { error: { reason: 'invalid_signature' } });
    writeFileSync(bodyFile, req!.body);
    const old = String(Math.floor(Date.now() / 1000) - 301);
    const stale = {
      ...req!.headers,
      'x-timestamp': old,
      'x-signature': `sha256=${createHmac('sha256', webhookSecret).update(`${old}.`).update(req!.body).digest('hex')}`,
    };
    t.like(await driver(['verify', bodyFile], base, JSON.stringify(stale)), { error: { reason: 'timestamp_outside_tolerance' } });
    t.like(await driver(['verify', bodyFile], { ...base, WEBHOOK_SECRET: 'another secret' }, headers), { error: { reason: 'invalid_signature' } });
  });

  check(`${lang.name}: retries keep the Idempotency-Key, sign each attempt afresh, honour Retry-After and do not repeat a replayed 5xx`, async (t) => {
    const server = await scriptedServer();
    try {
      const out = await driver(['retries'], { COINKEEP_URL: server.url, COINKEEP_KEY: KEY_ID, COINKEEP_SECRET: SECRET });
      t.like(out.first, { ok: { id: 'inv-1' } });
      t.like(out.replayed, { error: { status: 500, code: 'internal_error' } });
      t.like(out.given, { ok: { id: 'inv-2' } });

      const invoices = server.requests.filter((r) => r.path === '/v1/invoices');
      t.is(invoices.length, 6, 'a dropped connection, 503, 429, 409 in progress, then 201; then one more create');
      const first = invoices.slice(0, 5);
      const key = first[0]!.headers['idempotency-key'] as string;
      t.regex(key, /^[\x21-\x7e]{1,128}$/);
      t.true(
        first.every((r) => r.headers['idempotency-key'] === key),
        'one key across the retries',
      );
      t.is(invoices[5]!.headers['idempotency-key'], 'my-key-1');
      for (const r of server.requests) {
        t.is(r.headers['x-api-key'], KEY_ID);
        t.is(r.headers['content-type'], 'application/json');
        t.is(r.headers['x-signature'], hmacHex(SECRET, canonical(r.headers['x-timestamp'] as string, 'POST', r.path, r.body)));
        t.deepEqual(JSON.parse(r.body).amount !== undefined, true);
      }
      t.is(new Set(first.map((r) => r.headers['x-signature'])).size, 5, 'no signature sent twice');
      t.true(first[3]!.at - first[2]!.at >= 950, `Retry-After: 1 honoured (${first[3]!.at - first[2]!.at} ms)`);
      t.is(server.requests.filter((r) => r.path === '/v1/withdrawals').length, 1, 'a replayed 500 is not retried');
    } finally {
      await server.close();
    }
  });
  const unknown = { error: { status: 404, code: 'not_found' } };

  check(`${lang.name}: stray payments: list, get, credit and refund`, async (t) => {
    const s = await seed();
    const out = await driver(['strays'], { COINKEEP_URL: s.fx.td.url, COINKEEP_KEY: s.keyId, COINKEEP_SECRET: s.secret });
    t.deepEqual(out.listed, [], 'no stray payments: an empty page');
    t.like(out.missing, unknown);
    t.like(out.credit_missing, unknown);
    t.like(out.refund_missing, unknown);
  });

  // Needs the refund routes of PRODUCT §16 (POST /v1/refunds, /v1/invoices/{id}/accept ...).
  check(`${lang.name}: refunds created, read, listed and cancelled; invoices.accept on an underpaid invoice; typed conflicts`, async (t) => {
    const s = await seed();
    const out = await driver(['refunds'], {
      COINKEEP_URL: s.fx.td.url,
      COINKEEP_KEY: s.keyId,
      COINKEEP_SECRET: s.secret,
      COIN_ID: s.coinId,
      PAID_INVOICE_ID: s.paidInvoiceId,
      UNDERPAID_INVOICE_ID: s.underpaidInvoiceId,
    });
    const conflict = (reason?: string) => ({ error: { status: 409, code: 'conflict', ...(reason ? { details: { reason } } : {}) } });

    t.like(out.unpaid, { status: 'new', order_id: `${lang.name}-unpaid` });
    t.like(out.exceeds, conflict('refund_exceeds_received'), 'nothing received: nothing to refund');
    t.deepEqual(out.unpaid_refunds, [], 'an empty page');
    t.like(out.missing, unknown);
    t.like(out.cancel_missing, unknown);

    t.like(out.accepted, { id: s.underpaidInvoiceId, status: 'paid', resolution: 'accepted_underpayment' });
    t.like(out.accept_again, conflict('invoice_not_underpaid'));
    t.like(out.accept_new, conflict('invoice_not_underpaid'));

    const id = out.created.id as string;
    t.like(out.created, {
      status: 'awaiting_address',
      refund_id: `${lang.name}-r1`,
      invoice_id: s.paidInvoiceId,
      coin_id: s.coinId,
      amount: '0.0002',
      to_address: null,
      network_fee_paid_by: 'merchant',
    });
    t.regex(out.created.refund_url, new RegExp(`/pay/${s.paidInvoiceId}/refund/[^/]+$`));
    t.is(out.again.id, id, 'the same refund_id returns the same refund');
    t.like(out.read, { id, status: 'awaiting_address', refund_id: `${lang.name}-r1` });
    t.true((out.listed as string[]).includes(id), 'listed by invoice_id over pages of one');
    t.deepEqual(out.by_refund_id, [id]);
    t.like(out.cancelled, { id, status: 'cancelled' });
    t.like(out.cancel_again, conflict());
  });
}
