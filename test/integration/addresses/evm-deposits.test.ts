/**
 * Deposits to static addresses on a real local EVM chain (anvil): ETH and the test USDT, as the
 * merchant sees them through the API and the events.
 */
import test from 'ava';
import { killAllAnvils } from '../../helpers/anvil';
import { until } from '../chains/btc/btc-fixture';
import { CONFIRMATIONS, startEvmFixture, type EvmFixture } from '../chains/evm/evm-fixture';

test.after.always(killAllAnvils);

const create = async (f: EvmFixture, body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/addresses', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

const transactions = async (f: EvmFixture, query: string) => (await f.api.get(`/v1/transactions?${query}`)).body.items;

/** Polls the address until its deposits pass `ok`. */
const waitAddress = async (f: EvmFixture, id: string, ok: (a: any) => boolean, what: string) => {
  let last: any;
  await until(
    async () => ok((last = (await f.api.get(`/v1/addresses/${id}`)).body)),
    () => `${what}: ${JSON.stringify(last)}`,
    15_000,
  );
  return last;
};

test('an ETH deposit: pending in its block, confirmed at 3 confirmations and credited less the fee, with its events', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const a = await create(f, { customer_id: 'cust-eth', coin_id: f.coin.ETH, label: 'Alice' });
  t.regex(a.address, /^0x[0-9a-fA-F]{40}$/);

  const txid = await f.pay(a.address, 'ETH', '0.5');
  const seen = await waitAddress(f, a.id, (x) => x.deposits.length === 1, 'the deposit seen');
  t.like(seen.deposits[0], { txid, amount: '0.5', status: 'pending' });
  t.truthy(seen.last_deposit_at);
  t.is(await f.available('ETH'), '0');

  await f.node.mine(CONFIRMATIONS - 1);
  const confirmed = await waitAddress(f, a.id, (x) => x.deposits[0].status === 'confirmed', 'the deposit confirmed');
  t.like(confirmed.deposits[0], { txid, amount: '0.5', fee: '0.005', net_amount: '0.495', status: 'confirmed' });
  t.is(await f.available('ETH'), '0.495');
  const txs = await transactions(f, `address_id=${a.id}`);
  t.deepEqual(
    txs.map((x: any) => [x.type, x.status, x.txid, x.address_id]),
    [['deposit', 'confirmed', txid, a.id]],
  );
  const pending = await f.events('deposit.pending');
  const done = await f.events('deposit.confirmed');
  t.is(pending.length, 1);
  t.is(done.length, 1);
  t.like(done[0]!.data, { address: { id: a.id, label: 'Alice' }, deposit: { amount: '0.5', net_amount: '0.495', status: 'confirmed' } });
  t.true(await f.ledgerClean());
});

test('two USDT transfers to one address are two deposits, each credited', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const a = await create(f, { customer_id: 'cust-usdt', currency: 'USDT' });
  t.is(a.coin_id, f.coin.USDT);
  const one = await f.pay(a.address, 'USDT', '10');
  const two = await f.pay(a.address, 'USDT', '2.5');
  await f.node.mine(CONFIRMATIONS);
  const got = await waitAddress(f, a.id, (x) => x.deposits.length === 2 && x.deposits.every((d: any) => d.status === 'confirmed'), 'two deposits confirmed');
  t.deepEqual(got.deposits.map((d: any) => d.txid).sort(), [one, two].sort());
  t.is(await f.available('USDT'), '12.5');
  t.is((await f.events('deposit.confirmed')).length, 2);
  t.true(await f.ledgerClean());
});

test('a reorganisation that drops a confirmed deposit: deposit.reverted with an adjustment, the credit taken back', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '2' });
  const a = await create(f, { customer_id: 'cust-reorg', coin_id: f.coin.ETH });
  const snapshot = await f.node.rpc<string>('evm_snapshot');
  const txid = await f.pay(a.address, 'ETH', '1');
  await f.node.mine(CONFIRMATIONS - 1);
  await waitAddress(f, a.id, (x) => x.deposits[0]?.status === 'confirmed', 'the deposit confirmed');
  t.is(await f.available('ETH'), '0.98');

  t.true(await f.node.rpc<boolean>('evm_revert', [snapshot]));
  await f.node.mine(CONFIRMATIONS + 2);
  const reverted = await waitAddress(f, a.id, (x) => x.deposits[0].status === 'reverted', 'the deposit reverted');
  t.like(reverted.deposits[0], { txid, status: 'reverted' });
  t.is(await f.available('ETH'), '0');
  const adjustment = (await transactions(f, `address_id=${a.id}&type=adjustment`))[0];
  t.like(adjustment, { amount: '-1', fee: '-0.02', net_amount: '-0.98', txid, address_id: a.id });
  const events = await f.events('deposit.reverted');
  t.is(events.length, 1);
  t.like(events[0]!.data, { address: { id: a.id }, deposit: { txid, status: 'reverted' }, adjustment: { transaction_id: adjustment.id } });
  t.true(await f.ledgerClean());
});
