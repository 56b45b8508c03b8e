/**
 * The TypeScript client (coinkeep/client) against a real test daemon, as a merchant back end uses
 * it: an invoice paid on anvil with its webhook verified, a withdrawal whose answer is lost and
 * retried, pages over 250 invoices, and refunds and invoices.accept on seeded paid and underpaid
 * invoices. Every answer it receives is also checked against the
 * OpenAPI document.
 */
import test from 'ava';
import { Coinkeep, CoinkeepError } from 'coinkeep/client';
import { killAllAnvils } from '../../helpers/anvil';
import { until } from '../../helpers/cli';
import { merchantWithKey } from '../../helpers/daemon';
import { checkAgainstOpenApi } from '../../helpers/openapi-check';
import { WebhookSink } from '../../helpers/webhook-sink';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { seedRefundable } from '../../helpers/refund-seed';
import { PAY_TO, startWithdrawalFixture } from '../../helpers/withdrawal-fixture';
import { CONFIRMATIONS, startEvmFixture } from '../chains/evm/evm-fixture';

test.after.always(killAllAnvils);

/** Node's fetch, with every /v1 answer checked against the document (as the black-box clients do). */
function checkedFetch(onRequest?: (init: RequestInit) => void): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    onRequest?.(init);
    const res = await fetch(input, init);
    const url = new URL(String(input));
    checkAgainstOpenApi(init.method ?? 'GET', url.pathname + url.search, res.status, res.headers.get('content-type') ?? undefined, await res.clone().text());
    return res;
  }) as typeof fetch;
}

test('an ETH invoice created with the client is paid on anvil; the client reads it paid and verifies the invoice.paid webhook', async (t) => {
  const f = await startEvmFixture();
  const sink = await WebhookSink.start();
  t.teardown(async () => {
    await sink.close();
    await f.stop();
  });
  const m = await merchantWithKey(f.td.daemon);
  const ck = new Coinkeep({ baseUrl: f.td.url, keyId: m.keyId, secret: m.secret, fetch: checkedFetch() });
  const endpoint = await ck.webhooks.endpoints.create({ url: sink.url('/paid'), event_types: ['invoice.paid'], secret: 'a merchant secret, with spaces!' });
  t.is(endpoint.secret, 'a merchant secret, with spaces!');

  const invoice = await ck.invoices.create({ amount: '0.25', currency: 'ETH', coin_id: f.coin.ETH, order_id: 'order-1' });
  t.like(invoice, { status: 'new', amount: '0.25', ticker: 'ETH' });
  await f.pay(invoice.address!, 'ETH', invoice.payer_amount!);
  await f.node.mine(CONFIRMATIONS - 1);
  const paid = await until(
    async () => {
      const inv = await ck.invoices.get(invoice.id);
      return inv.status === 'paid' ? inv : undefined;
    },
    20_000,
    'the invoice to be paid',
  );
  t.like(paid, { id: invoice.id, paid_amount: '0.25', remaining_amount: '0' });

  const [delivery] = await sink.waitFor('/paid', 1, 20_000);
  const event = ck.webhooks.verify(delivery!.body, delivery!.headers, endpoint.secret, { toleranceSeconds: 300 });
  t.is(event.type, 'invoice.paid');
  if (event.type !== 'invoice.paid') return;
  t.is(event.data.invoice.id, invoice.id);
  t.is(event.data.invoice.status, 'paid');
  t.throws(() => ck.webhooks.verify(delivery!.body, delivery!.headers, 'another secret'), { name: 'WebhookVerificationError' });
  const changed = Buffer.from(delivery!.body.toString('utf8').replace('"paid"', '"new"'));
  t.throws(() => ck.webhooks.verify(changed, delivery!.headers, endpoint.secret), { name: 'WebhookVerificationError' });
});

test('a withdrawal whose first answer is lost is retried with the same Idempotency-Key and returns the same withdrawal, once', async (t) => {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  const keys: string[] = [];
  let dropped = false;
  const lossy = (async (input: string | URL | Request, init: RequestInit = {}) => {
    keys.push(new Headers(init.headers).get('Idempotency-Key') ?? '');
    const res = await checkedFetch()(input, init);
    if (!dropped && init.method === 'POST') {
      // The server made the withdrawal; the answer is lost on the way back.
      dropped = true;
      await res.arrayBuffer();
      throw new TypeError('fetch failed: socket hang up');
    }
    return res;
  }) as typeof fetch;
  const ck = new Coinkeep({ baseUrl: f.td.url, keyId: f.api.keyId, secret: f.api.secret, fetch: lossy, initialDelayMs: 10 });
  const w = await ck.withdrawals.create({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'payout-7' });
  t.true(dropped);
  t.is(keys.length, 2);
  t.is(keys[0], keys[1]);
  t.like(w, { amount: '0.1', to_address: PAY_TO, payout_id: 'payout-7' });
  t.is((await f.counts()).withdrawals, 1);
  t.deepEqual(await ck.withdrawals.get(w.id), w);
  t.is((await ck.withdrawals.findByPayoutId('payout-7'))?.id, w.id);
  const again = await ck.withdrawals.create({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'payout-7' }, { idempotencyKey: keys[0] });
  t.is(again.id, w.id);
  t.is((await f.counts()).withdrawals, 1);
  const err = await t.throwsAsync(ck.withdrawals.get('00000000-0000-4000-8000-000000000000'), { instanceOf: CoinkeepError });
  t.like(err, { status: 404, code: 'not_found' });
});

