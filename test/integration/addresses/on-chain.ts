/**
 * The static address API on a real local chain, as a merchant uses it: one scenario shared by the
 * anvil and the bcoin tests (evm-api.test.ts, btc-api.test.ts), each run on its chain's fixture.
 */
import type { ExecutionContext } from 'ava';
import ExcelJS from 'exceljs';
import { archiveStaticAddressesJob, ARCHIVE_WARNING_MS } from '../../../src/jobs/archive-static-addresses.job';
import type { FakeClock } from '../../../src/shared/clock';
import { SignedClient } from '../../helpers/api-client';
import { parseCsv } from '../../helpers/csv';
import { merchantWithKey, type TestDaemon } from '../../helpers/daemon';
import type { MerchantSide } from '../../helpers/merchant-side';
import { signedGet } from '../../helpers/signed-get';
import { until } from '../chains/btc/btc-fixture';

const DAY = 24 * 3600_000;

/** What the scenarios need of a chain fixture (EvmFixture and BtcFixture have it). */
export interface OnChainFixture extends Pick<MerchantSide, 'api' | 'key' | 'accountId' | 'events'> {
  td: TestDaemon;
}

export interface OnChainCoins {
  /** The coin every address of the scenario is issued in, by `coin_id`. */
  coin: string;
  /** A second coin of the chain, issued by currency (and network), for the `coin_id` filter; null on a one-coin chain. */
  second: { coin: string; body: Record<string, unknown> } | null;
  /** A coin of another chain: the `coin_id` filter finds none of it. */
  foreign: string;
  /** How the chain's addresses look. */
  pattern: RegExp;
}

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

/**
 * Creation, 50 parallel creations, every filter and search of the list in keyset pages, the csv and
 * xlsx exports, archive by hand, restore refused while another address is active (and allowed
 * once none is), permissions, and another account's ids (404, an empty list and export).
 */
