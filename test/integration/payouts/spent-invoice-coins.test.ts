/**
 * A Bitcoin payout spends what invoice addresses received: the chain core records each spent coin
 * as an outgoing transfer of that address. An invoice's status and amounts count what its address
 * received, never what a payout spent from it (found by the simulator, issue 34: an underpaid
 * invoice whose coin a payout had spent became `paid` at its next payment).
 */
import test from 'ava';
import { killAllBcoins, sats } from '../../helpers/bcoin';
import { BTC, CONFIRMATIONS, elsewhere, startPayoutFixture, until } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

test('a payout that spent an underpaid and a paid invoice coin changes neither: their next payments count only what arrived', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  const create = async (amount: string) => {
    const res = await f.api.post('/v1/invoices', { amount, currency: 'BTC', coin_id: BTC });
    t.is(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; address: string };
  };
  const read = async (id: string) => (await f.api.get(`/v1/invoices/${id}`)).body;
  const settled = async (id: string, ok: (i: any) => boolean, what: string) => {
    let last: any;
    await until(
      async () => ok((last = await read(id))),
      () => `${what}: ${JSON.stringify(last)}`,
    );
    return last;
  };

  const under = await create('0.02');
  const paid = await create('0.05');
  await f.node.pay([
    { address: under.address, value: sats('0.01') },
    { address: paid.address, value: sats('0.05') },
  ]);
  await f.node.mine(CONFIRMATIONS);
  await settled(under.id, (i) => i.status === 'underpaid', 'the first invoice underpaid');
  await settled(paid.id, (i) => i.status === 'paid', 'the second invoice paid');

  // More than either coin alone: the payout spends both invoice addresses' coins.
  const w = await f.withdraw({ coin_id: BTC, amount: '0.055', to_address: elsewhere() });
  await f.mineUntil(async () => (await f.get(w.id)).status === 'completed', 'the withdrawal completed');

  // A top-up in time and a payment beyond the amount: each invoice is recomputed from what arrived.
  await f.node.pay([
    { address: under.address, value: sats('0.001') },
    { address: paid.address, value: sats('0.002') },
  ]);
  await f.node.mine(CONFIRMATIONS);
  const u = await settled(under.id, (i) => i.paid_amount !== '0.01', 'the top-up counted');
  t.like(u, { status: 'underpaid', paid_amount: '0.011', remaining_amount: '0.009', late_payment: false });
  const p = await settled(paid.id, (i) => i.paid_amount !== '0.05', 'the extra payment counted');
  t.like(p, { status: 'paid', paid_amount: '0.052', overpaid_amount: '0.002' });
  t.true(await f.ledgerClean());
});