test('iterating invoices.list walks 250 invoices over three pages of 100, newest first, each once', async (t) => {
  const f = await startInvoiceFixture({ rateLimit: 6000 });
  t.teardown(() => f.td.stop());
  const ck = new Coinkeep({ baseUrl: f.td.url, keyId: f.api.keyId, secret: f.api.secret, fetch: checkedFetch() });
  const created: string[] = [];
  for (let i = 0; i < 250; i++) created.push((await ck.invoices.create({ amount: `${i + 1}.00`, currency: 'USD', order_id: `o-${i}` })).id);

  const seen: string[] = [];
  for await (const inv of ck.invoices.list({ limit: 100 })) seen.push(inv.id);
  t.is(seen.length, 250);
  t.is(new Set(seen).size, 250);
  t.deepEqual([...seen].sort(), [...created].sort());
  t.deepEqual(seen, [...created].reverse());
  const first = await ck.invoices.list({ limit: 100 });
  t.is(first.items.length, 100);
  t.truthy(first.next_cursor);
  t.is(first.items[0]!.order_id, 'o-249');
});

test("refunds: a refund of a paid invoice waits for the payer's address, is read, listed and cancelled; invoices.accept takes an underpaid invoice; the conflicts are typed", async (t) => {
  const s = await seedRefundable();
  t.teardown(() => s.fx.stop());
  const ck = new Coinkeep({ baseUrl: s.fx.td.url, keyId: s.keyId, secret: s.secret, fetch: checkedFetch() });
  const unknown = '00000000-0000-4000-8000-000000000000';
  const conflict = async (p: Promise<unknown>, reason?: string) => {
    const e = await t.throwsAsync(p, { instanceOf: CoinkeepError });
    t.like(e, { status: 409, code: 'conflict' });
    if (reason) t.is((e as CoinkeepError).details?.reason, reason);
  };

  const unpaid = await ck.invoices.create({ amount: '0.001', currency: 'BTC', coin_id: s.coinId, order_id: 'ts-unpaid' });
  await conflict(ck.refunds.create({ invoice_id: unpaid.id, amount: '0.0001' }), 'refund_exceeds_received');
  const empty = await ck.refunds.list({ invoice_id: unpaid.id });
  t.deepEqual(empty, { items: [], next_cursor: null });
  t.like(await t.throwsAsync(ck.refunds.get(unknown), { instanceOf: CoinkeepError }), { status: 404, code: 'not_found' });
  t.like(await t.throwsAsync(ck.refunds.cancel(unknown), { instanceOf: CoinkeepError }), { status: 404, code: 'not_found' });

  t.like(await ck.invoices.accept(s.underpaidInvoiceId), { id: s.underpaidInvoiceId, status: 'paid', resolution: 'accepted_underpayment' });
  await conflict(ck.invoices.accept(s.underpaidInvoiceId), 'invoice_not_underpaid');
  await conflict(ck.invoices.accept(unpaid.id), 'invoice_not_underpaid');

  const params = { invoice_id: s.paidInvoiceId, amount: '0.0002', refund_id: 'ts-r1', comment: 'ts client' };
  const refund = await ck.refunds.create(params);
  t.like(refund, { status: 'awaiting_address', refund_id: 'ts-r1', invoice_id: s.paidInvoiceId, coin_id: s.coinId, amount: '0.0002', to_address: null });
  t.regex(refund.refund_url ?? '', new RegExp(`/pay/${s.paidInvoiceId}/refund/[^/]+$`));
  t.is((await ck.refunds.create(params)).id, refund.id, 'the same refund_id returns the same refund');
  t.like(await ck.refunds.get(refund.id), { id: refund.id, status: 'awaiting_address' });
  const listed: string[] = [];
  for await (const r of ck.refunds.list({ invoice_id: s.paidInvoiceId, limit: 1 })) listed.push(r.id);
  t.deepEqual(listed, [refund.id]);
  t.is((await ck.refunds.findByRefundId('ts-r1'))?.id, refund.id);
  t.is(await ck.refunds.findByRefundId('no-such-refund'), null);
  t.like(await ck.refunds.cancel(refund.id), { id: refund.id, status: 'cancelled' });
  await conflict(ck.refunds.cancel(refund.id));
});
