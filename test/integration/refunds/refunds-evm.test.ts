/**
 * Refunds on a real anvil through the API (issue 33, PRODUCT §16, §17): the ETH excess of an
 * overpaid invoice and part of a USDT payment with the network fee paid by the payer, each paid
 * to the payer exactly; a USDT payment sent to an ETH invoice (a stray) refunded whole through the
 * link its sender opens; the books equal to the chain after all of it. One anvil and one daemon.
 */
import test from 'ava';
import { Amount } from '../../../src/shared/amount';
import { killAllAnvils } from '../../helpers/anvil';
import { waitScannedTo } from '../../helpers/chain-scan';
import { CONFIRMATIONS, elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from '../payouts/evm-payout-fixture';

test.after.always(killAllAnvils);

let f: EvmPayoutFixture;
let stopMiner: () => Promise<void>;
test.before(async () => {
  f = await startEvmPayoutFixture();
  stopMiner = f.miner();
});
test.after.always(async () => {
  await stopMiner?.();
  await f?.stop();
});

async function refundOf(id: string): Promise<any> {
  const res = await f.api.get(`/v1/refunds/${id}`);
  if (res.status !== 200) throw new Error(`GET refund: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function completed(id: string): Promise<any> {
  let r: any;
  await f.until(
    async () => (r = await refundOf(id)).status === 'completed',
    () => `the refund completed: ${JSON.stringify(r)}`,
    60_000,
  );
  return r;
}

test.serial('the ETH excess of an overpaid invoice is paid back exactly, fees on top', async (t) => {
  const inv = await f.createInvoice('ETH', '1');
  await f.pay(inv.address, 'ETH', '1.25');
  await f.until(async () => (await f.invoice(inv.id)).status === 'paid', 'the invoice paid');
  t.is((await f.invoice(inv.id)).overpaid_amount, '0.25');
  const to = elsewhere();
  const res = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: 'excess', to_address: to });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { amount: '0.25', network_fee_paid_by: 'merchant', ticker: 'ETH' });
  const r = await completed(res.body.id);
  t.is(await f.onChain(to, 'ETH'), eth('0.25'));
  t.like(await f.get(r.withdrawal_id), { status: 'completed', amount: '0.25' });
  t.is((await f.invoice(inv.id)).refunded_amount, '0.25');
});

test.serial('part of a USDT payment refunded with the network fee paid by the payer: the payer gets the amount less the reserved fee', async (t) => {
  const paid = await f.paidInvoice('USDT', '50');
  const payment = (await f.transactions(`invoice_id=${paid.id}`)).find((x: any) => x.type === 'invoice_payment');
  const to = elsewhere();
  const res = await f.api.post('/v1/refunds', { transaction_id: payment.id, amount: '10', to_address: to, network_fee_paid_by: 'payer' });
  t.is(res.status, 201, JSON.stringify(res.body));
  const w = await f.get(res.body.withdrawal_id);
  t.true(Amount.of(w.network_fee_reserved).isPositive());
  t.is(Amount.of(w.amount).plus(Amount.of(w.network_fee_reserved)).toString(), '10');
  await completed(res.body.id);
  t.is(await f.onChain(to, 'USDT'), Amount.of(w.amount).toBaseUnits(6));
  t.is((await f.api.get(`/v1/transactions/${payment.id}`)).body.refunded_amount, '10');
});

test.serial(
  'USDT sent to an ETH invoice is a stray; refunded whole through the link its sender opens, the fee out of it; the stray is refunded, not credited',
  async (t) => {
    const inv = await f.createInvoice('ETH', '0.1');
    const txid = await f.pay(inv.address, 'USDT', '7');
    await f.node.mine(CONFIRMATIONS);
    await waitScannedTo(f.td, await f.node.blockNumber(), 10_000);
    let stray: any;
    await f.until(async () => {
      stray = (await f.api.get('/v1/strays?status=open')).body.items.find((s: any) => s.txid === txid);
      return stray !== undefined;
    }, 'the stray recorded');
    const available = (await f.balance('USDT')).available;
    const res = await f.api.post(`/v1/strays/${stray.id}/refund`, { network_fee_paid_by: 'payer', refund_id: 'stray-back' });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.like(res.body, { status: 'awaiting_address', amount: '7', ticker: 'USDT', invoice_id: null });
    t.is((await f.api.get(`/v1/strays/${stray.id}`)).body.status, 'refunded');
    const again = await f.api.post(`/v1/strays/${stray.id}/refund`, { network_fee_paid_by: 'payer', refund_id: 'stray-back' });
    t.is(again.status, 200);
    t.is(again.body.id, res.body.id);
    const other = await f.api.post(`/v1/strays/${stray.id}/refund`, { network_fee_paid_by: 'payer' });
    t.is(other.status, 409);
    t.like(other.body.error.details, { reason: 'stray_not_open', status: 'refunded' });

    const [, , pathId, , token] = new URL(res.body.refund_url).pathname.split('/');
    t.is(pathId, res.body.transaction_id);
    const to = elsewhere();
    const page = await fetch(`${f.td.url}/pay/${pathId}/refund/${token}/address`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ to_address: to }),
    });
    t.is(page.status, 200, await page.clone().text());
    const r = await completed(res.body.id);
    const w = await f.get(r.withdrawal_id);
    t.is(await f.onChain(to, 'USDT'), Amount.of(w.amount).toBaseUnits(6));
    t.is(Amount.of(w.amount).plus(Amount.of(w.network_fee_reserved)).toString(), '7');
    t.is((await f.balance('USDT')).available, available, "the merchant's balance as before: the stray came and went");
  },
);

test.serial('after the refunds the books hold what the chain shows and the ledger verifies', async (t) => {
  await f.quiet();
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
