import test from 'ava';
import ExcelJS from 'exceljs';
import { TransactionEntity } from '../../../src/db/entities/money';
import { newId } from '../../../src/shared/ids';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { signedGet } from '../../helpers/signed-get';
import { parseCsv } from '../../helpers/csv';
import { recordTransaction, seedTransactions } from '../../helpers/money-fixtures';
import { BTC, CHAINS, ETH } from './fixtures';

const HEADER = [
  'id',
  'type',
  'status',
  'coin_id',
  'ticker',
  'network',
  'amount',
  'fee',
  'net_amount',
  'txid',
  'confirmations',
  'invoice_id',
  'address_id',
  'withdrawal_id',
  'refund_id',
  'refunded_amount',
  'created_at',
  'confirmed_at',
];
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** Odd text in a free-text column (txid), as a hostile or careless writer could leave it. */
const NASTY = ['a,b', 'say "hi"', 'line1\nline2', '=HYPERLINK("http://x")', '+1+1', '@SUM(A1)', '-2+3', '\tTAB'];

async function setup() {
  const td = await startTestDaemon(CHAINS);
  const m = await merchantWithKey(td.daemon);
  const other = await merchantWithKey(td.daemon);
  const key = { keyId: m.keyId, secret: m.secret };
  const store = td.daemon.store;
  const weiPay = await recordTransaction(store, {
    accountId: m.accountId,
    coinId: ETH,
    amount: '1.000000000000000001',
    fee: '0.000000000000000001',
    createdAt: at(0),
  });
  const deposit = await recordTransaction(store, { accountId: m.accountId, coinId: BTC, amount: '0.1', type: 'deposit', status: 'pending', createdAt: at(1) });
  const nasty = [];
  for (const [i, txid] of NASTY.entries())
    nasty.push(await recordTransaction(store, { accountId: m.accountId, coinId: BTC, amount: '2', txid, createdAt: at(10 + i) }));
  const adjustment = {
    id: newId(),
    account_id: m.accountId,
    type: 'adjustment' as const,
    status: 'confirmed' as const,
    coin_id: BTC,
    amount: '-0.5',
    fee: '0',
    net_amount: '-0.5',
    txid: null,
    chain_transfer_id: null,
    invoice_id: null,
    address_id: null,
    withdrawal_id: null,
    reverses_id: null,
    created_at: at(30),
    confirmed_at: at(30),
    updated_at: at(30),
  };
  await store.write((em) => em.insert(TransactionEntity, adjustment));
  await recordTransaction(store, { accountId: other.accountId, coinId: BTC, amount: '7', createdAt: at(2) });
  return { td, m, key, weiPay, deposit, nasty, adjustment };
}

test('?format=csv streams the same list as CSV: headers, file name, exact decimals, RFC 4180 quoting and the formula guard', async (t) => {
  const { td, key, weiPay, deposit, nasty, adjustment } = await setup();
  t.teardown(() => td.stop());
  const res = await signedGet(td.url, key, '/v1/transactions?format=csv');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(res.headers.get('content-disposition') ?? '', /^attachment; filename="transactions-\d{8}T\d{6}Z\.csv"$/);
  t.is(res.headers.get('x-api-version'), 'v1');
  const text = res.bytes.toString('utf8');
  t.true(text.endsWith('\r\n'));
  const rows = parseCsv(text);
  t.deepEqual(rows[0], HEADER);
  const json = await signedGet(td.url, key, '/v1/transactions?limit=100');
  t.deepEqual(
    rows.slice(1).map((r) => r[0]),
    json.body.items.map((x: { id: string }) => x.id),
  );
  t.is(rows.length, 1 + 2 + NASTY.length + 1);

  const byId = new Map(rows.slice(1).map((r) => [r[0], Object.fromEntries(HEADER.map((h, i) => [h, r[i]]))]));
  t.like(byId.get(weiPay.id), { amount: '1.000000000000000001', fee: '0.000000000000000001', net_amount: '1', ticker: 'ETH', confirmations: '' });
  t.like(byId.get(deposit.id), { status: 'pending', fee: '', net_amount: '', confirmed_at: '' });
  // A negative amount is a number, not a formula: it keeps its value.
  t.like(byId.get(adjustment.id), { type: 'adjustment', amount: '-0.5', txid: '' });
  const txids = nasty.map((n) => byId.get(n.id)!.txid);
  t.deepEqual(txids, ['a,b', 'say "hi"', 'line1\nline2', `'=HYPERLINK("http://x")`, "'+1+1", "'@SUM(A1)", "'-2+3", "'\tTAB"]);
  t.true(text.includes('"a,b"') && text.includes('"say ""hi"""') && text.includes('"line1\nline2"'));
});

