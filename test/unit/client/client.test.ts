import test from 'ava';
import {
  CLIENT_ROUTES,
  Coinkeep,
  CoinkeepConnectionError,
  CoinkeepError,
  WebhookVerificationError,
  canonicalString,
  requestSignature,
  verifyWebhook,
} from '../../../src/client/index';
import { openApiDocument } from '../../../src/http/api-registry';
import { readSharedVectors } from '../../helpers/vectors';

interface RequestVector {
  name: string;
  secret: string;
  method: string;
  target: string;
  timestamp: string;
  body: string;
  canonical: string;
  signature: string;
}
interface WebhookVectors {
  secret: string;
  cases: Array<{ name: string; timestamp: string; body: string; signature: string; valid: boolean }>;
}

test('the client signs the shared request vectors exactly', (t) => {
  const { vectors } = readSharedVectors<{ vectors: RequestVector[] }>('request-signing.json');
  t.true(vectors.length >= 4);
  for (const v of vectors) {
    const canonical = canonicalString(v.timestamp, v.method, v.target, v.body);
    t.is(canonical, v.canonical, v.name);
    t.is(requestSignature(v.secret, canonical), v.signature, v.name);
  }
});

test('webhooks.verify accepts exactly the valid shared webhook vectors and returns the event', (t) => {
  const { secret, cases } = readSharedVectors<WebhookVectors>('webhook-signing.json');
  for (const c of cases) {
    const headers = { 'x-timestamp': c.timestamp, 'x-signature': c.signature };
    const verify = () => verifyWebhook(c.body, headers, secret, { toleranceSeconds: 300, nowSeconds: Number(c.timestamp) });
    if (c.valid) t.is(verify().event_id, JSON.parse(c.body).event_id, c.name);
    else t.throws(verify, { instanceOf: WebhookVerificationError }, c.name);
  }
});

test('webhooks.verify refuses a valid signature outside the tolerance, and takes Headers too', (t) => {
  const { secret, cases } = readSharedVectors<WebhookVectors>('webhook-signing.json');
  const c = cases.find((x) => x.valid)!;
  const headers = new Headers({ 'X-Timestamp': c.timestamp, 'X-Signature': c.signature });
  t.notThrows(() => verifyWebhook(Buffer.from(c.body), headers, secret, { nowSeconds: Number(c.timestamp) + 300 }));
  t.throws(() => verifyWebhook(c.body, headers, secret, { nowSeconds: Number(c.timestamp) + 301 }), { message: /more than 300 s/ });
  t.throws(() => verifyWebhook(c.body, headers, secret, { nowSeconds: Number(c.timestamp) - 301 }), { message: /more than 300 s/ });
});

test('every route the client calls is a path and method of the OpenAPI document, and every resource route of the document has a client method', (t) => {
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  const called = new Set<string>();
  for (const [name, [method, path]] of Object.entries(CLIENT_ROUTES)) {
    t.truthy(doc.paths[path]?.[method.toLowerCase()], `${name}: ${method} ${path} is not in the document`);
    called.add(`${method} ${path}`);
  }
  const resourceRoutes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  const uncovered = resourceRoutes.filter((r) => !called.has(r) && !/\/v1\/(openapi\.json|embed|account\/)/.test(r));
  t.deepEqual(uncovered, []);
});

/** A fake fetch answering from a script, recording every request. */
function scripted(answers: Array<Response | Error>) {
  const seen: Array<{ url: string; method: string; headers: Record<string, string>; body: string | undefined }> = [];
  const fetch = (async (url: string, init: RequestInit) => {
    seen.push({ url, method: init.method!, headers: init.headers as Record<string, string>, body: init.body as string | undefined });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    if (next instanceof Error) throw next;
    return next;
  }) as unknown as typeof globalThis.fetch;
  return { fetch, seen };
}
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const apiError = (status: number, code: string, details = {}, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: code, details } }, headers);

function client(answers: Array<Response | Error>, opts: { maxRetries?: number } = {}) {
  const s = scripted(answers);
  const waits: number[] = [];
  const ck = new Coinkeep({
    baseUrl: 'http://api.test/',
    keyId: 'ck_test_k',
    secret: 'secret',
    fetch: s.fetch,
    now: () => 1_767_225_600_000,
    sleep: async (ms) => void waits.push(ms),
    ...opts,
  });
  return { ck, seen: s.seen, waits };
}

