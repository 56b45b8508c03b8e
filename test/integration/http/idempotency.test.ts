import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { IdempotencyEntity } from '../../../src/db/entities/auth';
import { newRouter } from '../../../src/http/context';
import { unavailable, validationError } from '../../../src/shared/errors';
import { freshSourceIp, SignedClient, type ApiResponse } from '../../helpers/api-client';
import { failNextWrites } from '../../helpers/failing-writes';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';

/**
 * SPEC "Idempotency (POST)" 1–6 through the real daemon. A test router is mounted through the
 * daemon's `extraRouters` with the real authentication and the real idempotency middleware, so its
 * handler can count runs, hold the first request and fail on demand (idempotency-invoices.test.ts
 * proves the same on POST /v1/invoices).
 */

const runs = new Map<string, number>();
const gates = new Map<string, () => void>();
const entered = new Map<string, () => void>();
/** Called when a request reaches the idempotency layer (it is authenticated and about to claim). */
const arrived = new Map<string, () => void>();
let d: TestDaemon;

let from: string;

const extraRouters: NonNullable<Parameters<typeof startTestDaemon>[1]>['extraRouters'] = ({ authenticate, idempotent }) => {
  const r = newRouter('/test');
  const create = async (ctx: Parameters<Parameters<typeof r.post>[1]>[0]) => {
    const body = ctx.state.body as { tag?: string; fail?: string; wait?: boolean; holdFirst?: boolean; failStoring?: number };
    const tag = String(body.tag);
    runs.set(tag, (runs.get(tag) ?? 0) + 1);
    if (body.wait || (body.holdFirst && runs.get(tag) === 1)) {
      entered.get(tag)?.();
      await new Promise<void>((resolve) => gates.set(tag, resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    if (body.fail === 'validation') throw validationError('tag', 'refused on purpose');
    if (body.fail === 'boom') throw new Error('boom');
    if (body.fail === 'unavailable') throw unavailable('no rate now');
    ctx.status = 201;
    ctx.body = { id: randomUUID(), tag, run: runs.get(tag) };
    if (body.failStoring) failNextWrites(d.daemon.store, body.failStoring);
  };
  const arrive = async (ctx: Parameters<Parameters<typeof r.post>[1]>[0], next: () => Promise<unknown>) => {
    arrived.get(String((ctx.state.body as { tag?: string }).tag))?.();
    await next();
  };
  r.post('/things', authenticate('create_invoice'), arrive, idempotent, create);
  r.post('/other-things', authenticate('create_invoice'), idempotent, create);
  return [r];
};

test.before(async () => {
  d = await startTestDaemon({}, { extraRouters });
  from = freshSourceIp();
});
test.after.always(async () => {
  await d?.stop();
});

async function client() {
  const m = await merchantWithKey(d.daemon);
  return new SignedClient(d.url, m.keyId, m.secret);
}

const post = (c: SignedClient, body: object, key?: string, path = '/test/things'): Promise<ApiResponse> =>
  c.post(path, body, { from, headers: key === undefined ? {} : { 'Idempotency-Key': key } });

async function twentyInParallel(t: ExecutionContext, c: SignedClient): Promise<void> {
  const tag = randomUUID();
  const answers = await Promise.all(Array.from({ length: 20 }, () => post(c, { tag }, `order-${tag}`)));
  t.is(runs.get(tag), 1, 'created once');
  for (const a of answers) t.is(a.status, 201, a.text);
  const ids = new Set(answers.map((a) => a.json.id as string));
  t.is(ids.size, 1);
  t.is(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 19);
  t.is(answers.filter((a) => a.headers['idempotent-replayed'] === undefined).length, 1);
  // Later repeats replay it too.
  const later = await post(c, { tag }, `order-${tag}`);
  t.is(later.status, 201);
  t.deepEqual(later.json, answers[0]!.json);
  t.is(later.headers['idempotent-replayed'], 'true');
  t.is(runs.get(tag), 1);
}

test('20 identical POSTs in parallel under one key: one creation, the same id in every answer', async (t) => {
  await twentyInParallel(t, await client());
});

test('20 identical POSTs in parallel on PostgreSQL: one creation, the same id in every answer', async (t) => {
  const url = await tempPostgres(t);
  const pgd = await startTestDaemon({ database: { url } }, { extraRouters });
  try {
    const m = await merchantWithKey(pgd.daemon);
    await twentyInParallel(t, new SignedClient(pgd.url, m.keyId, m.secret));
  } finally {
    await pgd.stop();
  }
});

test('without a key every POST runs; keys are remembered per API key', async (t) => {
  const c = await client();
  const tag = randomUUID();
  const a = await post(c, { tag });
  const b = await post(c, { tag });
  t.not(a.json.id, b.json.id);
  t.is(runs.get(tag), 2);
  const k = `shared-${tag}`;
  const mine = await post(c, { tag }, k);
  const theirs = await post(await client(), { tag }, k);
  t.is(theirs.headers['idempotent-replayed'], undefined);
  t.not(mine.json.id, theirs.json.id);
  t.is(runs.get(tag), 4);
});

test('the same key with another body or path is 422 idempotency.mismatch, and nothing runs', async (t) => {
  const c = await client();
  const tag = randomUUID();
  const k = `m-${tag}`;
  t.is((await post(c, { tag }, k)).status, 201);
  for (const [body, path] of [
    [{ tag, extra: 1 }, '/test/things'],
    [{ tag }, '/test/other-things'],
    [{ tag }, '/test/things?x=1'],
  ] as const) {
    const res = await post(c, body, k, path);
    t.is(res.status, 422, res.text);
    t.is(res.json.error.code, 'idempotency.mismatch');
  }
  // Byte-exact: the same JSON with other spacing is another request.
  const spaced = await c.post('/test/things', `{ "tag": "${tag}" }`, { from, headers: { 'Idempotency-Key': k } });
  t.is(spaced.json.error.code, 'idempotency.mismatch');
  t.is(runs.get(tag), 1);
});

test('while the first runs, a repeat is 409 idempotency.in_progress; afterwards it replays', async (t) => {
  const c = await client();
  const tag = randomUUID();
  const k = `p-${tag}`;
  const inside = new Promise<void>((resolve) => entered.set(tag, resolve));
  const first = post(c, { tag, wait: true }, k);
  await inside;
  const second = await post(c, { tag, wait: true }, k);
  t.is(second.status, 409, second.text);
  t.is(second.json.error.code, 'idempotency.in_progress');
  gates.get(tag)!();
  const done = await first;
  t.is(done.status, 201);
  const third = await post(c, { tag, wait: true }, k);
  t.is(third.headers['idempotent-replayed'], 'true');
  t.is(third.json.id, done.json.id);
  t.is(runs.get(tag), 1);
});

test('a 4xx releases the key: the same request runs again, and so does a corrected one', async (t) => {
  const c = await client();
  const tag = randomUUID();
  const k = `v-${tag}`;
  for (let i = 0; i < 2; i++) {
    const res = await post(c, { tag, fail: 'validation' }, k);
    t.is(res.status, 400);
    t.is(res.json.error.details.field, 'tag');
    t.is(res.headers['idempotent-replayed'], undefined);
  }
  t.is(runs.get(tag), 2);
  const fixed = await post(c, { tag }, k);
  t.is(fixed.status, 201, fixed.text);
  t.is(runs.get(tag), 3);
});

test('a repeat waiting on a request that ends in 4xx gets the freed key at once and runs, never idempotency.in_progress', async (t) => {
  const c = await client();
  const tag = randomUUID();
  const k = `w-${tag}`;
  const body = { tag, holdFirst: true, fail: 'validation' };
  const inside = new Promise<void>((resolve) => entered.set(tag, resolve));
  const first = post(c, body, k);
  await inside;
  const waiting = new Promise<void>((resolve) => arrived.set(tag, resolve));
  const second = post(c, body, k);
  await waiting;
  gates.get(tag)!();
  const [a, b] = await Promise.all([first, second]);
  t.is(a.status, 400);
  t.is(b.status, 400, b.text);
  t.is(b.json.error.code, 'validation_error');
  t.is(b.json.error.details.field, 'tag');
  t.is(b.headers['idempotent-replayed'], undefined, 'it ran itself');
  t.is(runs.get(tag), 2);
});

test.serial('a request that ran but whose answer failed to be stored still answers it, and a repeat replays it instead of a stored 500', async (t) => {
  const c = await client();
  for (const failures of [1, 2]) {
    const tag = randomUUID();
    const k = `s-${tag}`;
    const first = await post(c, { tag, failStoring: failures }, k);
    t.is(first.status, 201, first.text);
    const again = await post(c, { tag, failStoring: failures }, k);
    t.is(again.status, 201, again.text);
    t.is(again.headers['idempotent-replayed'], 'true');
    t.deepEqual(again.json, first.json);
    t.is(runs.get(tag), 1);
    const row = await d.daemon.store.read.findOneByOrFail(IdempotencyEntity, { key: k });
    // One failure: stored on the second try. Two: kept for the upkeep, replayed meanwhile.
    t.is(row.state, failures === 1 ? 'done' : 'in_progress');
  }
});

test('a 5xx is stored and replayed; a 503 unavailable releases the key', async (t) => {
  const c = await client();
  const tag = randomUUID();
  const boom = await post(c, { tag, fail: 'boom' }, `b-${tag}`);
  t.is(boom.status, 500);
  t.is(boom.json.error.code, 'internal_error');
  const again = await post(c, { tag, fail: 'boom' }, `b-${tag}`);
  t.is(again.status, 500);
  t.is(again.headers['idempotent-replayed'], 'true');
  t.deepEqual(again.json, boom.json, 'same request id');
  t.is(runs.get(tag), 1);

  const tag2 = randomUUID();
  for (let i = 0; i < 2; i++) {
    const res = await post(c, { tag: tag2, fail: 'unavailable' }, `u-${tag2}`);
    t.is(res.status, 503);
    t.is(res.json.error.code, 'unavailable');
    t.is(res.headers['idempotent-replayed'], undefined);
  }
  t.is(runs.get(tag2), 2);
});

test('a key that is not 1–128 printable ASCII is validation_error on the header, and nothing runs', async (t) => {
  const c = await client();
  const tag = randomUUID();
  for (const bad of ['k'.repeat(129), 'caf\u00e9', 'tab\there']) {
    const res = await post(c, { tag }, bad);
    t.is(res.status, 400, res.text);
    t.is(res.json.error.code, 'validation_error');
    t.is(res.json.error.details.field, 'Idempotency-Key');
  }
  t.is(runs.get(tag), undefined);
  t.is((await post(c, { tag }, '~'.repeat(128))).status, 201);
  t.is((await post(c, { tag }, ' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}')).status, 201);
  t.is(runs.get(tag), 2);
});

test('a refused authentication runs nothing and claims no idempotency key', async (t) => {
  const m = await merchantWithKey(d.daemon);
  const c = new SignedClient(d.url, m.keyId, m.secret);
  const tag = randomUUID();
  const headers = { 'Idempotency-Key': `auth-${tag}` };
  const bad = await c.request('POST', '/test/things', { body: JSON.stringify({ tag }), headers, from, secret: 'q'.repeat(43) });
  t.is(bad.status, 401);
  t.is(bad.json.error.code, 'auth.invalid_signature');
  const readOnly = await merchantWithKey(d.daemon, { permissions: ['read'] });
  const denied = await new SignedClient(d.url, readOnly.keyId, readOnly.secret).post('/test/things', { tag }, { from, headers });
  t.is(denied.status, 403);
  t.is(denied.json.error.code, 'auth.permission_denied');
  t.is(runs.get(tag), undefined, 'nothing ran');

  const ok = await post(c, { tag }, headers['Idempotency-Key']);
  t.is(ok.status, 201, ok.text);
  t.is(ok.headers['idempotent-replayed'], undefined, 'the key was still free');
  t.is(runs.get(tag), 1);
});
