import test, { type ExecutionContext } from 'ava';
import { Catalog, coinId, NATIVE_ASSET } from '../../../src/catalog/coins';
import { btcScheme } from '../../../src/chains/btc/derive';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { parseConfig } from '../../../src/config/schema';
import { AddressEntity, type AddressRow } from '../../../src/db/entities/chain';
import { WalletBranchEntity } from '../../../src/db/entities/wallet';
import { Store } from '../../../src/db/store';
import { FakeClock } from '../../../src/shared/clock';
import { ApiError } from '../../../src/shared/errors';
import { AddressService, skipBranchesTo } from '../../../src/wallet/address.service';
import { HdWallet } from '../../../src/wallet/hd';
import { WalletSigner } from '../../../src/wallet/signer';
import { silentLogger } from '../../../src/shared/logger';
import { tempStore } from '../../helpers/memory-store';
import { tempPostgres } from '../../helpers/pg-database';
import { TEST_MNEMONIC } from '../../helpers/test-mnemonic';

const USDT_ERC20 = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

const config = parseConfig({
  chains: [
    {
      id: 'bitcoin',
      kind: 'btc',
      network: 'regtest',
      rpc_url: 'http://127.0.0.1:18443',
      options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a },
    },
    { id: 'ethereum', kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', tokens: [{ ticker: 'USDT', contract: USDT_ERC20, decimals: 6 }] },
    { id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:8090' },
  ],
});
const catalog = new Catalog(config.chains, config.fiat);
const wallet = new HdWallet(new WalletSigner(() => TEST_MNEMONIC, silentLogger));
const BTC = coinId('bitcoin', NATIVE_ASSET);
const ETH = coinId('ethereum', NATIVE_ASSET);
const USDT = coinId('ethereum', USDT_ERC20);
const TRX = coinId('tron', NATIVE_ASSET);
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

const service = (store: Store, watched = new WatchedAddresses()) =>
  new AddressService({ store, wallet, chains: config.chains, catalog, watched, clock: new FakeClock() });

const allocate = (store: Store, svc: AddressService, accountId: string, coin: string) =>
  store.write((em) => svc.allocate(em, { accountId, coinId: coin, purpose: 'invoice', invoiceId: null }));

const rows = (store: Store) => store.read.find(AddressEntity, { order: { derivation_path: 'ASC' } });

test('each account gets its own branch; each (account, chain) counts 0, 1, 2...; tokens share the chain counter', async (t) => {
  const store = await tempStore(t);
  const watched = new WatchedAddresses();
  const svc = service(store, watched);
  const a0 = await allocate(store, svc, A, ETH);
  const b0 = await allocate(store, svc, B, ETH);
  const a1 = await allocate(store, svc, A, USDT);
  const a2 = await allocate(store, svc, A, ETH);
  t.like(a0, {
    account_id: A,
    chain_id: 'ethereum',
    coin_id: ETH,
    derivation_path: "m/44'/60'/0'/0/0",
    derivation_index: 0,
    purpose: 'invoice',
    status: 'active',
  });
  t.is(a0.address, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  t.like(b0, { derivation_path: "m/44'/60'/1'/0/0", derivation_index: 0 });
  t.like(a1, { coin_id: USDT, derivation_path: "m/44'/60'/0'/0/1", derivation_index: 1 });
  t.like(a2, { derivation_path: "m/44'/60'/0'/0/2", derivation_index: 2 });
  // Another chain of the same account: the account's branch, its own counter.
  const btc = await allocate(store, svc, A, BTC);
  t.like(btc, { chain_id: 'bitcoin', derivation_path: "m/84'/1'/0'/0/0", derivation_index: 0 });
  t.true(btc.address.startsWith('rb1q'));
  const trx = await allocate(store, svc, B, TRX);
  t.like(trx, { chain_id: 'tron', derivation_path: "m/44'/195'/1'/0/0" });
  t.regex(trx.address, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
  // Every row is stored as returned and watched under its id.
  const stored = await rows(store);
  t.is(stored.length, 6);
  for (const r of [a0, b0, a1, a2, btc, trx]) {
    t.deepEqual(
      stored.find((s) => s.id === r.id),
      r,
    );
    t.is(watched.lookup(r.chain_id, r.address), r.id);
  }
  t.deepEqual(
    (await store.read.find(WalletBranchEntity, { order: { branch: 'ASC' } })).map((b) => [b.account_id, b.branch]),
    [
      [A, 0],
      [B, 1],
    ],
  );
  t.is(svc.derive('ethereum', 0, 2).address, a2.address);
  t.is(await svc.branchFor(B), 1);
  t.is(await svc.branchFor('77777777-7777-4777-8777-777777777777'), null);
});

test('a rolled-back allocation leaves no row; the next index is never a committed one', async (t) => {
  const store = await tempStore(t);
  const svc = service(store);
  const first = await allocate(store, svc, A, ETH);
  let failed: AddressRow | undefined;
  await t.throwsAsync(
    store.write(async (em) => {
      failed = await svc.allocate(em, { accountId: A, coinId: ETH, purpose: 'invoice', invoiceId: '33333333-3333-4333-8333-333333333333' });
      throw new Error('the invoice insert failed');
    }),
    { message: 'the invoice insert failed' },
  );
  t.truthy(failed);
  t.is(await store.read.countBy(AddressEntity, { id: failed!.id }), 0, 'no row for the failed allocation');
  const next = await allocate(store, svc, A, ETH);
  const all = await rows(store);
  t.deepEqual(
    all.map((r) => r.derivation_index),
    [0, 1],
  );
  t.not(next.derivation_index, first.derivation_index);
  t.is(new Set(all.map((r) => r.address)).size, all.length);
});

test('a first allocation that rolls back leaves no branch behind', async (t) => {
  const store = await tempStore(t);
  const svc = service(store);
  await t.throwsAsync(
    store.write(async (em) => {
      await svc.allocate(em, { accountId: B, coinId: TRX, purpose: 'static' });
      throw new Error('boom');
    }),
  );
  t.is(await store.read.count(WalletBranchEntity), 0);
  t.like(await allocate(store, svc, A, TRX), { derivation_path: "m/44'/195'/0'/0/0" });
});

test('the database itself refuses a second row with the same chain and path', async (t) => {
  const store = await tempStore(t);
  const svc = service(store);
  const row = await allocate(store, svc, A, BTC);
  await t.throwsAsync(store.write((em) => em.insert(AddressEntity, { ...row, id: '44444444-4444-4444-8444-444444444444', address: 'rb1qother' })));
  t.is(await store.read.count(AddressEntity), 1);
});

test('an address issued before is refused even at another path (a derivation fault), and nothing is written', async (t) => {
  const store = await tempStore(t);
  const watched = new WatchedAddresses();
  // A wallet that gives every index the same address: the fault the check is there for.
  const faulty = Object.create(wallet, { derive: { value: (scheme: unknown, branch: number) => wallet.derive(scheme as never, branch, 0) } }) as HdWallet;
  const svc = new AddressService({ store, wallet: faulty, chains: config.chains, catalog, watched, clock: new FakeClock() });
  const first = await allocate(store, svc, A, ETH);
  const err = await t.throwsAsync(allocate(store, svc, A, ETH));
  t.regex(err!.message, /derivation fault: index 1 of branch 0 on ethereum gives an address already issued/);
  t.deepEqual(
    (await rows(store)).map((r) => r.id),
    [first.id],
  );
});

test('an address whose allocation rolled back is derived and issued again', async (t) => {
  const store = await tempStore(t);
  const watched = new WatchedAddresses();
  const svc = service(store, watched);
  await t.throwsAsync(
    store.write(async (em) => {
      await svc.allocate(em, { accountId: A, coinId: ETH, purpose: 'invoice', invoiceId: null });
      throw new Error('boom');
    }),
  );
  const again = await allocate(store, svc, A, ETH);
  t.like(again, { derivation_path: "m/44'/60'/0'/0/0" });
  t.is(watched.lookup('ethereum', again.address), again.id);
});

test('an unknown coin is a validation error and writes nothing', async (t) => {
  const store = await tempStore(t);
  const err = await t.throwsAsync(allocate(store, service(store), A, '55555555-5555-4555-8555-555555555555'));
  t.true(err instanceof ApiError);
  t.like((err as ApiError).toBody(), { error: { code: 'validation_error', details: { field: 'coin_id' } } });
  t.is(await store.read.count(AddressEntity), 0);
  t.is(await store.read.count(WalletBranchEntity), 0);
});

test('loadWatched fills the set from the table at start', async (t) => {
  const store = await tempStore(t);
  const svc = service(store);
  const made: AddressRow[] = [];
  for (const coin of [BTC, ETH, TRX, ETH, BTC]) made.push(await allocate(store, svc, A, coin));
  const watched = new WatchedAddresses();
  t.is(await service(store, watched).loadWatched(), 5);
  t.is(watched.size(), 5);
  t.is(watched.size('bitcoin'), 2);
  for (const r of made) t.is(watched.lookup(r.chain_id, r.address), r.id);
});

test('called again, loadWatched reads only the addresses issued since, never again every row with an older or a random id', async (t) => {
  const store = await tempStore(t);
  const clock = new FakeClock();
  const svc = new AddressService({ store, wallet, chains: config.chains, catalog, watched: new WatchedAddresses(), clock });
  await allocate(store, svc, A, ETH);
  // A row from before ids were time-ordered.
  const old = await allocate(store, svc, B, ETH);
  await store.write((em) => em.update(AddressEntity, { id: old.id }, { id: 'f0000000-0000-4000-8000-000000000000' }));
  clock.advance(1000);
  t.is(await svc.loadWatched(), 2);
  clock.advance(60_000);
  t.is(await svc.loadWatched(), 0);
  await allocate(store, svc, A, ETH);
  t.is(await svc.loadWatched(), 1);
});

test('after a restore without the old database, new accounts start at the branch given, never lower', async (t) => {
  const store = await tempStore(t);
  const svc = service(store);
  t.is(await skipBranchesTo(store, 1000), 1000);
  t.like(await allocate(store, svc, A, ETH), { derivation_path: "m/44'/60'/1000'/0/0" });
  t.is(await skipBranchesTo(store, 5), 1001, 'never moves down');
  t.like(await allocate(store, svc, B, ETH), { derivation_path: "m/44'/60'/1001'/0/0" });
});

async function concurrent(t: ExecutionContext, store: Store) {
  const svc = service(store);
  // First allocations of three accounts race for branches; then many race for the same counters.
  const accounts = [A, B, '66666666-6666-4666-8666-666666666666'];
  const jobs: Array<Promise<AddressRow>> = [];
  for (let i = 0; i < 30; i++) jobs.push(allocate(store, svc, accounts[i % 3]!, [ETH, USDT, TRX][i % 2]!));
  const made = await Promise.all(jobs);
  const all = await rows(store);
  t.is(all.length, 30);
  t.is(new Set(all.map((r) => `${r.chain_id}|${r.derivation_path}`)).size, 30, 'no path twice');
  const branches = await store.read.find(WalletBranchEntity);
  t.is(branches.length, 3);
  t.is(new Set(branches.map((b) => b.branch)).size, 3, 'one branch per account, none shared');
  for (const acc of accounts) {
    for (const chain of ['ethereum', 'tron']) {
      const idx = all
        .filter((r) => r.account_id === acc && r.chain_id === chain)
        .map((r) => r.derivation_index)
        .sort((x, y) => x - y);
      t.deepEqual(
        idx,
        idx.map((_, i) => i),
        `${acc} ${chain}: indices 0..n-1, none twice`,
      );
    }
  }
  t.deepEqual(made.map((m) => m.id).sort(), all.map((r) => r.id).sort());
}

test('SQLite: concurrent allocations get distinct indices', async (t) => {
  await concurrent(t, await tempStore(t));
});

test('PostgreSQL: concurrent allocations get distinct indices and branches; a rollback leaves nothing', async (t) => {
  const url = await tempPostgres(t);
  const store = await Store.open({ url });
  t.teardown(() => store.close());
  await store.migrate();
  await concurrent(t, store);
  const svc = service(store);
  const before = await store.read.count(AddressEntity);
  await t.throwsAsync(
    store.write(async (em) => {
      await svc.allocate(em, { accountId: A, coinId: ETH, purpose: 'invoice' });
      throw new Error('boom');
    }),
  );
  t.is(await store.read.count(AddressEntity), before);
  const next = await allocate(store, svc, A, ETH);
  t.is(await store.read.countBy(AddressEntity, { chain_id: 'ethereum', derivation_path: next.derivation_path }), 1);
});

test("PostgreSQL: two daemons issuing at once never issue one address twice, and each learns the other's addresses, also one committed after its last look", async (t) => {
  const url = await tempPostgres(t);
  const stores = [await Store.open({ url }), await Store.open({ url })] as const;
  t.teardown(async () => {
    for (const s of stores) await s.close();
  });
  await stores[0].migrate();
  const watched = [new WatchedAddresses(), new WatchedAddresses()] as const;
  const svcs = [service(stores[0], watched[0]), service(stores[1], watched[1])] as const;
  for (const svc of svcs) await svc.loadWatched();

  const made = await Promise.all(Array.from({ length: 40 }, (_, i) => allocate(stores[i % 2]!, svcs[i % 2]!, i % 4 < 2 ? A : B, ETH)));
  t.is(new Set(made.map((r) => r.address)).size, 40, 'no address twice');
  t.is(new Set(made.map((r) => `${r.account_id}|${r.derivation_index}`)).size, 40, 'no index twice');
  for (const [i, svc] of svcs.entries()) {
    await svc.loadWatched();
    t.true(made.every((r) => watched[i]!.lookup('ethereum', r.address) === r.id));
  }

  // An allocation whose transaction is still open when the other daemon looks.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let issued!: (row: AddressRow) => void;
  const late = new Promise<AddressRow>((resolve) => (issued = resolve));
  const open = stores[0].write(async (em) => {
    issued(await svcs[0].allocate(em, { accountId: A, coinId: ETH, purpose: 'invoice' }));
    await held;
  });
  const row = await late;
  await svcs[1].loadWatched();
  t.is(watched[1].lookup('ethereum', row.address), undefined, 'not committed yet');
  release();
  await open;
  await svcs[1].loadWatched();
  t.is(watched[1].lookup('ethereum', row.address), row.id);
});

test('a Bitcoin change address comes from the account internal chain (/1/i), counted apart from its receive addresses, and is watched', async (t) => {
  const store = await tempStore(t);
  const watched = new WatchedAddresses();
  const svc = service(store, watched);
  const receive = await allocate(store, svc, A, BTC);
  const change = () => store.write((em) => svc.allocate(em, { accountId: A, coinId: BTC, purpose: 'change' }));
  const c0 = await change();
  const c1 = await change();
  const branch = (await svc.branchFor(A))!;
  t.is(receive.derivation_path, `m/84'/1'/${branch}'/0/0`);
  t.like(c0, { purpose: 'change', derivation_path: `m/84'/1'/${branch}'/1/0`, derivation_index: 0 });
  t.like(c1, { purpose: 'change', derivation_path: `m/84'/1'/${branch}'/1/1`, derivation_index: 1 });
  t.is(c0.address, wallet.derive(btcScheme(config.chains[0]!), branch, 0, 1).address);
  t.not(c0.address, receive.address);
  t.is(watched.lookup('bitcoin', c0.address), c0.id);
  t.is((await allocate(store, svc, A, BTC)).derivation_path, `m/84'/1'/${branch}'/0/1`, 'the receive counter did not move');
});

test('change addresses are refused on a chain without change (EVM): nothing is issued', async (t) => {
  const store = await tempStore(t);
  const svc = service(store);
  const err = await t.throwsAsync(store.write((em) => svc.allocate(em, { accountId: A, coinId: ETH, purpose: 'change' })));
  t.true(err instanceof ApiError);
  t.is((await rows(store)).length, 0);
});