export async function apiOnChain(t: ExecutionContext, f: OnChainFixture, c: OnChainCoins): Promise<void> {
  const post = (body: Record<string, unknown>) => f.api.post('/v1/addresses', body);
  const create = async (body: Record<string, unknown>) => {
    const res = await post(body);
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const a = await create({ customer_id: 'cust-a', coin_id: c.coin, label: 'Gold member' });
  const u = c.second ? await create({ customer_id: 'cust-a', ...c.second.body }) : null;
  const b = await create({ customer_id: 'cust-b', coin_id: c.coin });
  const made = [a, ...(u ? [u] : []), b];
  for (const x of made) t.regex(x.address, c.pattern);
  t.is(new Set(made.map((x) => x.address)).size, made.length, 'each address its own');
  t.like(a, { customer_id: 'cust-a', coin_id: c.coin, label: 'Gold member', status: 'active', archived_at: null, last_deposit_at: null });
  if (u) t.like(u, { coin_id: c.second!.coin, status: 'active' });
  t.deepEqual((await f.api.get(`/v1/addresses/${a.id}`)).body, { ...a, deposits: [] });
  // The chain's watched set has them at once.
  const chainId = f.td.daemon.config.chains[0]!.id;
  for (const x of made) t.is(f.td.daemon.watched.lookup(chainId, x.address), x.id);

  const answers = await Promise.all(Array.from({ length: 50 }, () => post({ customer_id: 'cust-p', coin_id: c.coin })));
  const won = answers.filter((r) => r.status === 201);
  t.is(won.length, 1);
  for (const r of answers.filter((x) => x.status !== 201))
    t.deepEqual([r.status, r.body.error.code, r.body.error.details], [409, 'conflict', { active_address_id: won[0]!.body.id }]);
  const p = won[0]!.body;

  const ids = async (q: string) => {
    const res = await f.api.get(`/v1/addresses${q === '' ? '' : `?${q}`}`);
    t.is(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
    return res.body.items.map((x: { id: string }) => x.id);
  };
  const newestFirst = [p, b, ...(u ? [u] : []), a].map((x) => x.id);
  t.deepEqual(await ids(''), newestFirst);
  t.deepEqual(await ids('status=active'), newestFirst);
  t.deepEqual(await ids('status=archived'), []);
  t.deepEqual(await ids(`coin_id=${c.coin}`), [p.id, b.id, a.id]);
  if (u) t.deepEqual(await ids(`coin_id=${c.second!.coin}`), [u.id]);
  t.deepEqual(await ids(`coin_id=${c.foreign}`), []);
  t.deepEqual(await ids('customer_id=cust-a'), [...(u ? [u.id] : []), a.id]);
  t.deepEqual(await ids('customer_id=cust'), []);
  // search: a substring of the address, the customer id or the label from 3 characters; shorter, a prefix.
  t.deepEqual(await ids(`search=${encodeURIComponent(a.address.slice(9, 21))}`), [a.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(a.address.slice(0, 14))}`), [a.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent(a.address)}`), [a.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent('ld mem')}`), [a.id]);
  t.deepEqual(await ids('search=ust-a'), [...(u ? [u.id] : []), a.id]);
  t.deepEqual(await ids('search=cu'), newestFirst);
  t.deepEqual(await ids('search=Go'), [a.id]);
  t.deepEqual(await ids('search=old'), [a.id]);
  t.deepEqual(await ids('search=ol'), []);
  t.deepEqual(await ids('search=GOLD'), []);
  t.deepEqual(await ids(`search=ust-&customer_id=cust-b`), [b.id]);
  t.deepEqual(await ids(`search=ust-&coin_id=${c.coin}&status=active`), [p.id, b.id, a.id]);
  const first = (await f.api.get('/v1/addresses?limit=2')).body;
  t.deepEqual(
    first.items.map((x: { id: string }) => x.id),
    newestFirst.slice(0, 2),
  );
  const rest = (await f.api.get(`/v1/addresses?limit=2&cursor=${first.next_cursor}`)).body;
  t.deepEqual(
    rest.items.map((x: { id: string }) => x.id),
    newestFirst.slice(2, 4),
  );

  // Archive by hand: the address leaves the active list and the real-time scan.
  const archived = await f.api.post(`/v1/addresses/${a.id}/archive`, {});
  t.is(archived.status, 200);
  t.like(archived.body, { id: a.id, status: 'archived' });
  t.truthy(archived.body.archived_at);
  t.is(f.td.daemon.watched.lookup(chainId, a.address), undefined);
  t.deepEqual(await ids('status=archived'), [a.id]);
  t.deepEqual(await ids('status=active&customer_id=cust-a'), u ? [u.id] : []);
  t.deepEqual(await ids(`status=archived&search=${encodeURIComponent(a.address.slice(3, 15))}`), [a.id]);
  const again = await f.api.post(`/v1/addresses/${a.id}/archive`, {});
  t.deepEqual([again.status, again.body.error.code], [409, 'conflict']);
  t.deepEqual(
    (await f.events('static_address.archived')).map((e) => [e.object_id, e.data.reason, e.data.address.status]),
    [[a.id, 'manual', 'archived']],
  );

  // Restore refused while another address of the customer and coin is active; allowed once none is.
  const next = await create({ customer_id: 'cust-a', coin_id: c.coin });
  t.not(next.address, a.address);
  const refused = await f.api.post(`/v1/addresses/${a.id}/restore`, {});
  t.deepEqual([refused.status, refused.body.error.code, refused.body.error.details], [409, 'conflict', { active_address_id: next.id }]);
  t.like((await f.api.get(`/v1/addresses/${a.id}`)).body, { status: 'archived' });
  t.is(f.td.daemon.watched.lookup(chainId, a.address), undefined);
  t.is((await f.api.post(`/v1/addresses/${next.id}/archive`, {})).status, 200);
  const restored = await f.api.post(`/v1/addresses/${a.id}/restore`, {});
  t.is(restored.status, 200);
  t.like(restored.body, { id: a.id, status: 'active', archived_at: null });
  t.is(f.td.daemon.watched.lookup(chainId, a.address), a.id);
  t.deepEqual(
    (await f.events('static_address.restored')).map((e) => [e.object_id, e.data.reason]),
    [[a.id, 'manual']],
  );

  // Exports of the filtered list, every field as text.
  const csv = await signedGet(f.td.url, f.key, '/v1/addresses?format=csv&customer_id=cust-a');
  t.is(csv.status, 200);
  t.is(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(csv.headers.get('content-disposition') ?? '', /^attachment; filename="addresses-\d{8}T\d{6}Z\.csv"$/);
  const rows = parseCsv(csv.bytes.toString('utf8'));
  t.deepEqual(rows[0], HEADER);
  const listed = (await f.api.get('/v1/addresses?customer_id=cust-a')).body.items;
  t.deepEqual(
    rows.slice(1),
    listed.map((x: Record<string, unknown>) => HEADER.map((h) => (x[h] === null ? '' : String(x[h])))),
  );
  t.deepEqual(
    rows.slice(1).map((r) => r[HEADER.indexOf('address')]),
    listed.map((x: { address: string }) => x.address),
  );
  const xlsx = await signedGet(f.td.url, f.key, '/v1/addresses?format=xlsx&status=archived');
  t.is(xlsx.status, 200);
  t.regex(xlsx.headers.get('content-disposition') ?? '', /^attachment; filename="addresses-\d{8}T\d{6}Z\.xlsx"$/);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(xlsx.bytes as unknown as ArrayBuffer);
  const ws = wb.worksheets[0]!;
  t.deepEqual((ws.getRow(1).values as unknown[]).slice(1), HEADER);
  t.is(ws.rowCount, 2);
  const cells = (row: number) => HEADER.map((_, i) => ws.getRow(row).getCell(i + 1).text);
  t.deepEqual(cells(2).slice(0, 8), [next.id, 'cust-a', c.coin, next.ticker, next.network, next.address, '', 'archived']);

  // Permissions, and other accounts' keys: they reach only their own addresses; nothing changes.
  const before = (await f.api.get('/v1/addresses')).body;
  const readOnly = await merchantWithKey(f.td.daemon, { permissions: ['read'] });
  const writeOnly = await merchantWithKey(f.td.daemon, { permissions: ['create_address'] });
  const stranger = await merchantWithKey(f.td.daemon);
  const as = (m: { keyId: string; secret: string }) => ({ keyId: m.keyId, secret: m.secret });
  const client = (m: { keyId: string; secret: string }) => new SignedClient(f.td.url, m.keyId, m.secret);
  const send = async (m: { keyId: string; secret: string }, method: 'GET' | 'POST', target: string, body?: unknown) => {
    const res = method === 'GET' ? await client(m).get(target) : await client(m).post(target, body ?? {}, { headers: { 'Content-Type': 'application/json' } });
    return [res.status, res.json?.error?.code, res.json?.error?.details];
  };
  t.deepEqual(await send(readOnly, 'POST', '/v1/addresses', { customer_id: 'cust-a', coin_id: c.coin }), [
    403,
    'auth.permission_denied',
    { required: 'create_address' },
  ]);
  t.deepEqual(await send(readOnly, 'POST', `/v1/addresses/${b.id}/archive`), [403, 'auth.permission_denied', { required: 'create_address' }]);
  t.deepEqual(await send(writeOnly, 'GET', '/v1/addresses'), [403, 'auth.permission_denied', { required: 'read' }]);
  t.deepEqual(await send(writeOnly, 'GET', `/v1/addresses/${b.id}`), [403, 'auth.permission_denied', { required: 'read' }]);
  for (const m of [readOnly, stranger]) t.deepEqual(await send(m, 'GET', `/v1/addresses/${b.id}`), [404, 'not_found', {}]);
  for (const m of [writeOnly, stranger]) {
    t.deepEqual(await send(m, 'POST', `/v1/addresses/${b.id}/archive`), [404, 'not_found', {}]);
    t.deepEqual(await send(m, 'POST', `/v1/addresses/${next.id}/restore`), [404, 'not_found', {}]);
  }
  t.deepEqual((await client(stranger).get(`/v1/addresses?search=${encodeURIComponent(b.address)}`)).json, { items: [], next_cursor: null });
  t.deepEqual((await client(readOnly).get('/v1/addresses')).json, { items: [], next_cursor: null });
  const foreignCsv = await signedGet(f.td.url, as(stranger), '/v1/addresses?format=csv');
  t.deepEqual(parseCsv(foreignCsv.bytes.toString('utf8')), [HEADER]);
  // The stranger's own address of the same customer id is its own: no conflict with ours.
  t.is((await send(stranger, 'POST', '/v1/addresses', { customer_id: 'cust-b', coin_id: c.coin }))[0], 201);
  t.deepEqual((await f.api.get('/v1/addresses')).body, before);
}

/**
 * The automatic archive on a real chain with a fake clock (the daemon's own job, run when the
 * test has moved the clock; its schedule may run it too, which changes nothing asserted): two
 * idle addresses are warned 7 days before 180 days; a deposit to one starts its count again; the
 * other is archived (reason inactive) and leaves the real-time scan; the first is archived 180
 * days after its deposit, warned again before.
 */
export async function autoArchiveOnChain(
  t: ExecutionContext,
  f: OnChainFixture,
  clock: FakeClock,
  c: { coin: string; deposit(address: string): Promise<string> },
): Promise<void> {
  t.is(f.td.daemon.config.static_addresses.archive_after_days, 180);
  const create = async (customer: string) => {
    const res = await f.api.post('/v1/addresses', { customer_id: customer, coin_id: c.coin, label: customer });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const idle = await create('cust-idle');
  const busy = await create('cust-busy');
  const chainId = f.td.daemon.config.chains[0]!.id;
  const job = () =>
    archiveStaticAddressesJob(f.td.daemon.staticAddresses.service, f.td.daemon.config.static_addresses.archive_after_days).run(new AbortController().signal);
  const status = async (id: string) => (await f.api.get(`/v1/addresses/${id}`)).body.status;
  const warnings = async () => (await f.events('static_address.archive_warning')).map((e) => e.object_id);

  clock.advance(180 * DAY - ARCHIVE_WARNING_MS - 60_000);
  await job();
  t.deepEqual(await warnings(), []);
  clock.advance(60_000);
  await job();
  t.deepEqual((await warnings()).sort(), [idle.id, busy.id].sort());
  const warning = (await f.events('static_address.archive_warning')).find((e) => e.object_id === idle.id)!;
  t.like(warning.data, { address: { id: idle.id, status: 'active', label: 'cust-idle' } });
  t.is(warning.data.archive_at, new Date(Date.parse(idle.created_at) + 180 * DAY).toISOString());
  await job();
  t.is((await warnings()).length, 2, 'warned once');

  // A deposit to one of them, 3 days later: its count starts again.
  clock.advance(3 * DAY);
  const txid = await c.deposit(busy.address);
  let seen: any;
  await until(
    async () => (seen = (await f.api.get(`/v1/addresses/${busy.id}`)).body).deposits.some((d: { txid: string }) => d.txid === txid),
    'the deposit seen',
  );
  t.truthy(seen.last_deposit_at);
  clock.advance(4 * DAY);
  await job();
  t.is(await status(idle.id), 'archived');
  t.is(await status(busy.id), 'active');
  const archived = await f.events('static_address.archived');
  t.deepEqual(
    archived.map((e) => [e.object_id, e.data.reason, e.data.address.status]),
    [[idle.id, 'inactive', 'archived']],
  );
  t.is(f.td.daemon.watched.lookup(chainId, idle.address), undefined);
  t.is(f.td.daemon.watched.lookup(chainId, busy.address), busy.id);
  t.deepEqual(
    (await f.api.get('/v1/addresses?status=archived')).body.items.map((x: { id: string }) => x.id),
    [idle.id],
  );

  // 180 days after its deposit (counted from when the daemon saw it), the other one: warned, then archived.
  clock.advance(180 * DAY - ARCHIVE_WARNING_MS - 4 * DAY);
  await job();
  t.deepEqual((await warnings()).filter((id) => id === busy.id).length, 2);
  clock.advance(ARCHIVE_WARNING_MS);
  await job();
  t.is(await status(busy.id), 'archived');
  t.deepEqual(
    (await f.events('static_address.archived')).map((e) => [e.object_id, e.data.reason]),
    [
      [idle.id, 'inactive'],
      [busy.id, 'inactive'],
    ],
  );
  t.is(f.td.daemon.watched.lookup(chainId, busy.address), undefined);
}
