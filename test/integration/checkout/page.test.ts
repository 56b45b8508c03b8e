import test from 'ava';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { qrSvg } from '../../../src/checkout/payment-uri';
import { COINS, USDT_ETH_CONTRACT, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';
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

const STATUS_FIELDS = [
  'id',
  'status',
  'merchant',
  'amount',
  'currency',
  'coin',
  'address',
  'payer_amount',
  'paid_amount',
  'remaining_amount',
  'late_payment',
  'confirmations',
  'ttl_expires_at',
  'return_url',
  'choices',
  'payment_uri',
];

const SECRETS = { order_id: 'order-secret-771', metadata: { customer: 'meta-secret-552' }, webhook_url: 'https://127.0.0.1/hook-secret-913' };

const invoice = async (body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/invoices', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

test('the page of a coinless invoice is self-contained HTML under 60 KB with a strict policy, the merchant name, the amount and the coin choice', async (t) => {
  const inv = await invoice({ amount: '25', currency: 'USD', ...SECRETS });
  const res = await payer.page(inv.id);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type')!, /^text\/html/);
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('referrer-policy'), 'no-referrer');
  const csp = res.headers.get('content-security-policy')!;
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe|https?:|\*/);
  t.true(Buffer.byteLength(res.text) < 60 * 1024, `${Buffer.byteLength(res.text)} bytes`);
  t.notRegex(res.text, /(src|href)="?(https?:)?\/\//);
  t.true(res.text.includes('Payment to Test shop'));
  t.true(res.text.includes('25 USD'));
  t.true(res.text.includes(`data-coin="${COINS.USDT_ETH}"`));
  t.true(res.text.includes(`data-coin="${COINS.BTC}"`));
  // DAI is not offered for invoices.
  t.false(res.text.includes(COINS.DAI));
  for (const secret of ['order-secret-771', 'meta-secret-552', 'hook-secret-913']) t.false(res.text.includes(secret), secret);
});

test('every coin of the choice names the network to send on beside its ticker, and its approximate amount is written for people', async (t) => {
  const inv = await invoice({ amount: '25', currency: 'USD' });
  const html = (await payer.page(inv.id)).text;
  const button = (coin: string) => html.match(new RegExp(`data-coin="${coin}">([^<]*)(?:<span>([^<]*)</span>)?</button>`))?.slice(1);
  t.deepEqual(button(COINS.BTC), ['Pay with BTC on Bitcoin regtest', 'about 0.0003676 BTC']);
  t.deepEqual(button(COINS.ETH), ['Pay with ETH on Ethereum', 'about 0.007353 ETH']);
  t.deepEqual(button(COINS.USDT_ETH), ['Pay with USDT on Ethereum (ERC-20)', undefined]);
  t.deepEqual(button(COINS.TRX), ['Pay with TRX on Tron', undefined]);
  t.deepEqual(button(COINS.USDT_TRON), ['Pay with USDT on Tron (TRC-20)', undefined]);
  t.true(html.includes('The exact amount to send is shown once you choose.'));
  // The status keeps the amounts as computed; only the page rounds them for people.
  const choices = (await payer.status(inv.id)).body.choices;
  t.is(choices.find((c: any) => c.coin_id === COINS.ETH).approx_amount, '0.007352941176470589');
  t.like(
    choices.find((c: any) => c.coin_id === COINS.USDT_TRON),
    { network: 'tron', network_name: 'Tron', token_standard: 'TRC-20' },
  );
  t.like(
    choices.find((c: any) => c.coin_id === COINS.ETH),
    { network: 'ethereum', network_name: 'Ethereum', token_standard: null },
  );
  t.like((await payer.page(`${inv.id}?lang=de`)).text.match(new RegExp(`data-coin="${COINS.USDT_TRON}">([^<]*)<`)), {
    1: 'Mit USDT auf Tron (TRC-20) bezahlen',
  });
});

test('the public status shows what paying needs and never metadata, webhook_url, order_id or account details beyond its name', async (t) => {
  const inv = await invoice({ amount: '25', currency: 'USD', return_url: 'https://shop.example/thanks', ...SECRETS });
  const res = await payer.status(inv.id);
  t.is(res.status, 200);
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('referrer-policy'), 'no-referrer');
  t.deepEqual(Object.keys(res.body).sort(), [...STATUS_FIELDS].sort());
  t.like(res.body, {
    id: inv.id,
    status: 'new',
    merchant: 'Test shop',
    amount: '25',
    currency: 'USD',
    coin: null,
    address: null,
    return_url: 'https://shop.example/thanks',
  });
  const usdt = res.body.choices.find((c: any) => c.coin_id === COINS.USDT_ETH);
  t.deepEqual(usdt, {
    coin_id: COINS.USDT_ETH,
    ticker: 'USDT',
    name: 'Tether USD',
    network: 'ethereum',
    network_name: 'Ethereum',
    token_standard: 'ERC-20',
    approx_amount: null,
  });
  t.is(res.body.choices.find((c: any) => c.coin_id === COINS.BTC).approx_amount, '0.00036765');
  const text = JSON.stringify(res.body);
  for (const secret of ['order-secret-771', 'meta-secret-552', 'hook-secret-913', f.accountId]) t.false(text.includes(secret), secret);
});

