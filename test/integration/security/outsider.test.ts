import test, { type ExecutionContext } from 'ava';
import { StaticAddressEntity } from '../../../src/db/entities/static-address';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { call, freshSourceIp, type ApiResponse } from '../../helpers/api-client';
import { parseCsv } from '../../helpers/csv';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { signedGet } from '../../helpers/signed-get';
import { signRequest } from '../../helpers/signer';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

const assertError = (t: ExecutionContext, res: ApiResponse, status: number, code: string, what: string) => {
  t.is(res.status, status, `${what}: ${res.text}`);
  t.is(res.json?.error?.code, code, what);
  t.is(typeof res.json?.error?.message, 'string', what);
};

/** A request signed by `key` (or by nobody), sent byte for byte. */
const send = (
  base: string,
  key: { keyId: string; secret: string } | null,
  method: string,
  target: string,
  body?: string,
  headers: Record<string, string> = {},
  from = '127.0.0.1',
) =>
  call(base, target, {
    method,
    body,
    from,
    headers: {
      ...(key ? signRequest({ ...key, method, target, body }) : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
  });

async function withdrawalState(f: WithdrawalFixture) {
  const read = f.td.daemon.store.read;
  return {
    ...(await f.counts()),
    balance: await f.balance(),
    rows: await read.find(WithdrawalEntity, { order: { id: 'ASC' } }),
    addresses: await read.count(StaticAddressEntity),
  };
}

test('the withdrawal and embed routes refuse an outsider: no key, a wrong signature, a disabled key, a frozen account; nothing changes', async (t) => {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  const w = await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO });
  t.is(w.status, 201);
  const disabled = await merchantWithKey(f.td.daemon, { permissions: ['read', 'create_invoice'] });
  await f.td.daemon.keys.disable(disabled.accountId, disabled.keyId, { email: disabled.owner });
  const frozen = await merchantWithKey(f.td.daemon, { permissions: ['read', 'create_invoice'] });
  await f.td.daemon.team.freeze(frozen.accountId, { kind: 'member', email: frozen.owner });
  const before = await withdrawalState(f);
  const create = JSON.stringify({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO });
  const routes: Array<[string, string, string | undefined]> = [
    ['POST', '/v1/withdrawals', create],
    ['POST', '/v1/withdrawals/estimate', JSON.stringify({ coin_id: COINS.BTC, amount: '0.1' })],
    ['GET', '/v1/withdrawals', undefined],
    ['GET', `/v1/withdrawals/${w.body.id}`, undefined],
    ['POST', `/v1/withdrawals/${w.body.id}/cancel`, undefined],
    ['GET', '/v1/embed', undefined],
    ['PUT', '/v1/embed', JSON.stringify({ allowed_origins: ['https://evil.example'] })],
  ];
  const wrong = { keyId: f.api.keyId, secret: 'A'.repeat(43) };
  for (const [method, target, body] of routes) {
    const what = `${method} ${target}`;
    // Each route from its own address: refused authentications are limited per client address.
    const from = freshSourceIp();
    assertError(t, await send(f.td.url, null, method, target, body, {}, from), 401, 'auth.missing_header', what);
    assertError(t, await send(f.td.url, wrong, method, target, body, {}, from), 401, 'auth.invalid_signature', what);
    assertError(
      t,
      await send(f.td.url, { keyId: 'ck_live_' + 'A'.repeat(24), secret: 'A'.repeat(43) }, method, target, body, {}, from),
      401,
      'auth.invalid_signature',
      what,
    );
    assertError(t, await send(f.td.url, disabled, method, target, body, {}, from), 401, 'auth.invalid_key', what);
    assertError(t, await send(f.td.url, frozen, method, target, body, {}, from), 403, 'account_frozen', what);
  }
  t.deepEqual(await withdrawalState(f), before);
  t.deepEqual((await f.api.get('/v1/embed')).body, { allowed_origins: [] });
});

test('mainnet: a ck_test_ key is 401 auth.test_key on the withdrawal, address and embed routes', async (t) => {
  const d = await startTestDaemon({ network: 'mainnet' });
  t.teardown(() => d.stop());
  const key = { keyId: 'ck_test_' + 'A'.repeat(24), secret: 'A'.repeat(43) };
  for (const [method, target] of [
    ['POST', '/v1/withdrawals'],
    ['GET', '/v1/withdrawals'],
    ['POST', '/v1/addresses'],
    ['GET', '/v1/addresses'],
    ['PUT', '/v1/embed'],
  ] as const) {
    assertError(t, await send(d.url, key, method, target, method === 'GET' ? undefined : '{}'), 401, 'auth.test_key', `${method} ${target}`);
  }
});

