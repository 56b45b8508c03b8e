import test, { type ExecutionContext } from 'ava';
import ExcelJS from 'exceljs';
import { StaticAddressEntity } from '../../../src/db/entities/static-address';
import { newId } from '../../../src/shared/ids';
import { parseCsv } from '../../helpers/csv';
import { merchantWithKey } from '../../helpers/daemon';
import { ApiClient, COINS, startInvoiceFixture, type ApiResponse, type InvoiceFixture } from '../../helpers/invoice-fixture';
import { signedGet } from '../../helpers/signed-get';

const HEADER = [
  'id',
  'customer_id',
  'coin_id',
  'ticker',
  'network',
  'address',
  'label',
  'status',
  'archived_at',
  'last_deposit_at',
  'created_at',
  'updated_at',
];

const expectError = (t: ExecutionContext, res: ApiResponse, status: number, code: string, details: Record<string, unknown>) => {
  t.is(res.status, status, `${code}: ${JSON.stringify(res.body)}`);
  t.is(res.body?.error?.code, code);
  t.deepEqual(res.body?.error?.details, details);
  t.is(typeof res.body?.error?.message, 'string');
};

const create = async (f: InvoiceFixture, body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/addresses', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

/** What an answer that must change nothing is checked against. */
const snapshot = async (f: InvoiceFixture) => ({
  ...(await f.counts()),
  rows: await f.td.daemon.store.read.find(StaticAddressEntity, { order: { id: 'ASC' } }),
});

test('POST /v1/addresses issues an active address of the coin for the customer, with every field of PRODUCT §7', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'cust-1', coin_id: COINS.ETH, label: 'Alice' });
  t.like(a, {
    customer_id: 'cust-1',
    coin_id: COINS.ETH,
    ticker: 'ETH',
    network: 'ethereum',
    label: 'Alice',
    status: 'active',
    archived_at: null,
    last_deposit_at: null,
  });
  t.deepEqual(Object.keys(a), HEADER);
  t.regex(a.address, /^fake/);
  const got = await f.api.get(`/v1/addresses/${a.id}`);
  t.is(got.status, 200);
  t.deepEqual(got.body, { ...a, deposits: [] });
  const byTicker = await create(f, { customer_id: 'cust-1', currency: 'USDT', network: 'tron' });
  t.like(byTicker, { coin_id: COINS.USDT_TRON, label: null });
  const single = await create(f, { customer_id: 'cust-1', currency: 'BTC' });
  t.is(single.coin_id, COINS.BTC);
  t.deepEqual(
    (await f.events()).map((e) => e.type),
    [],
  );
});

test('a second active address for the same customer and coin is 409 conflict naming the active one; nothing is issued', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'c', coin_id: COINS.BTC });
  const before = await snapshot(f);
  expectError(t, await f.api.post('/v1/addresses', { customer_id: 'c', coin_id: COINS.BTC, label: 'other' }), 409, 'conflict', { active_address_id: a.id });
  t.deepEqual(await snapshot(f), before);
  // Another coin, or another customer, is a new address.
  await create(f, { customer_id: 'c', coin_id: COINS.ETH });
  await create(f, { customer_id: 'd', coin_id: COINS.BTC });
});

test('50 identical creations at once: exactly one address exists and every other answer names it', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const answers = await Promise.all(Array.from({ length: 50 }, () => f.api.post('/v1/addresses', { customer_id: 'race', coin_id: COINS.USDT_ETH })));
  const created = answers.filter((r) => r.status === 201);
  t.is(created.length, 1);
  const id = created[0]!.body.id;
  for (const r of answers.filter((x) => x.status !== 201)) expectError(t, r, 409, 'conflict', { active_address_id: id });
  t.is(await f.td.daemon.store.read.count(StaticAddressEntity), 1);
  t.is((await f.counts()).addresses, 1);
});