test.serial('choosing a coin fixes it as creation with coin_id does: address, locked rate, amount_crypto and payer_amount', async (t) => {
  await f.setAccount({ platform_fee_percent: '1' });
  t.teardown(() => f.setAccount({ platform_fee_percent: '0' }));
  const fixed = await invoice({ amount: '100', currency: 'USD', coin_id: COINS.BTC, fee_paid_by: 'payer' });
  const open = await invoice({ amount: '100', currency: 'USD', fee_paid_by: 'payer' });
  const chosen = await payer.choose(open.id, { coin_id: COINS.BTC });
  t.is(chosen.status, 200);
  t.like(chosen.body, {
    status: 'new',
    coin: { coin_id: COINS.BTC, ticker: 'BTC', name: 'Bitcoin', network: 'bitcoin', network_name: 'Bitcoin regtest', token_standard: null },
    payer_amount: fixed.payer_amount,
    choices: [],
  });
  t.truthy(chosen.body.address);
  t.is(chosen.body.payment_uri, `bitcoin:${chosen.body.address}?amount=${fixed.payer_amount}`);

  const merchantSees = (await f.api.get(`/v1/invoices/${open.id}`)).body;
  for (const k of ['coin_id', 'ticker', 'network', 'amount_crypto', 'payer_amount', 'remaining_amount', 'amount_fiat', 'fiat_currency', 'rate_locked']) {
    t.deepEqual(merchantSees[k], fixed[k], k);
  }
  t.is(merchantSees.address, chosen.body.address);
  t.truthy(merchantSees.rate_locked_at);

  const page = await payer.page(open.id);
  t.true(page.text.includes(chosen.body.address));
  t.true(page.text.includes(`${fixed.payer_amount} BTC`));
  t.regex(page.text, /<svg[^>]*viewBox/);
  t.false(page.text.includes('data-coin='));
});

test('an ERC-20 choice shows "USDT on Ethereum (ERC-20)" with an EIP-681 transfer carrying the chain id in the QR and the wallet link', async (t) => {
  const open = await invoice({ amount: '12.5', currency: 'USDT' });
  const chosen = await payer.choose(open.id, { coin_id: COINS.USDT_ETH });
  t.is(chosen.status, 200);
  t.is(chosen.body.payer_amount, '12.5');
  const uri = `ethereum:${USDT_ETH_CONTRACT}@31337/transfer?address=${chosen.body.address}&uint256=12500000`;
  t.is(chosen.body.payment_uri, uri);
  const html = (await payer.page(open.id)).text;
  t.true(html.includes('<h2 id="coin-h">USDT on Ethereum (ERC-20)</h2>'));
  t.true(html.includes('Send only USDT on Ethereum (ERC-20). Another coin, or this coin on another network, is not credited to this payment.'));
  t.true(html.includes(`<a id="open-wallet" class="button" href="${uri.replace(/&/g, '&amp;')}">`));
  t.true(html.includes(await qrSvg(uri)), 'the QR code is drawn from the URI with the chain id');
  t.true(html.includes('12.5 USDT</code>'));
});