test('a POST carries one Idempotency-Key across a network error, 409 idempotency.in_progress and a 500, each attempt signed anew and never with a repeated timestamp', async (t) => {
  const { ck, seen, waits } = client([
    new TypeError('fetch failed'),
    apiError(409, 'idempotency.in_progress'),
    apiError(500, 'internal_error'),
    json(201, { id: 'inv' }),
  ]);
  const invoice = await ck.invoices.create({ amount: '10', currency: 'USD' });
  t.is((invoice as { id: string }).id, 'inv');
  t.is(seen.length, 4);
  const keys = new Set(seen.map((s) => s.headers['Idempotency-Key']));
  t.is(keys.size, 1);
  t.regex([...keys][0]!, /^[0-9a-f-]{36}$/);
  t.deepEqual(
    seen.map((s) => s.headers['X-Timestamp']),
    ['1767225600', '1767225601', '1767225602', '1767225603'],
  );
  for (const s of seen) {
    const canonical = canonicalString(s.headers['X-Timestamp']!, 'POST', '/v1/invoices', s.body);
    t.is(s.headers['X-Signature'], requestSignature('secret', canonical));
    t.is(s.url, 'http://api.test/v1/invoices');
  }
  t.is(waits.length, 3);
  // Exponential backoff with jitter: each wait between half and all of 500, 1000, 2000 ms.
  waits.forEach((w, i) => t.true(w >= 250 * 2 ** i && w <= 500 * 2 ** i, `wait ${i}: ${w}`));
});

test('a caller-chosen Idempotency-Key is sent as given; a 429 waits what Retry-After says', async (t) => {
  const { ck, seen, waits } = client([apiError(429, 'rate_limited', { scope: 'key' }, { 'Retry-After': '7' }), json(201, { id: 'w' })]);
  await ck.withdrawals.create({ coin_id: '00000000-0000-4000-8000-000000000000', amount: '1', to_address: 'x' }, { idempotencyKey: 'order-42' });
  t.deepEqual(
    seen.map((s) => s.headers['Idempotency-Key']),
    ['order-42', 'order-42'],
  );
  t.deepEqual(waits, [7000]);
});

test('a 4xx is not retried and is thrown as CoinkeepError with code and details; a GET sends no Idempotency-Key', async (t) => {
  const { ck, seen } = client([apiError(400, 'validation_error', { field: 'amount' })]);
  const err = await t.throwsAsync(ck.invoices.get('abc'), { instanceOf: CoinkeepError });
  t.is(err!.status, 400);
  t.is(err!.code, 'validation_error');
  t.deepEqual(err!.details, { field: 'amount' });
  t.is(seen.length, 1);
  t.false('Idempotency-Key' in seen[0]!.headers);
  t.is(seen[0]!.url, 'http://api.test/v1/invoices/abc');
});

test('retries stop after maxRetries: the last 503 is thrown, a network failure becomes CoinkeepConnectionError', async (t) => {
  const a = client([apiError(503, 'unavailable'), apiError(503, 'unavailable'), apiError(503, 'unavailable')], { maxRetries: 2 });
  t.is((await t.throwsAsync(a.ck.balances.list(), { instanceOf: CoinkeepError }))!.code, 'unavailable');
  t.is(a.seen.length, 3);
  const b = client([new TypeError('fetch failed'), new TypeError('fetch failed')], { maxRetries: 1 });
  await t.throwsAsync(b.ck.currencies.list(), { instanceOf: CoinkeepConnectionError });
});

test('a list is a page when awaited and every item of every page when iterated, following next_cursor with the same filters', async (t) => {
  const { ck, seen } = client([
    json(200, { items: [{ id: 1 }, { id: 2 }], next_cursor: 'c1' }),
    json(200, { items: [{ id: 3 }], next_cursor: null }),
    json(200, { items: [{ id: 9 }], next_cursor: 'x' }),
  ]);
  const ids: number[] = [];
  for await (const inv of ck.invoices.list({ status: 'paid', limit: 2 })) ids.push((inv as unknown as { id: number }).id);
  t.deepEqual(ids, [1, 2, 3]);
  t.deepEqual(
    seen.map((s) => s.url),
    ['http://api.test/v1/invoices?status=paid&limit=2', 'http://api.test/v1/invoices?status=paid&limit=2&cursor=c1'],
  );
  const page = await ck.invoices.list();
  t.is(page.next_cursor, 'x');
});