test('an Idempotency-Key repeat replays the address and issues nothing twice; the key with another body is 422', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const first = await f.api.post('/v1/addresses', { customer_id: 'k', coin_id: COINS.ETH }, { 'Idempotency-Key': 'addr-1' });
  t.is(first.status, 201);
  const again = await f.api.post('/v1/addresses', { customer_id: 'k', coin_id: COINS.ETH }, { 'Idempotency-Key': 'addr-1' });
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  const before = await snapshot(f);
  expectError(
    t,
    await f.api.post('/v1/addresses', { customer_id: 'other', coin_id: COINS.ETH }, { 'Idempotency-Key': 'addr-1' }),
    422,
    'idempotency.mismatch',
    {},
  );
  t.deepEqual(await snapshot(f), before);
});

test('GET /v1/addresses filters by status, coin_id, customer_id and search (substring of address, customer id or label from 3 characters, prefix below), in keyset pages', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'alice-1', coin_id: COINS.BTC, label: 'VIP Alice' });
  const b = await create(f, { customer_id: 'bob-7', coin_id: COINS.ETH, label: 'Bob' });
  const c = await create(f, { customer_id: 'carol', coin_id: COINS.ETH });
  t.is((await f.api.post(`/v1/addresses/${c.id}/archive`)).status, 200);
  const ids = async (q: string) => {
    const res = await f.api.get(`/v1/addresses${q === '' ? '' : `?${q}`}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body.items.map((x: { id: string }) => x.id);
  };
  t.deepEqual(await ids(''), [c.id, b.id, a.id]);
  t.deepEqual(await ids('status=active'), [b.id, a.id]);
  t.deepEqual(await ids('status=archived'), [c.id]);
  t.deepEqual(await ids(`coin_id=${COINS.ETH}`), [c.id, b.id]);
  t.deepEqual(await ids('customer_id=bob-7'), [b.id]);
  t.deepEqual(await ids('customer_id=bob'), []);
  t.deepEqual(await ids('search=alice'), [a.id]);
  t.deepEqual(await ids('search=VIP'), [a.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(b.address.slice(0, b.address.lastIndexOf('-')))}`), [c.id, b.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(b.address)}`), [b.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(c.address)}`), [c.id]);
  t.deepEqual(await ids('search=zzz'), []);
  // From 3 characters a substring, case-sensitive, of any of the three; shorter, a prefix.
  t.deepEqual(await ids('search=Alice'), [a.id]);
  t.deepEqual(await ids('search=lic'), [a.id]);
  t.deepEqual(await ids('search=ob-'), [b.id]);
  t.deepEqual(await ids('search=ALICE'), []);
  t.deepEqual(await ids('search=ob'), []);
  t.deepEqual(await ids('search=bo'), [b.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(b.address.slice(2, 12))}`), [c.id, b.id]);
  const chain = f.td.daemon.config.chains.find((x) => a.address.includes(`-${x.id}-`))!.id;
  t.deepEqual(await ids(`search=${encodeURIComponent(`-${chain}-`)}&status=active`), [a.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(`-${chain}-`)}&status=archived`), []);
  // The trigram index is asked for the text's last 8 characters; the rows found must hold the whole text.
  t.deepEqual(await ids(`search=${encodeURIComponent('XVIP Alice')}`), []);
  t.deepEqual(await ids('search=%25%25%25'), []);
  t.deepEqual(await ids('search=%22ob-%22'), []);

  const first = (await f.api.get('/v1/addresses?limit=2')).body;
  t.deepEqual(
    first.items.map((x: { id: string }) => x.id),
    [c.id, b.id],
  );
  t.truthy(first.next_cursor);
  const d = await create(f, { customer_id: 'dave', coin_id: COINS.BTC });
  const second = (await f.api.get(`/v1/addresses?limit=2&cursor=${first.next_cursor}`)).body;
  t.deepEqual(
    second.items.map((x: { id: string }) => x.id),
    [a.id],
  );
  t.is(second.next_cursor, null);
  t.deepEqual(await ids(''), [d.id, c.id, b.id, a.id]);
  expectError(t, await f.api.get(`/v1/addresses?limit=2&status=active&cursor=${first.next_cursor}`), 400, 'validation_error', { field: 'cursor' });
});

