import test from 'ava';
import { TransactionEntity } from '../../../src/db/entities/money';
import { accountBook, EXTERNAL_BOOK, Ledger } from '../../../src/ledger/ledger';
import { Amount } from '../../../src/shared/amount';
import { newId } from '../../../src/shared/ids';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { signedGet } from '../../helpers/signed-get';
import { recordTransaction } from '../../helpers/money-fixtures';
import { BTC, CHAINS, chainTransfer, ETH, USDT } from './fixtures';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

async function setup() {
  const td = await startTestDaemon(CHAINS);
  const m = await merchantWithKey(td.daemon);
  const other = await merchantWithKey(td.daemon);
  return { td, m, key: { keyId: m.keyId, secret: m.secret }, otherKey: { keyId: other.keyId, secret: other.secret }, other };
}

test("GET /v1/transactions lists the account's transactions newest first with every PRODUCT §9 field", async (t) => {
  const { td, m, key, other } = await setup();
  t.teardown(() => td.stop());
  const store = td.daemon.store;
  const invoiceId = newId();
  const transferId = await chainTransfer(store, m.accountId, USDT, 7);
  const paid = await recordTransaction(store, {
    accountId: m.accountId,
    coinId: USDT,
    amount: '100.5',
    fee: '1.005',
    invoiceId,
    chainTransferId: transferId,
    createdAt: at(1),
  });
  const pending = await recordTransaction(store, {
    accountId: m.accountId,
    coinId: BTC,
    amount: '0.00000001',
    status: 'pending',
    type: 'deposit',
    createdAt: at(2),
  });
  await recordTransaction(store, { accountId: other.accountId, coinId: BTC, amount: '5', createdAt: at(3) });

  const res = await signedGet(td.url, key, '/v1/transactions');
  t.is(res.status, 200);
  t.deepEqual(
    res.body.items.map((x: { id: string }) => x.id),
    [pending.id, paid.id],
  );
  t.is(res.body.next_cursor, null);
  t.deepEqual(res.body.items[1], {
    id: paid.id,
    type: 'invoice_payment',
    status: 'confirmed',
    coin_id: USDT,
    ticker: 'USDT',
    network: 'ethereum',
    amount: '100.5',
    fee: '1.005',
    net_amount: '99.495',
    txid: paid.txid,
    confirmations: 7,
    invoice_id: invoiceId,
    address_id: null,
    withdrawal_id: null,
    refund_id: null,
    refunded_amount: '0',
    created_at: at(1),
    confirmed_at: at(1),
  });
  t.like(res.body.items[0], {
    type: 'deposit',
    status: 'pending',
    ticker: 'BTC',
    network: 'bitcoin',
    amount: '0.00000001',
    fee: null,
    net_amount: null,
    confirmations: null,
    confirmed_at: null,
  });
});