test('malformed, oversized and odd bodies of POST /v1/withdrawals are refused with the envelope and create nothing', async (t) => {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  const key = { keyId: f.api.keyId, secret: f.api.secret };
  const before = await withdrawalState(f);
  const cases: Array<[string, number, string]> = [
    ['{"coin_id":', 400, 'validation_error'],
    ['[]', 400, 'validation_error'],
    ['"text"', 400, 'validation_error'],
    ['null', 400, 'validation_error'],
    [
      JSON.stringify({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, __proto__: { admin: true } }).replace('}', ',"__proto__":{"amount":"0.9"}}'),
      400,
      'validation_error',
    ],
    [JSON.stringify({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, constructor: 'x' }), 400, 'validation_error'],
    [JSON.stringify({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, comment: 'x'.repeat(1024 * 1024) }), 413, 'payload_too_large'],
    [JSON.stringify({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'p'.repeat(129) }), 400, 'validation_error'],
    [JSON.stringify({ coin_id: COINS.BTC, amount: '0.1', to_address: `${PAY_TO}\r\nX-Injected: 1` }), 422, 'address_refused'],
    [JSON.stringify({ coin_id: COINS.BTC, amount: '1e-1', to_address: PAY_TO }), 400, 'validation_error'],
    [JSON.stringify({ coin_id: COINS.BTC, amount: ' 0.1', to_address: PAY_TO }), 400, 'validation_error'],
    [JSON.stringify({ coin_id: COINS.BTC, amount: ['0.1'], to_address: PAY_TO }), 400, 'validation_error'],
  ];
  for (const [body, status, code] of cases) {
    const res = await send(f.td.url, key, 'POST', '/v1/withdrawals', body);
    assertError(t, res, status, code, body.slice(0, 120));
    t.is(res.headers['x-injected'], undefined);
  }
  t.deepEqual(await withdrawalState(f), before);
});

test('withdrawal ids of the wrong shape or with path tricks are 404 not_found and cancel nothing', async (t) => {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  const w = await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO });
  const key = { keyId: f.api.keyId, secret: f.api.secret };
  const before = await withdrawalState(f);
  const ids = [
    'not-an-id',
    `${w.body.id}x`,
    `${w.body.id}%00`,
    `%20${w.body.id}`,
    `..%2F${w.body.id}`,
    `${w.body.id.slice(0, -1)}`,
    'x'.repeat(5000),
    `{${w.body.id}}`,
    `${w.body.id.replace(/-/g, '')}`,
  ];
  for (const id of ids) {
    for (const [method, target] of [
      ['GET', `/v1/withdrawals/${id}`],
      ['POST', `/v1/withdrawals/${id}/cancel`],
    ] as const) {
      const res = await send(f.td.url, key, method, target);
      t.true(res.status === 404 || res.status === 414 || res.status === 431, `${target}: ${res.status} ${res.text}`);
      if (res.status === 404) t.is(res.json?.error?.code, 'not_found', target);
    }
  }
  // A dot segment that a normaliser would resolve to the withdrawal itself is no way round the route either.
  const dotted = await send(f.td.url, key, 'POST', `/v1/withdrawals/x/../${w.body.id}/cancel`);
  t.not(dotted.status, 200, dotted.text);
  t.deepEqual(await withdrawalState(f), before);
  t.is((await f.api.get(`/v1/withdrawals/${w.body.id}`)).body.status, 'pending');
});

