import test from 'ava';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signerKeyPath } from '../../../src/wallet/signer-process/vault';
import { masterKeyPath } from '../../../src/db/seal';
import { anvilChainEntry } from '../../../src/dev/anvil';
import { StaticAddressEntity } from '../../../src/db/entities/static-address';
import { accountBook } from '../../../src/ledger/ledger';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { killAllAnvils } from '../../helpers/anvil';
import { waitScannedTo } from '../../helpers/chain-scan';
import { startPreparedDaemon, testConfig, type TestDaemon } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';
import { until } from '../chains/btc/btc-fixture';
import { CONFIRMATIONS, FAST_WATCH, RATES, startEvmFixture } from '../chains/evm/evm-fixture';

test.after.always(killAllAnvils);

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
  const trgm = await f.td.daemon.store.read.query(
    `SELECT indexname FROM pg_indexes WHERE tablename = 'static_addresses' AND indexname LIKE '%_trgm' ORDER BY indexname`,
  );
  t.deepEqual(
    trgm.map((r: { indexname: string }) => r.indexname),
    ['static_addresses_address_trgm', 'static_addresses_customer_id_trgm', 'static_addresses_label_trgm'],
  );

  await f.chain('ethereum').pay(won[0]!.body.address, COINS.ETH, '3');
  const bal = await f.td.daemon.ledger.balance(f.td.daemon.store.read, accountBook(f.accountId), COINS.ETH);
  t.is(bal.available.toString(), '3');
  t.deepEqual((await f.events()).map((e) => e.type).slice(-2), ['deposit.pending', 'deposit.confirmed']);
});

/**
 * A second daemon on the same database, started from the first one's data dir's master key (as
 * daemons sharing a database must) with the same chains.
 */
async function startTwin(first: TestDaemon, overrides: Record<string, unknown>): Promise<TestDaemon> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-test-'));
  copyFileSync(masterKeyPath(first.dataDir), masterKeyPath(dataDir));
  chmodSync(masterKeyPath(dataDir), 0o600);
  // Its signer opens the seed the first one stored: the same signer key.
  copyFileSync(signerKeyPath(first.dataDir), signerKeyPath(dataDir));
  chmodSync(signerKeyPath(dataDir), 0o600);
  const daemon = await startPreparedDaemon(testConfig(dataDir, overrides));
  return {
    daemon,
    url: daemon.apiUrl,
    dataDir,
    stop: async () => {
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

test("on PostgreSQL, two daemons: an address archived through one leaves the other's real-time scan, one restored through it joins it; the other scans on with them", async (t) => {
  const url = await tempPostgres(t);
  const f = await startEvmFixture({ overrides: { database: { url }, static_addresses: { archived_scan_hours: 100 } } });
  const chain = anvilChainEntry(f.node.rpcUrl, f.usdt, {
    confirmations: CONFIRMATIONS,
    options: FAST_WATCH,
    sweep: { min: { ETH: '1000000', USDT: '1000000000' } },
  });
  const stops: Array<() => Promise<void>> = [() => f.stop()];
  t.teardown(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  const create = async (customer: string) => {
    const res = await f.api.post('/v1/addresses', { customer_id: customer, coin_id: f.coin.ETH });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const x = await create('cust-x');
  const z = await create('cust-z');
  t.is((await f.api.post(`/v1/addresses/${z.id}/archive`, {})).status, 200);

  const b = await startTwin(f.td, { database: { url }, chains: [chain], rates: RATES, static_addresses: { archived_scan_hours: 100 } });
  stops.push(() => b.stop());
  const chainId = b.daemon.config.chains[0]!.id;
  const watchedByB = () => [b.daemon.watched.lookup(chainId, x.address), b.daemon.watched.lookup(chainId, z.address)];
  // At start the second daemon watches what is active.
  t.deepEqual(watchedByB(), [x.id, undefined]);
  // The first daemon scans; the second waits for the role.
  t.true(f.td.daemon.chains.status()[0]!.scanning);
  t.false(b.daemon.chains.status()[0]!.scanning);

  // Through the first daemon: x archived, z restored.
  t.is((await f.api.post(`/v1/addresses/${x.id}/archive`, {})).status, 200);
  t.is((await f.api.post(`/v1/addresses/${z.id}/restore`, {})).status, 200);
  t.deepEqual([f.td.daemon.watched.lookup(chainId, x.address), f.td.daemon.watched.lookup(chainId, z.address)], [undefined, z.id]);

  // The first daemon goes away: the second takes the chain over and, before its first batch,
  // learns both changes.
  await f.td.stop();
  stops[0] = () => f.node.kill();
  const paidX = await f.pay(x.address, 'ETH', '0.2');
  const paidZ = await f.pay(z.address, 'ETH', '0.3');
  await f.node.mine(CONFIRMATIONS);
  await waitScannedTo(b, await f.node.blockNumber(), 30_000);
  t.true(b.daemon.chains.status()[0]!.scanning);
  t.deepEqual(watchedByB(), [undefined, z.id]);

  const store = b.daemon.store.read;
  const deposits = async (id: string) => store.query(`SELECT txid, status FROM transactions WHERE address_id = $1 AND type = 'deposit'`, [id]);
  const statusOf = async (id: string) => (await store.query('SELECT status FROM static_addresses WHERE id = $1', [id]))[0].status;
  await until(
    async () => (await deposits(z.id)).some((d: { status: string }) => d.status === 'confirmed'),
    'the deposit to the restored address credited by the second daemon',
  );
  t.deepEqual(await deposits(z.id), [{ txid: paidZ, status: 'confirmed' }]);
  // The archived one was passed by the real-time scan; its deposit waits for the slow scan.
  t.deepEqual(await deposits(x.id), []);
  t.is(await statusOf(x.id), 'archived');
  // (The restored one is checked too until the real-time scan is well past its restore; its credited deposit is not found again.)
  t.like(await b.daemon.archivedScans[0]!.run(), { checked: 2, flagged: 1, found: 1 });
  t.deepEqual(await deposits(x.id), [{ txid: paidX, status: 'confirmed' }]);
  t.is(await statusOf(x.id), 'active');
  t.is(b.daemon.watched.lookup(chainId, x.address), x.id);
  const bal = await b.daemon.ledger.balance(store, accountBook(f.accountId), f.coin.ETH);
  t.is(bal.available.toString(), '0.5');
});
