import test, { type ExecutionContext } from 'ava';
import { gzipSync } from 'node:zlib';
import { COIN_CHOICES_PER_MINUTE, PUBLIC_READS_PER_MINUTE, REFUND_POSTS_PER_MINUTE } from '../../../src/checkout/checkout.routes';
import { FakeRefundPages, GOOD_ADDRESS, serveRefundPages } from '../../helpers/fake-refund-pages';

const ID = '0190a0a0-0000-7000-8000-0000000000aa';
const TOKEN = 'q1W2e3R4t5Y6u7I8o9P0a_-s';

/** The rate buckets' clock stands still: a budget is spent however slowly the test runs. */
const frozen = () => Date.parse('2026-12-01T00:00:00Z');

async function serve(t: ExecutionContext, source: FakeRefundPages | undefined = new FakeRefundPages()) {
  source?.add(ID, TOKEN, { account_id: 'account-secret-123' });
  const s = await serveRefundPages(source, frozen);
  t.teardown(s.close);
  const at = (path: string) => `${s.url}/pay/${path}`;
  const page = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(at(path), { headers });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const json = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(at(path), init);
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const post = (path: string, body: unknown) =>
    json(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const form = (path: string, body: string) =>
    fetch(at(path), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  return { source: source!, url: s.url, page, json, post, form };
}

test('the refund page is self-contained HTML within the payment page budget, with its strict policy, never cached, showing amount, coin, network and who pays the fee', async (t) => {
  const { page } = await serve(t);
  const res = await page(`${ID}/refund/${TOKEN}`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type')!, /^text\/html/);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('referrer-policy'), 'no-referrer');
  const csp = res.headers.get('content-security-policy')!;
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  t.regex(csp, /style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe|https?:|\*/);
  // The payment page's budget (test/integration/checkout/page.test.ts); gzipped it is about 4 KB, as docs/payment-page.md says.
  t.true(Buffer.byteLength(res.text) < 60 * 1024, `${Buffer.byteLength(res.text)} bytes`);
  t.true(gzipSync(res.text).length < 5 * 1024, `${gzipSync(res.text).length} bytes gzipped`);
  t.notRegex(res.text, /(src|href)="?(https?:)?\/\//);
  t.true(res.text.includes('<h1>Refund from Test shop</h1>'));
  t.true(res.text.includes('<p class="total">12.5 USDT</p>'));
  t.true(res.text.includes('<p class="network">USDT on Tron</p>'));
  t.true(res.text.includes('The network fee is deducted from this amount'));
  t.true(res.text.includes(`<form id="address-form" method="post" action="${TOKEN}/check" novalidate>`));
  t.true(res.text.includes('<label class="label" for="to-address">Your USDT on Tron address</label>'));
  t.true(res.text.includes('2026-12-05 14:30 UTC'));
  t.regex(res.text, /<section id="status" aria-labelledby="status-h" aria-live="polite"/);
  t.false(res.text.includes('account-secret-123'));

  const de = await page(`${ID}/refund/${TOKEN}?lang=de`);
  t.regex(de.text, /<html lang="de">/);
  t.true(de.text.includes('Rückerstattung von Test shop'));
  t.true((await page(`${ID}/refund/${TOKEN}`, { 'accept-language': 'de-DE' })).text.includes('Ihre USDT auf Tron-Adresse'));
});

test('the page is gzipped for a client that asks, the same HTML', async (t) => {
  const { url } = await serve(t);
  const plain = await fetch(`${url}/pay/${ID}/refund/${TOKEN}`, { headers: { 'accept-encoding': 'identity' } });
  t.is(plain.headers.get('content-encoding'), null);
  const zipped = await fetch(`${url}/pay/${ID}/refund/${TOKEN}`, { headers: { 'accept-encoding': 'gzip' } });
  t.is(zipped.headers.get('content-encoding'), 'gzip');
  t.is(await zipped.text(), await plain.text());
});

test('a merchant paying the fee says the payer receives the amount in full', async (t) => {
  const source = new FakeRefundPages();
  source.add(ID, 'm'.repeat(22), { network_fee_paid_by: 'merchant', merchant_name: null });
  const { page } = await serve(t, source);
  const html = (await page(`${ID}/refund/${'m'.repeat(22)}`)).text;
  t.true(html.includes('The merchant pays the network fee'));
  t.true(html.includes('<h1>Refund</h1>'));
});

test('a token or id of the wrong shape is the payment page 404 without asking the source; an unknown one asks and is the same 404', async (t) => {
  const { source, page, json, post } = await serve(t);
  const notFound = (await page('not-an-id')).text;
  t.regex(notFound, /<h1>Page not found<\/h1>/);
  const bad = [
    `${ID}/refund/${'a'.repeat(21)}`,
    `${ID}/refund/${'a'.repeat(65)}`,
    `${ID}/refund/${'a'.repeat(30)}.`,
    `${ID}/refund/${'a'.repeat(30)}%2B`,
    `${ID}/refund/${'a'.repeat(30)}=`,
    `not-an-id/refund/${TOKEN}`,
  ];
  for (const path of bad) {
    const res = await page(path);
    t.is(res.status, 404, path);
    t.is(res.text, notFound, path);
    t.is(res.headers.get('cache-control'), 'no-store');
    t.is((await json(`${path}/status`)).status, 404, path);
    const checked = await post(`${path}/check`, { to_address: GOOD_ADDRESS });
    t.is(checked.status, 404, path);
    t.is(checked.body.error.code, 'not_found');
    t.is((await post(`${path}/address`, { to_address: GOOD_ADDRESS })).status, 404, path);
  }
  t.deepEqual(source.calls, []);
  const unknown = await page(`${ID}/refund/${'b'.repeat(40)}`);
  t.is(unknown.status, 404);
  t.is(unknown.text, notFound);
  t.is((await json(`${ID}/refund/${'b'.repeat(40)}/status`)).status, 404);
  t.deepEqual(source.calls, [`view ${ID} ${'b'.repeat(40)}`, `view ${ID} ${'b'.repeat(40)}`]);
  // An id given in capitals is the same refund.
  t.is((await page(`${ID.toUpperCase()}/refund/${TOKEN}`)).status, 200);
});

test('without a refund source every refund route is 404', async (t) => {
  const s = await serveRefundPages(undefined);
  t.teardown(s.close);
  t.is((await fetch(`${s.url}/pay/${ID}/refund/${TOKEN}`)).status, 404);
  t.is((await fetch(`${s.url}/pay/${ID}/refund/${TOKEN}/status`)).status, 404);
  const res = await fetch(`${s.url}/pay/${ID}/refund/${TOKEN}/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ to_address: GOOD_ADDRESS }),
  });
  t.is(res.status, 404);
});

test("the status is the view's contract fields only, never cached", async (t) => {
  const { json } = await serve(t);
  const res = await json(`${ID}/refund/${TOKEN}/status`);
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.regex(res.headers.get('content-security-policy')!, /default-src 'none'/);
  t.deepEqual(res.body, {
    status: 'awaiting_address',
    amount: '12.5',
    ticker: 'USDT',
    network: 'tron',
    network_name: 'Tron',
    network_fee_paid_by: 'payer',
    to_address: null,
    txid: null,
    expires_at: '2026-12-05T14:30:00.000Z',
    merchant_name: 'Test shop',
  });
});

test('check shows the address back with its network; address sets it once; refusals keep their codes', async (t) => {
  const { source, post, json } = await serve(t);
  const refused = await post(`${ID}/refund/${TOKEN}/check`, { to_address: '0x52908400098527886E0F7030069857D2E4169EE7' });
  t.is(refused.status, 422);
  t.is(refused.body.error.code, 'address_refused');
  const checked = await post(`${ID}/refund/${TOKEN}/check`, { to_address: `  ${GOOD_ADDRESS}\n` });
  t.is(checked.status, 200);
  t.deepEqual(checked.body, { to_address: GOOD_ADDRESS, network: 'tron', network_name: 'Tron' });
  t.is((await json(`${ID}/refund/${TOKEN}/status`)).body.to_address, null, 'a check keeps nothing');

  const badProvide = await post(`${ID}/refund/${TOKEN}/address`, { to_address: 'nope' });
  t.is(badProvide.status, 422);
  t.is(badProvide.body.error.code, 'address_refused');
  const provided = await post(`${ID}/refund/${TOKEN}/address`, { to_address: GOOD_ADDRESS });
  t.is(provided.status, 200);
  t.like(provided.body, { status: 'pending', to_address: GOOD_ADDRESS });
  t.false('account_id' in provided.body);
  const again = await post(`${ID}/refund/${TOKEN}/address`, { to_address: GOOD_ADDRESS });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'conflict');
  t.is(again.body.error.details.reason, 'refund_not_awaiting_address');

  // Refused at the edge, the source never asked: other fields, no string, empty, too long, control characters, a large body, not JSON.
  const before = source.calls.length;
  for (const body of [
    { to_address: GOOD_ADDRESS, amount: '1' },
    { to_address: 5 },
    {},
    { to_address: '  ' },
    { to_address: 'T'.repeat(201) },
    { to_address: 'T\u0000x' },
  ]) {
    const res = await post(`${ID}/refund/${TOKEN}/check`, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'validation_error');
  }
  const large = await post(`${ID}/refund/${TOKEN}/address`, { to_address: GOOD_ADDRESS, pad: 'x'.repeat(2000) });
  t.is(large.status, 413);
  t.is(large.body.error.code, 'payload_too_large');
  const text = await json(`${ID}/refund/${TOKEN}/check`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: GOOD_ADDRESS });
  t.is(text.status, 400);
  t.is(source.calls.length, before);
});

test('without JavaScript the forms work: a check answers the page asking to confirm, a confirmation goes back to the page; a refused address shows the message', async (t) => {
  const { source, form, page } = await serve(t);
  const bad = await form(`${ID}/refund/${TOKEN}/check`, 'to_address=0xabc');
  t.is(bad.status, 422);
  const badHtml = await bad.text();
  t.true(badHtml.includes('<p class="error" id="address-error" role="alert">This is not an address for USDT on Tron. Check it and enter it again.</p>'));
  t.true(badHtml.includes('value="0xabc"'));
  t.regex(badHtml, /aria-invalid="true"/);

  const checked = await form(`${ID}/refund/${TOKEN}/check`, `to_address=${GOOD_ADDRESS}`);
  t.is(checked.status, 200);
  t.regex(checked.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
  const html = await checked.text();
  t.true(html.includes('<section id="confirm-box" aria-labelledby="confirm-h">'), 'the confirmation is shown');
  t.true(html.includes('<section id="address-box" aria-labelledby="address-h" hidden>'));
  t.true(html.includes(`<code id="confirm-address">${GOOD_ADDRESS}</code>`));
  t.true(html.includes('12.5 USDT will be sent on Tron to:'));
  t.true(html.includes(`<form id="confirm-form" method="post" action="../${TOKEN}/address">`));
  t.true(html.includes(`<a id="change" class="button secondary" href="../${TOKEN}">`));

  const confirmed = await form(`${ID}/refund/${TOKEN}/address`, `to_address=${GOOD_ADDRESS}`);
  t.is(confirmed.status, 303);
  t.is(new URL(confirmed.headers.get('location')!, `http://x/pay/${ID}/refund/${TOKEN}/address`).pathname, `/pay/${ID}/refund/${TOKEN}`);
  const after = (await page(`${ID}/refund/${TOKEN}`)).text;
  t.true(after.includes('<p id="status-text">Address received. The refund is being prepared.</p>'));
  t.true(after.includes(`<code id="to">${GOOD_ADDRESS}</code>`));
  t.true(after.includes('<section id="address-box" aria-labelledby="address-h" hidden>'));

  const calls = source.calls.length;
  t.is((await form(`${ID}/refund/${TOKEN}/check`, `to_address=${'T'.repeat(2000)}`)).status, 413);
  t.is(source.calls.length, calls, 'a large form is refused before the source is asked');

  const late = await form(`${ID}/refund/${TOKEN}/address`, `to_address=${GOOD_ADDRESS}`);
  t.is(late.status, 409);
  t.true((await late.text()).includes('<p id="status-detail">This refund no longer waits for an address.</p>'));
});

test('final states say so: completed with the txid, expired, cancelled, failed', async (t) => {
  const source = new FakeRefundPages();
  const tokens = { done: 'd'.repeat(22), exp: 'e'.repeat(22), can: 'c'.repeat(22), fail: 'f'.repeat(22) };
  source.add(ID, tokens.done, { status: 'completed', to_address: GOOD_ADDRESS, txid: 'ab'.repeat(32) });
  source.add(ID, tokens.exp, { status: 'expired' });
  source.add(ID, tokens.can, { status: 'cancelled' });
  source.add(ID, tokens.fail, { status: 'rejected', to_address: GOOD_ADDRESS });
  const { page } = await serve(t, source);
  const done = (await page(`${ID}/refund/${tokens.done}`)).text;
  t.true(done.includes('<p id="status-text">Refund sent</p>'));
  t.true(done.includes(`<code id="txid">${'ab'.repeat(32)}</code>`));
  t.true(done.includes('<section id="address-box" aria-labelledby="address-h" hidden>'));
  t.true((await page(`${ID}/refund/${tokens.exp}`)).text.includes('This refund link has expired. Please contact the merchant for a new one.'));
  t.true((await page(`${ID}/refund/${tokens.can}`)).text.includes('This refund was cancelled.'));
  t.true((await page(`${ID}/refund/${tokens.fail}`)).text.includes('The refund could not be sent. Please contact the merchant.'));
  t.true((await page(`${ID}/refund/${tokens.exp}?lang=de`)).text.includes('Dieser Rückerstattungslink ist abgelaufen.'));
});

test('posts are limited per client address to the smaller budget, refused ones too, then 429 with Retry-After without asking the source', async (t) => {
  t.is(REFUND_POSTS_PER_MINUTE, COIN_CHOICES_PER_MINUTE);
  const { source, post } = await serve(t);
  for (let i = 0; i < REFUND_POSTS_PER_MINUTE; i++) t.is((await post(`${ID}/refund/${TOKEN}/check`, { to_address: 'bad' })).status, 422);
  const calls = source.calls.length;
  const limited = await post(`${ID}/refund/${TOKEN}/address`, { to_address: GOOD_ADDRESS });
  t.is(limited.status, 429);
  t.is(limited.body.error.code, 'rate_limited');
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.is(source.calls.length, calls);
});

test('guessing tokens costs the payment page reads allowance: after it, 429 on the refund page and the payment page alike', async (t) => {
  const { source, page } = await serve(t);
  for (let i = 0; i < PUBLIC_READS_PER_MINUTE; i++) {
    const res = await page(`${ID}/refund/${String(i).padStart(22, 'g')}/status`);
    if (res.status !== 404) t.fail(`request ${i}: ${res.status}`);
  }
  t.is(source.calls.length, PUBLIC_READS_PER_MINUTE);
  const limited = await page(`${ID}/refund/${TOKEN}`);
  t.is(limited.status, 429);
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.is((await page('not-an-id')).status, 429, 'the same bucket as the payment page');
  t.is(source.calls.length, PUBLIC_READS_PER_MINUTE);
});