test('the payment page answers odd ids, languages and headers with no injected header, no crash and the same 404 page', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const inv = (await f.api.post('/v1/invoices', { amount: '5', currency: 'USD' })).body;
  const from = freshSourceIp();
  const get = (target: string, headers: Record<string, string> = {}) => call(f.td.url, target, { from, headers });
  // Languages that are names of every JavaScript object, not of a shipped language: the page in English.
  for (const lang of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    for (const res of [await get(`/pay/${inv.id}?lang=${lang}`), await get(`/pay/${inv.id}`, { 'Accept-Language': `${lang};q=1` })]) {
      t.is(res.status, 200, `${lang}: ${res.text.slice(0, 200)}`);
      t.is(res.headers['content-language'], 'en', lang);
      t.regex(res.text, /<html lang="en">/, lang);
    }
  }
  // Header injection through the query and the id.
  const injected = await get(`/pay/${inv.id}?lang=de%0d%0aSet-Cookie:%20x=1`);
  t.is(injected.status, 200);
  t.is(injected.headers['set-cookie'], undefined);
  t.is(injected.headers['content-language'], 'en');
  for (const id of ['%0d%0aSet-Cookie:%20x=1', '..%2F..%2Fv1%2Fwithdrawals', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', 'x'.repeat(2000), `${inv.id}%00`]) {
    const page = await get(`/pay/${id}`);
    t.is(page.status, 404, id);
    t.is(page.headers['set-cookie'], undefined, id);
    t.false(page.text.includes('<script>alert'), id);
    t.false(page.text.includes('alert(1)'), id);
    const status = await get(`/pay/${id}/status`);
    t.is(status.status, 404, id);
    t.is(status.json?.error?.code, 'not_found', id);
    const coin = await call(f.td.url, `/pay/${id}/coin`, {
      from,
      method: 'POST',
      body: JSON.stringify({ coin_id: COINS.BTC }),
      headers: { 'Content-Type': 'application/json' },
    });
    t.is(coin.status, 404, id);
  }
  // The upper-case id is the same invoice.
  t.is((await get(`/pay/${inv.id.toUpperCase()}/status`)).json.id, inv.id);
});

test("a script in the account name is shown on the payment page as text, in the title, the heading and the page's data", async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const name = `</script><script>alert(1)</script><img src=x onerror="alert(2)">'&{x}`;
  await f.setAccount({ name });
  const inv = (await f.api.post('/v1/invoices', { amount: '5', currency: 'USD' })).body;
  const from = freshSourceIp();
  const page = await call(f.td.url, `/pay/${inv.id}`, { from });
  t.is(page.status, 200);
  t.false(page.text.includes('<script>alert'));
  t.false(page.text.includes('<img'));
  t.false(page.text.includes('</script><script>alert'));
  t.is(page.text.split('<script').length - 1, 3, 'the two data blocks and the page script, nothing more');
  t.true(page.text.includes('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;'));
  const status = await call(f.td.url, `/pay/${inv.id}/status`, { from });
  t.is(status.json.merchant, name);
});

const FORMULAS = ['=1+1', '+1+1', '-1+1', '@SUM(1)', '=HYPERLINK("http://evil.example","x")', 'ok;=1+1', 'ok,=1+1', 'ok;+1+1', 'ok;@SUM(1)', 'ok;-1+1'];

/** No cell, split on a comma or on a semicolon (a spreadsheet set to a `;` list separator), starts a formula. */
function assertNoFormula(t: ExecutionContext, text: string, what: string) {
  for (const delimiter of [',', ';']) {
    for (const cell of parseCsv(text, delimiter).flat()) {
      t.false(/^[=+\-@\t\r]/.test(cell) && !/^-?\d+(\.\d+)?$/.test(cell), `${what}: a cell ${JSON.stringify(cell)} when split on ${delimiter}`);
    }
  }
}

test('formula text in customer_id, label, comment and description never becomes a formula cell of a CSV export, whichever separator the spreadsheet uses', async (t) => {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('10');
  const api = await f.key(['read', 'withdraw', 'create_invoice', 'create_address']);
  for (const [i, text] of FORMULAS.entries()) {
    const a = await api.post('/v1/addresses', { customer_id: text, coin_id: COINS.BTC, label: text });
    t.is(a.status, 201, JSON.stringify(a.body));
    // A comment may hold line breaks: a `;`-splitting spreadsheet starts a row at one even inside quotes.
    const w = await api.post('/v1/withdrawals', {
      coin_id: COINS.BTC,
      amount: '0.001',
      to_address: PAY_TO,
      comment: `${text}\r\n${text}\n"${text}`,
      payout_id: `${i}${text}`,
    });
    t.is(w.status, 201, JSON.stringify(w.body));
    const inv = await api.post('/v1/invoices', { amount: '5', currency: 'USD', description: text, order_id: text });
    t.is(inv.status, 201, JSON.stringify(inv.body));
  }
  const key = { keyId: api.keyId, secret: api.secret };
  for (const target of ['/v1/addresses?format=csv', '/v1/withdrawals?format=csv', '/v1/invoices?format=csv']) {
    const res = await signedGet(f.td.url, key, target);
    t.is(res.status, 200, target);
    const text = res.bytes.toString('utf8');
    // The text is all there, with only a `'` in front of each formula start.
    const unguarded = text.replace(/'(?=[=+\-@])/g, '');
    for (const formula of FORMULAS) t.true(unguarded.includes(formula.replace(/"/g, '""')), `${target} keeps ${formula}`);
    assertNoFormula(t, text, target);
  }
});
