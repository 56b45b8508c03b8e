import test from 'ava';
import { StaticAddressEntity } from '../../../src/db/entities/static-address';
import { accountBook } from '../../../src/ledger/ledger';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { tempPostgres } from '../../helpers/pg-database';

test('on PostgreSQL: 50 identical creations at once make one address, every other answer names it; restore races keep one active; a deposit is credited', async (t) => {
  const url = await tempPostgres(t);
  const f = await startInvoiceFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());

  const answers = await Promise.all(Array.from({ length: 50 }, () => f.api.post('/v1/addresses', { customer_id: 'race', coin_id: COINS.ETH })));
  const created = answers.filter((r) => r.status === 201);
  t.is(created.length, 1);
  const a = created[0]!.body;
  for (const r of answers.filter((x) => x.status !== 201)) {
    t.is(r.status, 409, JSON.stringify(r.body));
    t.deepEqual(r.body.error.details, { active_address_id: a.id });
  }
  t.is(await f.td.daemon.store.read.count(StaticAddressEntity), 1);

  // Two archived addresses of one customer restored at once: one wins, the other names it.
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`)).status, 200);
  const b = (await f.api.post('/v1/addresses', { customer_id: 'race', coin_id: COINS.ETH })).body;
  t.is((await f.api.post(`/v1/addresses/${b.id}/archive`)).status, 200);
  const restores = await Promise.all([a.id, b.id].map((id) => f.api.post(`/v1/addresses/${id}/restore`)));
  const won = restores.filter((r) => r.status === 200);
  t.is(won.length, 1);
  const lost = restores.find((r) => r.status !== 200)!;
  t.is(lost.status, 409);
  t.deepEqual(lost.body.error.details, { active_address_id: won[0]!.body.id });
  t.is(await f.td.daemon.store.read.count(StaticAddressEntity, { where: { status: 'active' } }), 1);

  // search: a substring (from 3 characters; shorter, a prefix) of the customer id, the address or the label, whatever the database's collation.
  const labelled = (await f.api.post('/v1/addresses', { customer_id: 'Zoë-1', coin_id: COINS.BTC, label: 'Über Kunde' })).body;
  const ids = async (q: string) => (await f.api.get(`/v1/addresses?search=${encodeURIComponent(q)}`)).body.items.map((x: { id: string }) => x.id);
  t.deepEqual(await ids('Zoë'), [labelled.id]);
  t.deepEqual(await ids('Über'), [labelled.id]);
  t.deepEqual(await ids(labelled.address), [labelled.id]);
  t.deepEqual((await ids('rac')).sort(), [a.id, b.id].sort());
  t.deepEqual(await ids('zoë'), []);
  t.deepEqual(await ids('ber Ku'), [labelled.id]);
  t.deepEqual(await ids('ë-1'), [labelled.id]);
  // LIKE's wildcards are plain characters of the text.
  t.deepEqual(await ids('ë_1'), []);
  t.deepEqual(await ids('%%%'), []);
  t.deepEqual(await ids('ac'), []);
  // The substring search has its trigram indexes (pg_trgm is available on this server).
  const trgm = await f.td.daemon.store.read.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'static_addresses' AND indexname LIKE '%_trgm' ORDER BY indexname`);
  t.deepEqual(trgm.map((r: { indexname: string }) => r.indexname), ['static_addresses_address_trgm', 'static_addresses_customer_id_trgm', 'static_addresses_label_trgm']);

  await f.chain('ethereum').pay(won[0]!.body.address, COINS.ETH, '3');
  const bal = await f.td.daemon.ledger.balance(f.td.daemon.store.read, accountBook(f.accountId), COINS.ETH);
  t.is(bal.available.toString(), '3');
  t.deepEqual((await f.events()).map((e) => e.type).slice(-2), ['deposit.pending', 'deposit.confirmed']);
});
