import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { IdempotencyEntity } from '../../../src/db/entities/auth';
import { Sealer } from '../../../src/db/seal';
import { cells } from '../../../src/db/sealed-values';
import { Store } from '../../../src/db/store';
import { ABANDONED_AFTER_MS, Idempotency } from '../../../src/http/idempotency';
import { createApp } from '../../../src/http/app';
import { newRouter } from '../../../src/http/context';
import { FakeClock } from '../../../src/shared/clock';
import { silentLogger } from '../../../src/shared/logger';
import { call } from '../../helpers/api-client';
import { failNextWrites } from '../../helpers/failing-writes';
import { tempPostgres } from '../../helpers/pg-database';

/**
 * SPEC "Idempotency (POST)" 5: a request that never finished (its daemon died, or it hangs) is
 * answered with a stored 500 from then on, never left as 409 in_progress. A claim that may still be
 * running elsewhere (PostgreSQL shared by several daemons) is left alone until it is 10 minutes old.
 */

const START = '2026-03-01T12:00:00.000Z';

async function sqliteStore(t: ExecutionContext): Promise<Store> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-idem-'));
  const store = await Store.open({ url: `sqlite:${path.join(dir, 'coinkeep.db')}` });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

async function postgresStore(t: ExecutionContext, url: string): Promise<Store> {
  const store = await Store.open({ url });
  t.teardown(() => store.close());
  return store;
}

/** Two claims left in progress: one just made, one older than ABANDONED_AFTER_MS. */
async function claims(store: Store, clock: FakeClock): Promise<void> {
  await store.migrate();
  const claim = (key: string, ageMs: number) => ({
    scope: 'key:test',
    key,
    fingerprint: 'f'.repeat(64),
    state: 'in_progress' as const,
    response_status: null,
    response_body: null,
    created_at: new Date(clock.now().getTime() - ageMs).toISOString(),
    expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
  });
  await store.write((em) => em.insert(IdempotencyEntity, [claim('fresh', 1000), claim('old', ABANDONED_AFTER_MS + 1000)]));
}

const sealer = new Sealer(randomBytes(32));

const stateOf = async (store: Store, key: string) => {
  const row = await store.read.findOneByOrFail(IdempotencyEntity, { scope: 'key:test', key });
  const body = row.response_body ? JSON.parse(sealer.open(row.response_body, cells.storedAnswer('key:test', key))) : null;
  return { state: row.state, status: row.response_status, code: body ? body.error.code : null };
};
const ANSWERED = { state: 'done', status: 500, code: 'internal_error' };
const RUNNING = { state: 'in_progress', status: null, code: null };

test('SQLite: at start every claim was abandoned (one daemon owns the database) and becomes a stored 500', async (t) => {
  const clock = new FakeClock(START);
  const store = await sqliteStore(t);
  await claims(store, clock);
  await new Idempotency(store, sealer, clock, silentLogger).recoverAbandoned({ atStart: true });
  t.deepEqual(await stateOf(store, 'fresh'), ANSWERED);
  t.deepEqual(await stateOf(store, 'old'), ANSWERED);
});

test('the periodic upkeep answers only claims older than 10 minutes (a request that hangs), never a running one', async (t) => {
  const clock = new FakeClock(START);
  const store = await sqliteStore(t);
  await claims(store, clock);
  const idempotency = new Idempotency(store, sealer, clock, silentLogger);
  await idempotency.upkeep();
  t.deepEqual(await stateOf(store, 'fresh'), RUNNING);
  t.deepEqual(await stateOf(store, 'old'), ANSWERED);
  clock.advance(ABANDONED_AFTER_MS);
  await idempotency.upkeep();
  t.deepEqual(await stateOf(store, 'fresh'), ANSWERED);
});

test('PostgreSQL: a daemon starting beside others leaves their running claims alone', async (t) => {
  const url = await tempPostgres(t);
  const clock = new FakeClock(START);
  const store = await postgresStore(t, url);
  await claims(store, clock);
  await new Idempotency(store, sealer, clock, silentLogger).recoverAbandoned({ atStart: true });
  t.deepEqual(await stateOf(store, 'fresh'), RUNNING);
  t.deepEqual(await stateOf(store, 'old'), ANSWERED);
});

test('an answer that could not be stored is replayed from memory meanwhile, and the next upkeep stores it instead of a 500', async (t) => {
  const clock = new FakeClock(START);
  const store = await sqliteStore(t);
  await store.migrate();
  const idempotency = new Idempotency(store, sealer, clock, silentLogger);
  let runs = 0;
  const router = newRouter();
  router.post(
    '/things',
    idempotency.middleware(() => ({ scope: 'key:test', ttlMs: 86_400_000 })),
    async (ctx) => {
      runs++;
      ctx.status = 201;
      ctx.body = { id: `thing-${runs}` };
      // Storing the answer fails twice.
      failNextWrites(store, 2);
    },
  );
  const server = createApp({ logger: silentLogger, trustProxy: 0, routers: [router] }).listen(0, '127.0.0.1');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = () => call(base, '/things', { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1' } });

  const first = await post();
  t.is(first.status, 201, first.text);
  t.deepEqual(await stateOf(store, 'k1'), RUNNING);
  const meanwhile = await post();
  t.is(meanwhile.headers['idempotent-replayed'], 'true');
  t.deepEqual(meanwhile.json, { id: 'thing-1' });

  await idempotency.upkeep();
  const row = await store.read.findOneByOrFail(IdempotencyEntity, { scope: 'key:test', key: 'k1' });
  t.like(row, { state: 'done', response_status: 201 });
  t.deepEqual(JSON.parse(sealer.open(row.response_body!, cells.storedAnswer('key:test', 'k1'))), { id: 'thing-1' });
  t.is(runs, 1);
});
