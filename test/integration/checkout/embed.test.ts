import test from 'ava';
import { merchantWithKey } from '../../helpers/daemon';
import { ApiClient, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';
import { Payer } from '../../helpers/payer';

let f: InvoiceFixture;
let payer: Payer;
test.before(async () => {
  f = await startInvoiceFixture();
  payer = new Payer(f.td.url);
});
test.after.always(async () => {
  await f?.stop();
});

const frameAncestors = async (invoiceId: string) => /frame-ancestors ([^;]+)/.exec((await payer.page(invoiceId)).headers.get('content-security-policy')!)![1];

test.serial('the page cannot be framed until origins are set; PUT /v1/embed sets them, GET reads them back, and the page allows exactly those', async (t) => {
  const inv = (await f.api.post('/v1/invoices', { amount: '5', currency: 'USD' })).body;
  t.deepEqual((await f.api.get('/v1/embed')).body, { allowed_origins: [] });
  t.is(await frameAncestors(inv.id), "'none'");

  const put = await f.api.call('PUT', '/v1/embed', { allowed_origins: ['https://shop.example', 'https://checkout.shop.example:8443', 'https://shop.example'] });
  t.is(put.status, 200);
  t.deepEqual(put.body, { allowed_origins: ['https://shop.example', 'https://checkout.shop.example:8443'] });
  t.deepEqual((await f.api.get('/v1/embed')).body, put.body);
  // The page's view is cached for a second.
  const deadline = Date.now() + 5000;
  while ((await frameAncestors(inv.id)) === "'none'" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.is(await frameAncestors(inv.id), 'https://shop.example https://checkout.shop.example:8443');

  t.is((await f.api.call('PUT', '/v1/embed', { allowed_origins: [] })).status, 200);
  t.deepEqual((await f.api.get('/v1/embed')).body, { allowed_origins: [] });
});

test.serial('origins that are not plain http(s) origins, more than 20, or another body are 400 and change nothing', async (t) => {
  const kept = { allowed_origins: ['https://kept.example'] };
  t.is((await f.api.call('PUT', '/v1/embed', kept)).status, 200);
  const bad = [
    { allowed_origins: ['ftp://shop.example'] },
    { allowed_origins: ['https://shop.example/'] },
    { allowed_origins: ['https://shop.example/pay'] },
    { allowed_origins: ['https://*.shop.example'] },
    { allowed_origins: ['https://user@shop.example'] },
    { allowed_origins: ['HTTPS://Shop.Example'] },
    { allowed_origins: ['*'] },
    { allowed_origins: ['null'] },
    { allowed_origins: [42] },
    { allowed_origins: 'https://shop.example' },
    { allowed_origins: Array.from({ length: 21 }, (_, i) => `https://s${i}.example`) },
    { allowed_origins: [], extra: true },
    {},
  ];
  for (const body of bad) {
    const res = await f.api.call('PUT', '/v1/embed', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'validation_error');
  }
  t.deepEqual((await f.api.get('/v1/embed')).body, kept);
  t.is((await f.api.call('PUT', '/v1/embed', { allowed_origins: Array.from({ length: 20 }, (_, i) => `https://s${i}.example`) })).status, 200);
});

test.serial('setting the origins needs create_invoice; a read-only key is 403 and changes nothing', async (t) => {
  const m = await merchantWithKey(f.td.daemon, { permissions: ['read'] });
  const reader = new ApiClient(f.td.url, m.keyId, m.secret);
  const res = await reader.call('PUT', '/v1/embed', { allowed_origins: ['https://shop.example'] });
  t.is(res.status, 403);
  t.deepEqual((await reader.get('/v1/embed')).body, { allowed_origins: [] });
});