test("?format=csv applies the list's filters", async (t) => {
  const { td, key, deposit } = await setup();
  t.teardown(() => td.stop());
  const res = await signedGet(td.url, key, `/v1/transactions?format=csv&type=deposit&from=${encodeURIComponent(at(1))}&to=${encodeURIComponent(at(2))}`);
  const rows = parseCsv(res.bytes.toString('utf8'));
  t.deepEqual(
    rows.slice(1).map((r) => r[0]),
    [deposit.id],
  );
  const none = await signedGet(td.url, key, `/v1/transactions?format=csv&coin_id=${newId()}`);
  t.deepEqual(parseCsv(none.bytes.toString('utf8')), [HEADER]);
});

test('?format=xlsx streams a workbook whose every cell is text, amounts exact, formulas never evaluated', async (t) => {
  const { td, key, weiPay, nasty, adjustment } = await setup();
  t.teardown(() => td.stop());
  const res = await signedGet(td.url, key, '/v1/transactions?format=xlsx');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  t.regex(res.headers.get('content-disposition') ?? '', /^attachment; filename="transactions-\d{8}T\d{6}Z\.xlsx"$/);

  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(res.bytes as unknown as ArrayBuffer);
  const ws = wb.worksheets[0]!;
  t.is(ws.name, 'transactions');
  const rows: string[][] = [];
  let cells = 0;
  ws.eachRow((row) => {
    const values: string[] = [];
    for (let c = 1; c <= HEADER.length; c++) {
      const cell = row.getCell(c);
      if (cell.type !== ExcelJS.ValueType.Null) {
        cells++;
        t.is(cell.type, ExcelJS.ValueType.String, `${cell.address} is ${cell.type}`);
        t.is(typeof cell.value, 'string');
      }
      values.push(cell.type === ExcelJS.ValueType.Null ? '' : String(cell.value));
    }
    rows.push(values);
  });
  t.true(cells > HEADER.length * 5);
  t.deepEqual(rows[0], HEADER);
  t.is(rows.length, 1 + 2 + NASTY.length + 1);
  const byId = new Map(rows.slice(1).map((r) => [r[0], Object.fromEntries(HEADER.map((h, i) => [h, r[i]]))]));
  t.like(byId.get(weiPay.id), { amount: '1.000000000000000001', fee: '0.000000000000000001', net_amount: '1' });
  t.like(byId.get(adjustment.id), { amount: '-0.5' });
  // Typed strings are never formulas: the text stays exactly what the API says.
  t.deepEqual(
    nasty.map((n) => byId.get(n.id)!.txid),
    NASTY,
  );
});

test('an XLSX of more than 100000 rows is answered as CSV; 100000 rows stay XLSX', async (t) => {
  const td = await startTestDaemon(CHAINS);
  t.teardown(() => td.stop());
  const m = await merchantWithKey(td.daemon);
  const key = { keyId: m.keyId, secret: m.secret };
  await seedTransactions(td.daemon.store, m.accountId, 100_000, { coinId: ETH });

  const atLimit = await signedGet(td.url, key, '/v1/transactions?format=xlsx');
  t.is(atLimit.status, 200);
  t.is(atLimit.headers.get('content-type'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  t.is(atLimit.bytes.subarray(0, 2).toString('latin1'), 'PK');

  await recordTransaction(td.daemon.store, { accountId: m.accountId, coinId: BTC, amount: '1' });
  const over = await signedGet(td.url, key, '/v1/transactions?format=xlsx');
  t.is(over.status, 200);
  t.is(over.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(over.headers.get('content-disposition') ?? '', /filename="transactions-\d{8}T\d{6}Z\.csv"/);
  const lines = over.bytes.toString('utf8').split('\r\n');
  t.is(lines.length, 1 + 100_001 + 1);
  t.is(lines[lines.length - 1], '');

  // With a filter that leaves 100000 or fewer, the same request is XLSX again.
  const filtered = await signedGet(td.url, key, `/v1/transactions?format=xlsx&coin_id=${BTC}`);
  t.is(filtered.headers.get('content-type'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
});

test('an export streams every page of a list longer than one batch, in list order', async (t) => {
  const td = await startTestDaemon(CHAINS);
  t.teardown(() => td.stop());
  const m = await merchantWithKey(td.daemon);
  const key = { keyId: m.keyId, secret: m.secret };
  await seedTransactions(td.daemon.store, m.accountId, 4500, { coinId: ETH });
  const res = await signedGet(td.url, key, '/v1/transactions?format=csv');
  const rows = parseCsv(res.bytes.toString('utf8')).slice(1);
  t.is(rows.length, 4500);
  t.is(new Set(rows.map((r) => r[0])).size, 4500);
  const times = rows.map((r) => r[14]!);
  t.deepEqual(times, [...times].sort().reverse());
  t.is(rows[0]![6], '0.004500000000000001');
  t.is(rows[4499]![6], '0.000001000000000001');
});