test('GET /v1/transactions filters by type, status, coin_id, invoice_id, address_id, from (inclusive) and to (exclusive)', async (t) => {
  const { td, m, key } = await setup();
  t.teardown(() => td.stop());
  const store = td.daemon.store;
  const invoiceId = newId();
  const addressId = newId();
  const a = await recordTransaction(store, { accountId: m.accountId, coinId: BTC, amount: '1', invoiceId, createdAt: at(0) });
  const b = await recordTransaction(store, { accountId: m.accountId, coinId: ETH, amount: '2', type: 'deposit', addressId, createdAt: at(10) });
  const c = await recordTransaction(store, {
    accountId: m.accountId,
    coinId: ETH,
    amount: '3',
    type: 'deposit',
    status: 'pending',
    addressId,
    createdAt: at(20),
  });
  const ids = async (query: string) => {
    const res = await signedGet(td.url, key, `/v1/transactions${query}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body.items.map((x: { id: string }) => x.id);
  };
  t.deepEqual(await ids('?type=deposit'), [c.id, b.id]);
  t.deepEqual(await ids('?type=invoice_payment'), [a.id]);
  t.deepEqual(await ids('?status=pending'), [c.id]);
  t.deepEqual(await ids(`?coin_id=${ETH}`), [c.id, b.id]);
  t.deepEqual(await ids(`?coin_id=${USDT}`), []);
  t.deepEqual(await ids(`?invoice_id=${invoiceId}`), [a.id]);
  t.deepEqual(await ids(`?address_id=${addressId.toUpperCase()}`), [c.id, b.id]);
  t.deepEqual(await ids(`?from=${encodeURIComponent(at(10))}`), [c.id, b.id]);
  t.deepEqual(await ids(`?to=${encodeURIComponent(at(10))}`), [a.id]);
  t.deepEqual(await ids(`?from=${encodeURIComponent(at(10))}&to=${encodeURIComponent(at(20))}`), [b.id]);
  // The same instant in another offset is the same filter.
  t.deepEqual(await ids(`?from=${encodeURIComponent('2026-03-01T12:10:00+02:00')}`), [c.id, b.id]);
  t.deepEqual(await ids(`?type=deposit&status=confirmed&coin_id=${ETH}&address_id=${addressId}`), [b.id]);
});

test('GET /v1/transactions pages by keyset: rows inserted meanwhile never shift or repeat a page', async (t) => {
  const { td, m, key } = await setup();
  t.teardown(() => td.stop());
  const store = td.daemon.store;
  const made = [];
  // Five rows share one timestamp: the id breaks the tie.
  for (let i = 0; i < 9; i++)
    made.push(await recordTransaction(store, { accountId: m.accountId, coinId: BTC, amount: `0.${i + 1}`, createdAt: at(i < 5 ? 0 : i) }));
  const expected = [...made].sort((x, y) => (x.created_at === y.created_at ? (x.id < y.id ? 1 : -1) : x.created_at < y.created_at ? 1 : -1)).map((x) => x.id);

  const seen: string[] = [];
  let target = '/v1/transactions?limit=4';
  for (let pages = 0; ; pages++) {
    const res = await signedGet(td.url, key, target);
    t.is(res.status, 200);
    t.true(res.body.items.length <= 4);
    seen.push(...res.body.items.map((x: { id: string }) => x.id));
    // A newer row arrives between pages: it belongs before what was read and never enters a later page.
    await recordTransaction(store, { accountId: m.accountId, coinId: BTC, amount: '9', createdAt: at(100 + pages) });
    if (res.body.next_cursor === null) break;
    target = `/v1/transactions?limit=4&cursor=${res.body.next_cursor}`;
  }
  t.deepEqual(seen, expected);

  const first = await signedGet(td.url, key, '/v1/transactions?limit=1');
  const withOtherFilter = await signedGet(td.url, key, `/v1/transactions?limit=1&type=deposit&cursor=${first.body.next_cursor}`);
  t.is(withOtherFilter.status, 400);
  t.deepEqual(withOtherFilter.body.error.details, { field: 'cursor' });
});

test("GET /v1/transactions/{id} shows one transaction; another account's id or an unknown id is 404 not_found", async (t) => {
  const { td, m, key, otherKey } = await setup();
  t.teardown(() => td.stop());
  const tx = await recordTransaction(td.daemon.store, { accountId: m.accountId, coinId: BTC, amount: '0.25', fee: '0.0025', createdAt: at(0) });
  const own = await signedGet(td.url, key, `/v1/transactions/${tx.id}`);
  t.is(own.status, 200);
  t.like(own.body, { id: tx.id, amount: '0.25', fee: '0.0025', net_amount: '0.2475', ticker: 'BTC', network: 'bitcoin' });
  t.is(Object.keys(own.body).length, 18);

  const upper = await signedGet(td.url, key, `/v1/transactions/${tx.id.toUpperCase()}`);
  t.is(upper.status, 200);

  for (const [k, id] of [
    [otherKey, tx.id],
    [key, newId()],
    [key, 'not-a-uuid'],
  ] as const) {
    const res = await signedGet(td.url, k, `/v1/transactions/${id}`);
    t.is(res.status, 404);
    t.is(res.body.error.code, 'not_found');
    t.deepEqual(res.body.error.details, {});
  }
});

test('GET /v1/balances shows available, hold and total per coin from the ledger, zero for coins with no movement', async (t) => {
  const { td, m, key, otherKey } = await setup();
  t.teardown(() => td.stop());
  const store = td.daemon.store;
  await recordTransaction(store, { accountId: m.accountId, coinId: ETH, amount: '1.000000000000000001', fee: '0.000000000000000001' });
  await recordTransaction(store, { accountId: m.accountId, coinId: USDT, amount: '10', fee: '0.1' });
  // A withdrawal's hold: available goes down, hold up, total stays.
  await store.write((em) =>
    new Ledger({ now: () => new Date() }).hold(em, {
      coinId: USDT,
      debit: accountBook(m.accountId),
      credit: EXTERNAL_BOOK,
      amount: Amount.of('2.5'),
      code: 'withdrawal',
    }),
  );

  const res = await signedGet(td.url, key, '/v1/balances');
  t.is(res.status, 200);
  t.is(res.body.next_cursor, null);
  const byCoin = new Map(res.body.items.map((b: { coin_id: string }) => [b.coin_id, b]));
  t.deepEqual(byCoin.get(ETH), { coin_id: ETH, ticker: 'ETH', network: 'ethereum', available: '1', hold: '0', total: '1' });
  t.deepEqual(byCoin.get(USDT), { coin_id: USDT, ticker: 'USDT', network: 'ethereum', available: '7.4', hold: '2.5', total: '9.9' });
  t.deepEqual(byCoin.get(BTC), { coin_id: BTC, ticker: 'BTC', network: 'bitcoin', available: '0', hold: '0', total: '0' });
  t.is(res.body.items.length, 3);

  const others = await signedGet(td.url, otherKey, '/v1/balances');
  t.true(others.body.items.every((b: { total: string }) => b.total === '0'));

  const page1 = await signedGet(td.url, key, '/v1/balances?limit=2');
  t.is(page1.body.items.length, 2);
  const page2 = await signedGet(td.url, key, `/v1/balances?limit=2&cursor=${page1.body.next_cursor}`);
  t.is(page2.body.next_cursor, null);
  t.deepEqual([...page1.body.items, ...page2.body.items], res.body.items);
});

test('transactions written by others are read as stored (a negative adjustment, a withdrawal)', async (t) => {
  const { td, m, key } = await setup();
  t.teardown(() => td.stop());
  const now = at(5);
  const withdrawalId = newId();
  await td.daemon.store.write((em) =>
    em.insert(TransactionEntity, [
      {
        id: newId(),
        account_id: m.accountId,
        type: 'adjustment',
        status: 'confirmed',
        coin_id: BTC,
        amount: '-0.5',
        fee: '-0.005',
        net_amount: '-0.495',
        txid: null,
        chain_transfer_id: null,
        invoice_id: null,
        address_id: null,
        withdrawal_id: null,
        reverses_id: null,
        created_at: now,
        confirmed_at: now,
        updated_at: now,
      },
      {
        id: newId(),
        account_id: m.accountId,
        type: 'withdrawal',
        status: 'pending',
        coin_id: BTC,
        amount: '0.1',
        fee: null,
        net_amount: null,
        txid: null,
        chain_transfer_id: null,
        invoice_id: null,
        address_id: null,
        withdrawal_id: withdrawalId,
        reverses_id: null,
        created_at: at(6),
        confirmed_at: null,
        updated_at: at(6),
      },
    ]),
  );
  const res = await signedGet(td.url, key, '/v1/transactions');
  t.like(res.body.items[0], { type: 'withdrawal', withdrawal_id: withdrawalId, amount: '0.1' });
  t.like(res.body.items[1], { type: 'adjustment', amount: '-0.5', net_amount: '-0.495', txid: null });
});
