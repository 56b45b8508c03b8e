import http from 'node:http';
import test from 'ava';
import { STREAMS_PER_ADDRESS } from '../../../src/checkout/status-stream';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

let f: InvoiceFixture;
test.before(async () => {
  f = await startInvoiceFixture({ overrides: { trust_proxy: 1 } });
});
test.after.always(() => f?.stop());

interface Stream {
  status: number;
  type: string;
  views: Array<{ status: string; [k: string]: unknown }>;
  ended: boolean;
  /** Resolves once a view passes `ok` (or the stream ended: then rejects). */
  until(ok: (v: { status: string }) => boolean, ms?: number): Promise<{ status: string }>;
  close(): void;
}

/** GET /pay/{id}/events as an EventSource would, from client address `ip`. */
function openStream(id: string, ip = '10.9.0.1'): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${f.td.url}/pay/${id}/events`, { headers: { accept: 'text/event-stream', 'x-forwarded-for': ip } }, (res) => {
      const s: Stream = {
        status: res.statusCode ?? 0,
        type: String(res.headers['content-type']),
        views: [],
        ended: false,
        until: async (ok, ms = 10_000) => {
          const deadline = Date.now() + ms;
          for (;;) {
            const hit = s.views.find(ok);
            if (hit) return hit;
            if (s.ended) throw new Error(`the stream ended without it: ${JSON.stringify(s.views.map((v) => v.status))}`);
            if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${JSON.stringify(s.views.map((v) => v.status))}`);
            await new Promise((r) => setTimeout(r, 10));
          }
        },
        close: () => req.destroy(),
      };
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const data = buf
            .slice(0, i)
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          buf = buf.slice(i + 2);
          if (data) s.views.push(JSON.parse(data) as { status: string });
        }
      });
      res.on('end', () => (s.ended = true));
      res.on('close', () => (s.ended = true));
      resolve(s);
    });
    req.on('error', reject);
  });
}

const ethInvoice = async () => {
  const res = await f.api.post('/v1/invoices', { amount: '0.01', currency: 'ETH', coin_id: COINS.ETH });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; address: string; payer_amount: string };
};

test('an open page is told each change as it commits, pending then paid, and the stream ends when final', async (t) => {
  const inv = await ethInvoice();
  const a = await openStream(inv.id);
  const b = await openStream(inv.id, '10.9.0.2');
  t.is(a.status, 200);
  t.is(a.type, 'text/event-stream; charset=utf-8');
  t.is((await a.until((v) => v.status === 'new')).status, 'new');
  const chain = f.chain('ethereum');
  const transfer = await chain.send(inv.address, COINS.ETH, inv.payer_amount);
  await a.until((v) => v.status === 'pending');
  await chain.confirm(transfer);
  const paid = await a.until((v) => v.status === 'paid');
  t.like(paid, { id: inv.id, paid_amount: inv.payer_amount });
  await b.until((v) => v.status === 'paid');
  // The poll sees it at once too: the committed change dropped the cached view.
  t.is(((await (await fetch(`${f.td.url}/pay/${inv.id}/status`)).json()) as { status: string }).status, 'paid');
  const deadline = Date.now() + 5000;
  while (!(a.ended && b.ended) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.true(a.ended && b.ended, 'closed once final');
  t.deepEqual(
    a.views.map((v) => v.status),
    ['new', 'pending', 'paid'],
  );
});

test('a final invoice is told once and the stream ends; an unknown one is 404', async (t) => {
  const inv = await ethInvoice();
  // A coin-less invoice can be cancelled while new.
  const bare = (await f.api.post('/v1/invoices', { amount: '5', currency: 'USD' })).body as { id: string };
  t.is((await f.api.post(`/v1/invoices/${bare.id}/cancel`)).status, 200);
  const s = await openStream(bare.id);
  await s.until((v) => v.status === 'cancelled');
  const deadline = Date.now() + 5000;
  while (!s.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.true(s.ended);
  t.is(s.views.length, 1);
  const missing = await fetch(`${f.td.url}/pay/${inv.id.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}/events`);
  t.is(missing.status, 404);
  await missing.text();
});

test('a client address holds a bounded number of open streams', async (t) => {
  const inv = await ethInvoice();
  const open: Stream[] = [];
  for (let i = 0; i < STREAMS_PER_ADDRESS; i++) open.push(await openStream(inv.id, '10.9.1.1'));
  t.true(open.every((s) => s.status === 200));
  const refused = await openStream(inv.id, '10.9.1.1');
  t.is(refused.status, 429);
  // Another address is not held back; a closed stream frees its place.
  t.is((await openStream(inv.id, '10.9.1.2')).status, 200);
  open.pop()!.close();
  const deadline = Date.now() + 5000;
  let again = await openStream(inv.id, '10.9.1.1');
  while (again.status !== 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    again = await openStream(inv.id, '10.9.1.1');
  }
  t.is(again.status, 200);
  for (const s of [...open, again]) s.close();
});