test('GET /v1/addresses?format=csv and xlsx export the filtered list with every field as text', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const key = { keyId: f.api.keyId, secret: f.api.secret };
  const a = await create(f, { customer_id: 'x,"1"', coin_id: COINS.BTC, label: '=cmd' });
  await create(f, { customer_id: 'y', coin_id: COINS.ETH });
  const csv = await signedGet(f.td.url, key, `/v1/addresses?format=csv&coin_id=${COINS.BTC}`);
  t.is(csv.status, 200);
  t.is(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(csv.headers.get('content-disposition') ?? '', /^attachment; filename="addresses-\d{8}T\d{6}Z\.csv"$/);
  const rows = parseCsv(csv.bytes.toString('utf8'));
  t.deepEqual(rows[0], HEADER);
  t.is(rows.length, 2);
  t.like(Object.fromEntries(HEADER.map((h, i) => [h, rows[1]![i]])), { id: a.id, customer_id: 'x,"1"', label: `'=cmd`, status: 'active', archived_at: '' });

  const xlsx = await signedGet(f.td.url, key, '/v1/addresses?format=xlsx');
  t.is(xlsx.status, 200);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(xlsx.bytes as unknown as ArrayBuffer);
  const ws = wb.worksheets[0]!;
  t.is(ws.rowCount, 3);
  t.deepEqual((ws.getRow(1).values as unknown[]).slice(1), HEADER);
});

test('archive and restore: events in the same change, restore refused with 409 while another address is active', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'c', coin_id: COINS.ETH });
  const archived = await f.api.post(`/v1/addresses/${a.id}/archive`);
  t.is(archived.status, 200);
  t.is(archived.body.status, 'archived');
  t.truthy(archived.body.archived_at);
  expectError(t, await f.api.post(`/v1/addresses/${a.id}/archive`), 409, 'conflict', {});

  const b = await create(f, { customer_id: 'c', coin_id: COINS.ETH });
  t.not(b.address, a.address);
  const before = await snapshot(f);
  expectError(t, await f.api.post(`/v1/addresses/${a.id}/restore`), 409, 'conflict', { active_address_id: b.id });
  t.deepEqual(await snapshot(f), before);

  t.is((await f.api.post(`/v1/addresses/${b.id}/archive`)).status, 200);
  const restored = await f.api.post(`/v1/addresses/${a.id}/restore`);
  t.is(restored.status, 200);
  t.like(restored.body, { id: a.id, status: 'active', archived_at: null });
  expectError(t, await f.api.post(`/v1/addresses/${a.id}/restore`), 409, 'conflict', { active_address_id: a.id });

  const events = await f.events();
  t.deepEqual(
    events.map((e) => e.type),
    ['static_address.archived', 'static_address.archived', 'static_address.restored'],
  );
  t.deepEqual(
    events.map((e) => e.object_id),
    [a.id, b.id, a.id],
  );
  t.like(events[0]!.data.address, { id: a.id, status: 'archived' });
  t.deepEqual(events[2]!.data, { address: restored.body, reason: 'manual' });
});