test('a Tron token choice says "USDT on Tron (TRC-20)"; its QR is the bare address and there is no wallet link', async (t) => {
  const open = await invoice({ amount: '7', currency: 'USDT' });
  const chosen = await payer.choose(open.id, { coin_id: COINS.USDT_TRON });
  t.is(chosen.status, 200);
  t.like(chosen.body.coin, { ticker: 'USDT', network: 'tron', network_name: 'Tron', token_standard: 'TRC-20' });
  t.is(chosen.body.payment_uri, chosen.body.address);
  const html = (await payer.page(open.id)).text;
  t.true(html.includes('<h2 id="coin-h">USDT on Tron (TRC-20)</h2>'));
  t.true(html.includes(await qrSvg(chosen.body.address)));
  t.false(html.includes('open-wallet'));
});

test.serial('two choices at the same time, even of different coins, get the same one coin and one address', async (t) => {
  const open = await invoice({ amount: '40', currency: 'USD' });
  const before = await f.counts();
  const [a, b] = await Promise.all([payer.choose(open.id, { coin_id: COINS.ETH }), payer.choose(open.id, { coin_id: COINS.BTC })]);
  t.is(a.status, 200);
  t.is(b.status, 200);
  t.deepEqual(a.body.coin, b.body.coin);
  t.is(a.body.address, b.body.address);
  t.is((await f.counts()).addresses, before.addresses + 1);
  const again = await payer.choose(open.id, { coin_id: COINS.TRX });
  t.deepEqual(again.body.coin, a.body.coin);
  t.is((await f.counts()).addresses, before.addresses + 1);
});

test.serial('a coin outside the allowed ones, a malformed body or a cancelled invoice is refused and changes nothing', async (t) => {
  const open = await invoice({ amount: '40', currency: 'USD', allowed_coin_ids: [COINS.BTC] });
  t.deepEqual(
    (await payer.status(open.id)).body.choices.map((c: any) => c.coin_id),
    [COINS.BTC],
  );
  const cancelled = await invoice({ amount: '40', currency: 'USD' });
  t.is((await f.api.post(`/v1/invoices/${cancelled.id}/cancel`)).status, 200);
  const before = await f.counts();
  const refused = [
    await payer.choose(open.id, { coin_id: COINS.ETH }),
    await payer.choose(open.id, { coin_id: COINS.DAI }),
    await payer.choose(open.id, { coin_id: 'bitcoin' }),
    await payer.choose(open.id, { coin_id: COINS.BTC, address: 'mine' }),
    await payer.choose(open.id, {}),
  ];
  for (const r of refused) {
    t.is(r.status, 400);
    t.is(r.body.error.code, 'validation_error');
  }
  const late = await payer.choose(cancelled.id, { coin_id: COINS.BTC });
  t.is(late.status, 409);
  t.is(late.body.error.code, 'conflict');
  t.deepEqual(await f.counts(), before);
  t.like((await f.api.get(`/v1/invoices/${open.id}`)).body, { coin_id: null, address: null, rate_locked: null });
});

test('an unknown invoice id and a malformed one get the same 404 page with no detail', async (t) => {
  const unknown = await payer.page('0190a0a0-0000-7000-8000-000000000000');
  const malformed = await payer.page('not-an-id');
  t.is(unknown.status, 404);
  t.is(malformed.status, 404);
  t.is(unknown.text, malformed.text);
  t.regex(unknown.text, /<h1>Page not found<\/h1>/);
  t.is(unknown.headers.get('x-content-type-options'), 'nosniff');
  for (const id of ['0190a0a0-0000-7000-8000-000000000000', 'not-an-id']) {
    const s = await payer.status(id);
    t.is(s.status, 404);
    t.is(s.body.error.code, 'not_found');
    const c = await payer.choose(id, { coin_id: COINS.BTC });
    t.is(c.status, 404);
  }
});

