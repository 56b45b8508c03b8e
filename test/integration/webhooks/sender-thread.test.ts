import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { signedPost } from '../../../src/webhooks/delivery-signer';
import { ThreadTransport } from '../../../src/webhooks/thread-transport';
import { NOT_SENT } from '../../../src/webhooks/transport';
import { until } from '../../helpers/cli';
import { signatureValid } from '../../helpers/webhook-verifier';

const event = { id: '00000000-0000-4000-8000-000000000001', type: 'ping', body: '{"event_id":"00000000-0000-4000-8000-000000000001"}' };

/** A receiver on 127.0.0.1 that answers 200, or never answers on /hang. */
async function receiver() {
  const seen: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      if (req.url !== '/hang') res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('the sender thread sends the signed POST the dispatcher gives it, and answers with the outcome', async (t) => {
  const r = await receiver();
  const sender = new ThreadTransport({ allowPrivate: true, perTarget: 8, maxInFlight: 64 });
  try {
    const now = new Date();
    const results = await Promise.all([1, 2, 3].map(() => sender.post(signedPost(`${r.base}/hook`, event, 'whsec_test', now))));
    for (const res of results) t.like(res, { ok: true, responseStatus: 200, error: null });
    t.is(r.seen.length, 3);
    const { headers, body } = r.seen[0]!;
    t.is(body, event.body);
    t.is(headers['x-timestamp'], String(Math.floor(now.getTime() / 1000)));
    t.true(signatureValid('whsec_test', String(headers['x-timestamp']), body, String(headers['x-signature'])));
  } finally {
    sender.close();
    await r.close();
  }
});

test('the thread keeps the target guard: without allow_private_targets a loopback target is refused', async (t) => {
  const sender = new ThreadTransport({ allowPrivate: false, perTarget: 8, maxInFlight: 64 });
  try {
    t.like(await sender.post(signedPost('https://127.0.0.1/hook', event, 's', new Date())), {
      ok: false,
      error: 'target refused: the host is a loopback address',
    });
  } finally {
    sender.close();
  }
});

test('a stop cuts the attempts in flight short, and a close ends what is still waiting', async (t) => {
  const r = await receiver();
  const sender = new ThreadTransport({ allowPrivate: true, perTarget: 8, maxInFlight: 64 });
  try {
    const stop = new AbortController();
    const hanging = sender.post(signedPost(`${r.base}/hang`, event, 's', new Date()), stop.signal);
    await until(() => r.seen.length === 1 || null, 5000, 'the attempt to arrive');
    stop.abort();
    t.like(await hanging, { ok: false, error: 'interrupted: the daemon stopped during the attempt' });
    t.like(await sender.post(signedPost(`${r.base}/hook`, event, 's', new Date()), stop.signal), {
      ok: false,
      error: 'interrupted: the daemon stopped during the attempt',
    });

    const waiting = sender.post(signedPost(`${r.base}/hang`, event, 's', new Date()));
    await until(() => r.seen.length === 2 || null, 5000, 'the second attempt to arrive');
    sender.close();
    t.like(await waiting, { ok: false, responseStatus: null, error: 'the sender stopped' });
  } finally {
    sender.close();
    await r.close();
  }
});

test("the thread keeps the bounds: past them attempts wait in their target's line, a cancel or a stop answers those unsent", async (t) => {
  const r = await receiver();
  const sender = new ThreadTransport({ allowPrivate: true, perTarget: 2, maxInFlight: 3 });
  try {
    const stop = new AbortController();
    const a = [1, 2, 3, 4].map(() => sender.post(signedPost(`${r.base}/hang`, event, 's', new Date(), 'endpoint-a'), stop.signal));
    const b = [1, 2].map(() => sender.post(signedPost(`${r.base}/hang`, event, 's', new Date(), 'endpoint-b'), stop.signal));
    await until(() => r.seen.length === 3 || null, 5000, 'three attempts in flight');
    // The rest answer "not sent" (never "interrupted"): they waited in line and never went out.
    sender.cancel('endpoint-a');
    t.deepEqual(await Promise.all(a.slice(2)), [NOT_SENT, NOT_SENT]);
    stop.abort();
    for (const res of await Promise.all([...a.slice(0, 2), b[0]!])) t.like(res, { ok: false, error: 'interrupted: the daemon stopped during the attempt' });
    t.deepEqual(await b[1], NOT_SENT);
    t.is(r.seen.length, 3, 'two for endpoint-a, one for endpoint-b: the overall bound held the rest');
  } finally {
    sender.close();
    await r.close();
  }
});
