import test from 'ava';
import ExcelJS from 'exceljs';
import { parseCsv } from '../../helpers/csv';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { signedGet } from '../../helpers/signed-get';

const HEADER = [
  'id',
  'status',
  'currency',
  'amount',
  'coin_id',
  'ticker',
  'network',
  'address',
  'amount_crypto',
  'payer_amount',
  'paid_amount',
  'remaining_amount',
  'overpaid_amount',
  'refunded_amount',
  'resolution',
  'amount_fiat',
  'fiat_currency',
  'rate_locked',
  'rate_locked_at',
  'late_payment',
  'fee_paid_by',
  'order_id',
  'description',
  'return_url',
  'webhook_url',
  'metadata',
  'allowed_coin_ids',
  'checkout_url',
  'ttl_expires_at',
  'expired_at',
  'created_at',
  'updated_at',
];

async function setup() {
  const f = await startInvoiceFixture();
  const key = { keyId: f.api.keyId, secret: f.api.secret };
  const wei = (await f.api.post('/v1/invoices', { amount: '1.000000000000000001', currency: 'ETH', coin_id: COINS.ETH, order_id: 'o-1' })).body;
  const fiat = (
    await f.api.post('/v1/invoices', {
      amount: '10.5',
      currency: 'USD',
      description: '=HYPERLINK("http://x")',
      metadata: { note: 'a,b "quoted"' },
      allowed_coin_ids: [COINS.BTC],
    })
  ).body;
  const cancelled = (await f.api.post('/v1/invoices', { amount: '3', currency: 'USD', order_id: 'o-3' })).body;
  await f.api.post(`/v1/invoices/${cancelled.id}/cancel`);
  return { f, key, wei, fiat, cancelledId: cancelled.id as string };
}

test('GET /v1/invoices?format=csv streams the list as CSV: every field, same order as JSON, exact decimals, quoting and the formula guard', async (t) => {
  const { f, key, wei, fiat } = await setup();
  t.teardown(() => f.stop());
  const res = await signedGet(f.td.url, key, '/v1/invoices?format=csv');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(res.headers.get('content-disposition') ?? '', /^attachment; filename="invoices-\d{8}T\d{6}Z\.csv"$/);
  const rows = parseCsv(res.bytes.toString('utf8'));
  t.deepEqual(rows[0], HEADER);
  const json = await signedGet(f.td.url, key, '/v1/invoices?limit=100');
  t.deepEqual(
    rows.slice(1).map((r) => r[0]),
    json.body.items.map((x: { id: string }) => x.id),
  );
  const byId = new Map(rows.slice(1).map((r) => [r[0], Object.fromEntries(HEADER.map((h, i) => [h, r[i]]))]));
  t.like(byId.get(wei.id), {
    amount: '1.000000000000000001',
    amount_crypto: '1.000000000000000001',
    ticker: 'ETH',
    address: wei.address,
    late_payment: 'false',
    metadata: '',
    description: '',
  });
  t.like(byId.get(fiat.id), {
    amount: '10.5',
    currency: 'USD',
    coin_id: '',
    description: `'=HYPERLINK("http://x")`,
    metadata: JSON.stringify({ note: 'a,b "quoted"' }),
    allowed_coin_ids: JSON.stringify([COINS.BTC]),
    checkout_url: fiat.checkout_url,
  });
});

test("the invoice export applies the list's filters (status, order_id, created window)", async (t) => {
  const { f, key, wei, cancelledId } = await setup();
  t.teardown(() => f.stop());
  const ids = async (q: string) =>
    parseCsv((await signedGet(f.td.url, key, `/v1/invoices?format=csv&${q}`)).bytes.toString('utf8'))
      .slice(1)
      .map((r) => r[0]);
  t.deepEqual(await ids('status=cancelled'), [cancelledId]);
  t.deepEqual(await ids('order_id=o-1'), [wei.id]);
  t.deepEqual(await ids(`created_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
});

test('GET /v1/invoices?format=xlsx is a workbook whose every cell is text', async (t) => {
  const { f, key, wei } = await setup();
  t.teardown(() => f.stop());
  const res = await signedGet(f.td.url, key, '/v1/invoices?format=xlsx&order_id=o-1');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  t.regex(res.headers.get('content-disposition') ?? '', /^attachment; filename="invoices-\d{8}T\d{6}Z\.xlsx"$/);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(res.bytes as unknown as ArrayBuffer);
  const ws = wb.worksheets[0]!;
  t.is(ws.name, 'invoices');
  const rows: Array<Record<string, string>> = [];
  ws.eachRow((row) => {
    const values: Record<string, string> = {};
    HEADER.forEach((h, i) => {
      const cell = row.getCell(i + 1);
      if (cell.type !== ExcelJS.ValueType.Null) t.is(cell.type, ExcelJS.ValueType.String, `${cell.address} is ${cell.type}`);
      values[h] = cell.type === ExcelJS.ValueType.Null ? '' : String(cell.value);
    });
    rows.push(values);
  });
  t.is(rows.length, 2);
  t.like(rows[1], { id: wei.id, amount: '1.000000000000000001', paid_amount: '0', late_payment: 'false' });
});

test('an unknown export format is 400 validation_error on format', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const res = await signedGet(f.td.url, { keyId: f.api.keyId, secret: f.api.secret }, '/v1/invoices?format=pdf');
  t.is(res.status, 400);
  t.is(res.body.error.code, 'validation_error');
  t.is(res.body.error.details.field, 'format');
});

test('the count behind the XLSX row limit stops at its cap and follows the filters', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  for (let i = 0; i < 5; i++) await f.api.post('/v1/invoices', { amount: '1', currency: 'USD', order_id: `c-${i}` });
  const svc = f.td.daemon.invoices.service;
  t.is(await svc.count(f.accountId, {}, null, 100), 5);
  t.is(await svc.count(f.accountId, {}, null, 3), 3);
  t.is(await svc.count(f.accountId, { order_id: 'c-2' }, null, 100), 1);
});