test('bad input is 400 validation_error naming the field, and changes nothing', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await create(f, { customer_id: 'c', coin_id: COINS.BTC });
  const before = await snapshot(f);
  const cases: Array<[Record<string, unknown>, string, Record<string, unknown>?]> = [
    [{ coin_id: COINS.BTC }, 'customer_id'],
    [{ customer_id: '', coin_id: COINS.BTC }, 'customer_id'],
    [{ customer_id: 'x'.repeat(129), coin_id: COINS.BTC }, 'customer_id'],
    [{ customer_id: 'a\nb', coin_id: COINS.BTC }, 'customer_id'],
    [{ customer_id: 7, coin_id: COINS.BTC }, 'customer_id'],
    [{ customer_id: 'c2' }, 'coin_id'],
    [{ customer_id: 'c2', coin_id: 'not-a-uuid' }, 'coin_id'],
    [{ customer_id: 'c2', coin_id: newId() }, 'coin_id'],
    [{ customer_id: 'c2', coin_id: COINS.BTC, currency: 'BTC' }, 'coin_id'],
    [{ customer_id: 'c2', currency: 'DOGE' }, 'currency'],
    [{ customer_id: 'c2', currency: 'USDT' }, 'network', { supported: ['ethereum', 'tron'] }],
    [{ customer_id: 'c2', currency: 'USDT', network: 'bitcoin' }, 'network', { supported: ['ethereum', 'tron'] }],
    [{ customer_id: 'c2', coin_id: COINS.BTC, label: 'l'.repeat(201) }, 'label'],
    [{ customer_id: 'c2', coin_id: COINS.BTC, label: 5 }, 'label'],
    [{ customer_id: 'c2', coin_id: COINS.BTC, colour: 'red' }, 'colour'],
  ];
  for (const [body, field, extra] of cases) {
    expectError(t, await f.api.post('/v1/addresses', body), 400, 'validation_error', { field, ...extra });
  }
  for (const q of ['status=deleted', 'coin_id=x', 'search=', `search=${'s'.repeat(201)}`, 'customer_id=', 'limit=0', 'cursor=%%%', 'format=pdf']) {
    const field = q.split('=')[0]!;
    expectError(t, await f.api.get(`/v1/addresses?${q}`), 400, 'validation_error', { field });
  }
  t.deepEqual(await snapshot(f), before);
});

test("permissions: reading needs read, creating, archiving and restoring need create_address; another account's id is 404", async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'c', coin_id: COINS.BTC });
  const readOnly = await merchantWithKey(f.td.daemon, { permissions: ['read'] });
  const ro = new ApiClient(f.td.url, readOnly.keyId, readOnly.secret);
  const writeOnly = await merchantWithKey(f.td.daemon, { permissions: ['create_address'] });
  const wo = new ApiClient(f.td.url, writeOnly.keyId, writeOnly.secret);
  const before = await snapshot(f);
  expectError(t, await ro.post('/v1/addresses', { customer_id: 'c', coin_id: COINS.BTC }), 403, 'auth.permission_denied', { required: 'create_address' });
  expectError(t, await wo.get('/v1/addresses'), 403, 'auth.permission_denied', { required: 'read' });
  // The other accounts' keys reach only their own addresses.
  expectError(t, await ro.get(`/v1/addresses/${a.id}`), 404, 'not_found', {});
  expectError(t, await wo.post(`/v1/addresses/${a.id}/archive`), 404, 'not_found', {});
  expectError(t, await wo.post(`/v1/addresses/${a.id}/restore`), 404, 'not_found', {});
  expectError(t, await ro.post(`/v1/addresses/${a.id}/archive`), 403, 'auth.permission_denied', { required: 'create_address' });
  t.deepEqual((await ro.get('/v1/addresses')).body, { items: [], next_cursor: null });
  expectError(t, await f.api.get(`/v1/addresses/${newId()}`), 404, 'not_found', {});
  expectError(t, await f.api.get('/v1/addresses/not-an-id'), 404, 'not_found', {});
  t.deepEqual(await snapshot(f), before);
});

