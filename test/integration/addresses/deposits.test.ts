import test from 'ava';
import { accountBook, FEE_BOOK } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

const available = async (f: InvoiceFixture, book: string, coinId: string) =>
  (await f.td.daemon.ledger.balance(f.td.daemon.store.read, book, coinId)).available.toString();

const create = async (f: InvoiceFixture, body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/addresses', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

test('a deposit: deposit.pending when seen, deposit.confirmed and credited less the platform fee when confirmed; the history and the transactions list agree', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const a = await create(f, { customer_id: 'c1', coin_id: COINS.ETH, label: 'Alice' });
  const eth = f.chain('ethereum');

  const transfer = await eth.send(a.address, COINS.ETH, '2');
  let got = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.truthy(got.last_deposit_at);
  t.is(got.deposits.length, 1);
  t.like(got.deposits[0], { txid: transfer.txid, coin_id: COINS.ETH, amount: '2', fee: null, net_amount: null, status: 'pending', confirmations: 0 });
  t.is(await available(f, accountBook(f.accountId), COINS.ETH), '0');

  await eth.confirm(transfer);
  got = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.like(got.deposits[0], { amount: '2', fee: '0.02', net_amount: '1.98', status: 'confirmed', confirmations: 3 });
  t.is(await available(f, accountBook(f.accountId), COINS.ETH), '1.98');
  t.is(await available(f, FEE_BOOK, COINS.ETH), '0.02');

  const txs = (await f.api.get(`/v1/transactions?address_id=${a.id}`)).body.items;
  t.is(txs.length, 1);
  t.like(txs[0], {
    id: got.deposits[0].transaction_id,
    type: 'deposit',
    status: 'confirmed',
    amount: '2',
    fee: '0.02',
    net_amount: '1.98',
    address_id: a.id,
    invoice_id: null,
    txid: transfer.txid,
  });

  const events = await f.events();
  t.deepEqual(
    events.map((e) => e.type),
    ['deposit.pending', 'deposit.confirmed'],
  );
  t.true(events.every((e) => e.object_id === a.id));
  t.like(events[0]!.data, { address: { id: a.id, label: 'Alice', customer_id: 'c1' }, deposit: { status: 'pending', amount: '2' } });
  const { deposits: _d, ...addressView } = got;
  t.deepEqual(events[1]!.data, { address: addressView, deposit: got.deposits[0] });
  t.true((await verifyLedger(f.td.daemon.store.read)).ok);
});

test('several transfers to one address are separate deposits, each credited once', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'c1', coin_id: COINS.USDT_ETH });
  const eth = f.chain('ethereum');
  const one = await eth.pay(a.address, COINS.USDT_ETH, '10');
  const two = await eth.pay(a.address, COINS.USDT_ETH, '5.5');
  // The same confirmation observed again (a rescan) changes nothing.
  await eth.confirm(one);
  const got = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.deepEqual(
    got.deposits.map((d: { txid: string; status: string }) => [d.txid, d.status]),
    [
      [two.txid, 'confirmed'],
      [one.txid, 'confirmed'],
    ],
  );
  t.is(await available(f, accountBook(f.accountId), COINS.USDT_ETH), '15.5');
  t.deepEqual(
    (await f.events()).map((e) => e.type),
    ['deposit.pending', 'deposit.confirmed', 'deposit.pending', 'deposit.confirmed'],
  );
  const txs = (await f.api.get(`/v1/transactions?address_id=${a.id}&type=deposit`)).body.items;
  t.deepEqual(
    txs.map((x: { id: string }) => x.id),
    got.deposits.map((d: { transaction_id: string }) => d.transaction_id),
  );
});

test('a reorganisation reverts a confirmed deposit: deposit.reverted with its adjustment, the credit taken back', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const a = await create(f, { customer_id: 'c1', coin_id: COINS.BTC });
  const btc = f.chain('bitcoin');
  const transfer = await btc.pay(a.address, COINS.BTC, '0.5');
  t.is(await available(f, accountBook(f.accountId), COINS.BTC), '0.495');
  await btc.revert(transfer);
  t.is(await available(f, accountBook(f.accountId), COINS.BTC), '0');
  t.is(await available(f, FEE_BOOK, COINS.BTC), '0');
  const got = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.like(got.deposits[0], { status: 'reverted', amount: '0.5' });
  const adjustments = (await f.api.get(`/v1/transactions?address_id=${a.id}&type=adjustment`)).body.items;
  t.is(adjustments.length, 1);
  t.like(adjustments[0], { amount: '-0.5', fee: '-0.005', net_amount: '-0.495', address_id: a.id });
  const events = await f.events();
  t.deepEqual(
    events.map((e) => e.type),
    ['deposit.pending', 'deposit.confirmed', 'deposit.reverted'],
  );
  t.like(events[2]!.data, {
    address: { id: a.id },
    deposit: { status: 'reverted', amount: '0.5' },
    adjustment: { transaction_id: adjustments[0].id, amount: '-0.5', net_amount: '-0.495' },
  });
  // Reverting again changes nothing.
  await btc.revert(transfer);
  t.is((await f.events()).length, 3);
  t.true((await verifyLedger(f.td.daemon.store.read)).ok);
});

test('a deposit to an archived address reactivates it (static_address.restored, reason deposit) and is credited', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'c1', coin_id: COINS.ETH });
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`)).status, 200);
  await f.chain('ethereum').pay(a.address, COINS.ETH, '1');
  const got = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.like(got, { status: 'active', archived_at: null });
  t.is(got.deposits[0].status, 'confirmed');
  const events = await f.events();
  t.deepEqual(
    events.map((e) => e.type),
    ['static_address.archived', 'static_address.restored', 'deposit.pending', 'deposit.confirmed'],
  );
  t.is(events[1]!.data.reason, 'deposit');
  t.is(await available(f, accountBook(f.accountId), COINS.ETH), '1');
});

test('a deposit to an archived address while the customer has another active one is credited and makes it active too: both are active', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'c1', coin_id: COINS.ETH });
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`)).status, 200);
  const b = await create(f, { customer_id: 'c1', coin_id: COINS.ETH });
  await f.chain('ethereum').pay(a.address, COINS.ETH, '1');
  const got = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.like(got, { status: 'active', archived_at: null });
  t.is(got.deposits[0].status, 'confirmed');
  t.is((await f.api.get(`/v1/addresses/${b.id}`)).body.status, 'active');
  const events = await f.events();
  t.deepEqual(
    events.map((e) => e.type),
    ['static_address.archived', 'static_address.restored', 'deposit.pending', 'deposit.confirmed'],
  );
  t.is(events[1]!.data.reason, 'deposit');
  t.is(await available(f, accountBook(f.accountId), COINS.ETH), '1');
  // Two active addresses now: a third creation is refused naming one of them, restoring is for archived ones only.
  const third = await f.api.post('/v1/addresses', { customer_id: 'c1', coin_id: COINS.ETH });
  t.is(third.status, 409);
  t.is(third.body.error.details.active_address_id, b.id);
  // Archived again, it can be restored only while no other is active.
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`)).status, 200);
  const refused = await f.api.post(`/v1/addresses/${a.id}/restore`);
  t.is(refused.status, 409);
  t.is(refused.body.error.details.active_address_id, b.id);
});