test('the status turns pending with confirmations, then paid, after a payment to the chosen address', async (t) => {
  const open = await invoice({ amount: '0.5', currency: 'ETH' });
  const chosen = (await payer.choose(open.id, { coin_id: COINS.ETH })).body;
  t.is(chosen.payment_uri, `ethereum:${chosen.address}@31337?value=500000000000000000`);
  const eth = f.chain('ethereum');
  const transfer = await eth.send(chosen.address, COINS.ETH, '0.5');
  const pending = await payer.statusUntil(open.id, (b) => b.status === 'pending');
  t.deepEqual(pending.confirmations, { seen: 0, needed: 3 });
  await eth.confirm(transfer);
  const paid = await payer.statusUntil(open.id, (b) => b.status === 'paid');
  t.like(paid, { paid_amount: '0.5', remaining_amount: '0', confirmations: null });
});

test('the page speaks German with ?lang=de or Accept-Language de, English otherwise', async (t) => {
  const inv = await invoice({ amount: '5', currency: 'EUR' });
  const de = await payer.page(`${inv.id}?lang=de`);
  t.true(de.text.includes('Zahlung an Test shop'));
  t.regex(de.text, /<html lang="de">/);
  t.true((await payer.page(inv.id, { 'accept-language': 'fr;q=1, de-DE;q=0.8, en;q=0.5' })).text.includes('Zahlung an Test shop'));
  t.true((await payer.page(`${inv.id}?lang=xx`, { 'accept-language': 'fr' })).text.includes('Payment to Test shop'));
});

test('the page is sent gzipped to a client that asks for it (the same HTML), as is to one that does not, and varies on both headers', async (t) => {
  const inv = await invoice({ amount: '25', currency: 'USD', coin_id: COINS.BTC });
  const get = (headers: Record<string, string>) =>
    new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http
        .get(`${f.td.url}/pay/${inv.id}`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  const plain = await get({});
  const zipped = await get({ 'accept-encoding': 'gzip, deflate, br' });
  const refused = await get({ 'accept-encoding': 'gzip;q=0, identity' });
  t.is(plain.headers['content-encoding'], undefined);
  t.is(refused.headers['content-encoding'], undefined);
  t.is(zipped.headers['content-encoding'], 'gzip');
  t.true(zipped.body.length < plain.body.length / 2, `${zipped.body.length} of ${plain.body.length} bytes`);
  t.is(gunzipSync(zipped.body).toString('utf8'), plain.body.toString('utf8'));
  t.regex(plain.body.toString('utf8'), new RegExp(inv.address));
  t.regex(String(zipped.headers.vary), /Accept-Language/);
  t.regex(String(zipped.headers.vary), /Accept-Encoding/);
});

test("without JavaScript the page's form chooses the coin: 303 back to the page, which then shows the address; a bad choice changes nothing", async (t) => {
  const inv = await invoice({ amount: '25', currency: 'USD' });
  const html = (await payer.page(inv.id)).text;
  t.regex(html, new RegExp(`<form method="post" action="${inv.id}/coin">`));
  t.regex(html, new RegExp(`<button type="submit" name="coin_id" value="${COINS.BTC}"`));
  const post = (body: string) =>
    fetch(`${f.td.url}/pay/${inv.id}/coin`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const bad = await post('coin_id=not-a-coin');
  t.is(bad.status, 303);
  t.is(bad.headers.get('location'), `../${inv.id}`);
  t.is((await payer.status(inv.id)).body.coin, null);
  const res = await post(`coin_id=${COINS.BTC}`);
  t.is(res.status, 303);
  t.is(new URL(res.headers.get('location')!, `${f.td.url}/pay/${inv.id}/coin`).href, `${f.td.url}/pay/${inv.id}`);
  const view = (await payer.status(inv.id)).body;
  t.is(view.coin.coin_id, COINS.BTC);
  t.truthy(view.address);
  const page = (await payer.page(inv.id)).text;
  t.true(page.includes(view.address));
  t.false(page.includes('<form method="post"'));
  const unknown = await fetch(`${f.td.url}/pay/00000000-0000-4000-8000-000000000000/coin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `coin_id=${COINS.BTC}`,
  });
  t.is(unknown.status, 404);
});