test('search by a text most addresses hold (rows tested newest first), a rare one (rows the trigram index finds for its end) and one another account holds often (the trigram index for the whole text) find their rows newest first in keyset pages, and export them all', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const N = 2100;
  const other = await merchantWithKey(f.td.daemon);
  // Recent rows (a day ago): rows older than static_addresses.archive_after_days would be archived
  // by the daemon's job should it run meanwhile, and drop out of `status=active`.
  const t0 = Date.now() - 24 * 3600 * 1000;
  const insert = (accountId: string, rows: number, row: (i: number) => [customerId: string, address: string, label: string | null]) =>
    f.td.daemon.store.write(async (em) => {
      for (let from = 0; from < rows; from += 300) {
        const values: unknown[] = [];
        const n = Math.min(300, rows - from);
        for (let i = from; i < from + n; i++) {
          const at = new Date(t0 + i * 1000).toISOString();
          const [customerId, address, label] = row(i);
          values.push(newId(), accountId, customerId, COINS.ETH, address, label, 'active', null, null, at, null, at, at);
        }
        await em.query(
          `INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at) VALUES ${Array(
            n,
          )
            .fill(`(${Array(13).fill('?').join(',')})`)
            .join(',')}`,
          values,
        );
      }
    });
  // The merge steps since the inserts, by whoever asked: this test, or the daemon's upkeep job
  // (at the start of every minute; on a loaded machine it may merge the inserts first).
  const service = f.td.daemon.staticAddresses.service;
  const mergeOnce = service.mergeSearchIndex.bind(service);
  let mergedSteps = 0;
  service.mergeSearchIndex = async (opts) => {
    const r = await mergeOnce(opts);
    mergedSteps += r.steps;
    return r;
  };
  await insert(f.accountId, N, (i) => [`many-${i}`, `0xbulk${String(i).padStart(6, '0')}`, i % 7 === 0 ? `Lucky ${i}` : null]);
  await insert(other.accountId, 300, (i) => [`twin-${i}`, `0xtwin${String(i).padStart(6, '0')}`, `Lucky 10${i}`]);
  const page = async (q: string, cursor?: string) => (await f.api.get(`/v1/addresses?${q}&limit=100${cursor ? `&cursor=${cursor}` : ''}`)).body;
  const all = async (q: string) => {
    const out: string[] = [];
    for (let p = await page(q); ; p = await page(q, p.next_cursor)) {
      out.push(...p.items.map((x: any) => x.customer_id));
      if (!p.next_cursor) return out;
    }
  };
  const newestFirst = (ok: (i: number) => boolean) =>
    Array.from({ length: N }, (_, i) => N - 1 - i)
      .filter(ok)
      .map((i) => `many-${i}`);
  // Every row holds "any-": the common-text path. "ucky 10": a few here (Lucky 1001, 1008, ...),
  // more than 200 with the other account's: the index path for the whole text. "any-20" and
  // "bulk002099": up to 200 rows hold their last 8 characters, read by rowid.
  const common = await all('search=any-');
  t.is(common.length, N);
  t.deepEqual(common.slice(0, 3), ['many-2099', 'many-2098', 'many-2097']);
  const rare = await all(`search=${encodeURIComponent('ucky 10')}`);
  t.deepEqual(
    rare,
    newestFirst((i) => i % 7 === 0 && `Lucky ${i}`.includes('ucky 10')),
  );
  t.true(rare.length > 10);
  t.deepEqual(
    await all('search=any-20&status=active'),
    Array.from({ length: N }, (_, i) => N - 1 - i)
      .filter((i) => `many-${i}`.includes('any-20'))
      .map((i) => `many-${i}`),
  );
  t.deepEqual(await all('search=bulk002099'), ['many-2099']);
  // The daemon's upkeep merges the index (each insert above left a segment): the same answers after, and nothing left to merge.
  const merged = await service.mergeSearchIndex({ stepPages: 1, budgetMs: 60_000 });
  t.true(merged.done);
  t.true(mergedSteps > 0, 'the inserts left segments to merge');
  t.deepEqual(await service.mergeSearchIndex({ stepPages: 1, budgetMs: 60_000 }), { steps: 0, done: true });
  t.deepEqual(await all(`search=${encodeURIComponent('ucky 10')}`), rare);
  t.deepEqual(await all('search=bulk002099'), ['many-2099']);
  const key = { keyId: f.api.keyId, secret: f.api.secret };
  const csv = await signedGet(f.td.url, key, '/v1/addresses?format=csv&search=any-');
  t.is(csv.status, 200);
  t.is(parseCsv(csv.bytes.toString('utf8')).length, N + 1);
});
