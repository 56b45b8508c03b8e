import test, { type ExecutionContext } from 'ava';
import { freshSourceIp, SignedClient } from '../../helpers/api-client';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';
import { tempPostgres } from '../../helpers/pg-database';

/**
 * SPEC "Idempotency (POST)" 2–3 on a real creating route: 20 identical `POST /v1/invoices` in
 * parallel under one Idempotency-Key make one invoice and one address, and every answer names it.
 */

async function twentyInvoicesInParallel(t: ExecutionContext, f: InvoiceFixture): Promise<void> {
  const client = new SignedClient(f.td.url, f.api.keyId, f.api.secret);
  const from = freshSourceIp();
  const body = { amount: '0.25', currency: 'ETH', coin_id: COINS.ETH, order_id: 'order-20' };
  const headers = { 'Idempotency-Key': 'create-order-20' };
  const answers = await Promise.all(Array.from({ length: 20 }, () => client.post('/v1/invoices', body, { headers, from })));

  for (const a of answers) t.is(a.status, 201, a.text);
  t.is(new Set(answers.map((a) => a.json.id as string)).size, 1, 'one id in every answer');
  t.is(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 19);
  const counts = await f.counts();
  t.is(counts.invoices, 1);
  t.is(counts.addresses, 1);

  // The same key with another body is a mismatch, and creates nothing.
  const other = await client.post('/v1/invoices', { ...body, amount: '0.5' }, { headers, from });
  t.is(other.status, 422, other.text);
  t.is(other.json.error.code, 'idempotency.mismatch');
  t.deepEqual(await f.counts(), counts);
}

test('20 identical POST /v1/invoices in parallel under one Idempotency-Key: one invoice, one id in every answer', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await twentyInvoicesInParallel(t, f);
});

test('the same on PostgreSQL', async (t) => {
  const url = await tempPostgres(t);
  const f = await startInvoiceFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());
  await twentyInvoicesInParallel(t, f);
});
