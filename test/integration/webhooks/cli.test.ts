/**
 * `coinkeep webhooks ...` through bin/coinkeep against a daemon started with `coinkeep start`, and
 * a local receiver in this process. Failures are one line on stderr with a non-zero exit.
 */
import test, { type ExecutionContext } from 'ava';
import path from 'node:path';
import { Store } from '../../../src/db/store';
import { WebhookDeliveryEntity } from '../../../src/db/entities/webhooks';
import { CliEnv, until } from '../../helpers/cli';
import { signRequest } from '../../helpers/signer';
import { deliveryProblems } from '../../helpers/webhook-verifier';
import { WebhookSink } from '../../helpers/webhook-sink';

const env = new CliEnv();
let sink: WebhookSink;
let apiUrl = '';
let account = '';
let key = { id: '', secret: '' };
const OWNER = 'owner@hooks.test';

async function ok(t: ExecutionContext, args: string[]): Promise<any> {
  const r = await env.run(['--json', ...args]);
  t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  t.is(r.stderr, '');
  return r.json;
}

async function fails(t: ExecutionContext, args: string[], re: RegExp): Promise<void> {
  const r = await env.run(args);
  t.not(r.code, 0, `${args.join(' ')} should fail`);
  t.is(r.stdout, '');
  t.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  t.regex(r.stderr, re);
}

async function createEndpoint(url: string): Promise<{ id: string; secret: string }> {
  const body = JSON.stringify({ url, event_types: ['*'] });
  const target = '/v1/webhooks/endpoints';
  const headers = { ...signRequest({ keyId: key.id, secret: key.secret, method: 'POST', target, body }), 'Content-Type': 'application/json' };
  const res = await fetch(apiUrl + target, { method: 'POST', headers, body });
  const json = (await res.json()) as { id: string; secret: string };
  if (res.status !== 201) throw new Error(JSON.stringify(json));
  return json;
}

/** Changes rows as the daemon's schedule would have over a day (the daemon keeps running). */
async function inStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const store = await Store.open({ url: `sqlite:${path.join(env.dataDir, 'coinkeep.db')}` });
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

test.before(async () => {
  sink = await WebhookSink.start();
  for (const step of [['init'], ['--json', 'start']]) {
    const r = await env.run(step);
    if (r.code !== 0) throw new Error(r.stderr);
    if (step[1] === 'start') apiUrl = r.json.api_url;
  }
  account = (await env.run(['--json', 'account', 'create', '--name', 'Hooks', '--owner', OWNER])).json.account.id;
  const k = (await env.run(['--json', 'keys', 'create', '--account', account, '--as', OWNER, '--name', 'backend', '--permissions', 'read,create_invoice'])).json
    .key;
  key = { id: k.key_id, secret: k.secret };
});
test.after.always(async () => {
  await env.cleanup();
  await sink?.close();
});

test.serial('webhooks ping sends a signed ping with endpoint_id and message; deliveries lists it', async (t) => {
  const ep = await createEndpoint(sink.url('/cli-ping'));
  const r = await ok(t, ['webhooks', 'ping', '--account', account, ep.id, '--message', 'hello from the CLI']);
  t.like(r.delivery, { event_type: 'ping', endpoint_id: ep.id });
  const [req] = await sink.waitFor('/cli-ping', 1);
  t.deepEqual(deliveryProblems(req!, ep.secret, { nowSeconds: Date.now() / 1000 }), []);
  t.deepEqual(JSON.parse(req!.body.toString()).data, { endpoint_id: ep.id, message: 'hello from the CLI' });
  const list = await until(async () => {
    const l = await ok(t, ['webhooks', 'deliveries', '--account', account, '--status', 'succeeded']);
    return l.items.length === 1 ? l : null;
  });
  t.is(list.items[0].id, r.delivery.id);
  const human = await env.run(['webhooks', 'deliveries', '--account', account]);
  t.regex(human.stdout, new RegExp(`${r.delivery.id}  succeeded  ping  attempts 1`));
  await fails(t, ['webhooks', 'ping', '--account', account, '00000000-0000-4000-8000-000000000000'], /webhook endpoint not found \[not_found\]/);
  await fails(t, ['webhooks', 'deliveries', '--account', account, '--status', 'lost'], /status must be one of .* \[validation_error\] field: status$/m);
});

test.serial('webhooks replay resends a failed delivery, refuses a pending one, and --all-exhausted --since resends the exhausted ones', async (t) => {
  const ep = await createEndpoint(sink.url('/cli-replay', 500));
  const pinged = await ok(t, ['webhooks', 'ping', '--account', account, ep.id]);
  const id = pinged.delivery.id as string;
  await until(async () => (await ok(t, ['webhooks', 'deliveries', '--account', account, '--status', 'failed'])).items.some((d: { id: string }) => d.id === id));
  sink.set('/cli-replay', 'hang');
  const replayed = await ok(t, ['webhooks', 'replay', '--account', account, id]);
  t.like(replayed.delivery, { id, status: 'pending' });
  await sink.waitFor('/cli-replay', 2);
  await fails(t, ['webhooks', 'replay', '--account', account, id], /still pending.*\[conflict\]/);
  await fails(t, ['webhooks', 'replay', '--account', account], /missing required argument <delivery_id> \(or --all-exhausted --since TIME\)/);
  await fails(t, ['webhooks', 'replay', '--account', account, '--all-exhausted'], /needs --since/);
  await fails(t, ['webhooks', 'replay', '--account', account, '--all-exhausted', '--since', 'last week'], /since must be an RFC 3339 time/);

  sink.set('/cli-replay', 'ok');
  sink.release();
  await until(async () => (await ok(t, ['webhooks', 'deliveries', '--account', account, '--status', 'failed'])).items.some((d: { id: string }) => d.id === id));
  // As after the seventh failed attempt.
  await inStore((s) => s.write((em) => em.update(WebhookDeliveryEntity, { id }, { status: 'exhausted', next_attempt_at: null })).then(() => undefined));
  const exhausted = await ok(t, ['webhooks', 'deliveries', '--account', account, '--status', 'exhausted']);
  t.deepEqual(
    exhausted.items.map((d: { id: string }) => d.id),
    [id],
  );
  const later = await ok(t, ['webhooks', 'replay', '--account', account, '--all-exhausted', '--since', new Date(Date.now() + 60_000).toISOString()]);
  t.deepEqual(later, { replayed: 0 });
  const all = await ok(t, ['webhooks', 'replay', '--account', account, '--all-exhausted', '--since', new Date(Date.now() - 3_600_000).toISOString()]);
  t.deepEqual(all, { replayed: 1 });
  await sink.waitFor('/cli-replay', 3);
  await until(async () =>
    (await ok(t, ['webhooks', 'deliveries', '--account', account, '--status', 'succeeded'])).items.some((d: { id: string }) => d.id === id),
  );
});

test.serial('webhooks secret shows the invoice-callback secret, the same each time, and --rotate replaces it', async (t) => {
  const first = await ok(t, ['webhooks', 'secret', '--account', account]);
  t.regex(first.callback_secret.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  t.is(first.callback_secret.secret_last4, first.callback_secret.secret.slice(-4));
  t.is((await ok(t, ['webhooks', 'secret', '--account', account])).callback_secret.secret, first.callback_secret.secret);
  const rotated = await ok(t, ['webhooks', 'secret', '--account', account, '--rotate']);
  t.not(rotated.callback_secret.secret, first.callback_secret.secret);
  t.is((await ok(t, ['webhooks', 'secret', '--account', account])).callback_secret.secret, rotated.callback_secret.secret);
  const human = await env.run(['webhooks', 'secret', '--account', account]);
  t.true(human.stdout.includes(`invoice-callback secret: ${rotated.callback_secret.secret}`));
  await fails(t, ['webhooks', 'secret', '--account', '00000000-0000-4000-8000-000000000000'], /account not found \[not_found\]/);
  await fails(t, ['webhooks'], /name a subcommand \(deliveries, replay, ping, secret\)/);
});
