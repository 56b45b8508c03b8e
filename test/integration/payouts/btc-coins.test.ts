/**
 * Which coins a Bitcoin payout may spend, on a real (temporary SQLite) database: an account's
 * confirmed deposits and change, never another account's, never one the chain shows spent, and
 * never one a stored payout holds; two payouts in flight never share a coin, and a payout given up
 * gives its coins back.
 */
import { localSigner } from '../../helpers/local-signer';
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { address as baddress, Transaction } from 'bitcoinjs-lib';
import { Catalog, coinId } from '../../../src/catalog/coins';
import { btcScheme } from '../../../src/chains/btc/derive';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { parseConfig } from '../../../src/config/schema';
import { AddressEntity, type ChainTransferRow } from '../../../src/db/entities/chain';
import { insertRow, placeholder, rawQuery } from '../../../src/db/raw';
import { Store } from '../../../src/db/store';
import { BtcPayoutEngine, BtcPayoutRefused } from '../../../src/chains/btc/payouts/btc-payout-engine';
import { CoinTaken, reserveCoins, spendableCoins } from '../../../src/chains/btc/payouts/coin-store';
import { FakeClock } from '../../../src/shared/clock';
import { silentLogger } from '../../../src/shared/logger';
import { Amount } from '../../../src/shared/amount';
import { AddressService } from '../../../src/wallet/address.service';
import { HdWallet } from '../../../src/wallet/hd';
import { WalletSigner } from '../../../src/wallet/signer';
import { tempStore } from '../../helpers/memory-store';
import { tempPostgres } from '../../helpers/pg-database';
import { TEST_MNEMONIC } from '../../helpers/test-mnemonic';

const config = parseConfig({
  chains: [
    {
      id: 'bitcoin',
      kind: 'btc',
      network: 'regtest',
      rpc_url: 'http://127.0.0.1:18443',
      options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a },
    },
  ],
});
const chain = config.chains[0]!;
const BTC = coinId('bitcoin', 'native');
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const walletSigner = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
const signer = localSigner(walletSigner);
const wallet = new HdWallet(walletSigner);
const elsewhere = (): string => baddress.toBech32(randomBytes(20), 0, 'rb');

let seq = 0;
/** A received output of `account` as the chain core records it; returns its transfer row id. */
async function received(store: Store, account: string, sat: bigint, status: ChainTransferRow['status'] = 'confirmed'): Promise<string> {
  const n = seq++;
  const owner = wallet.derive(btcScheme(chain), account === A ? 0 : 1, n);
  const now = new Date().toISOString();
  const id = `ct-${String(n).padStart(4, '0')}`;
  await store.write(async (em) => {
    await insertRow(em, 'addresses', {
      id: `ad-${n}`,
      account_id: account,
      chain_id: 'bitcoin',
      coin_id: BTC,
      address: owner.address,
      derivation_path: owner.path,
      derivation_index: n,
      purpose: 'invoice',
      invoice_id: null,
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    await insertRow(
      em,
      'chain_transfers',
      transfer({ id, address: owner.address, address_id: `ad-${n}`, account_id: account, amount: Amount.fromBaseUnits(sat, 8).toString(), status, now }),
    );
  });
  return id;
}

/** An input of a block spending the received output `spent` (outgoing), in `status`. */
async function spent(store: Store, spentId: string, status: ChainTransferRow['status']): Promise<void> {
  const [row] = await rawQuery<ChainTransferRow>(store.read, `SELECT * FROM chain_transfers WHERE id = ${placeholder(store.read, 1)}`, [spentId]);
  const now = new Date().toISOString();
  await store.write((em) =>
    insertRow(em, 'chain_transfers', transfer({ ...row!, id: `out-${spentId}`, direction: 'outgoing', spent_transfer_id: spentId, status, now })),
  );
}

function transfer(r: Partial<ChainTransferRow> & { now: string }): ChainTransferRow {
  const { now, ...rest } = r;
  return {
    id: '',
    chain_id: 'bitcoin',
    coin_id: BTC,
    txid: randomBytes(32).toString('hex'),
    output_index: 0,
    direction: 'incoming',
    purpose: 'invoice',
    address: '',
    address_id: '',
    account_id: '',
    amount: '0',
    spent_transfer_id: null,
    nonce: null,
    block_height: 100,
    block_hash: '00'.repeat(32),
    confirmations: 6,
    status: 'confirmed',
    seen_at: now,
    confirmed_at: now,
    reverted_at: null,
    created_at: now,
    updated_at: now,
    ...rest,
  } as ChainTransferRow;
}

function engineFor(store: Store): BtcPayoutEngine {
  const addresses = new AddressService({
    store,
    wallet,
    chains: config.chains,
    catalog: new Catalog(config.chains, config.fiat),
    watched: new WatchedAddresses(),
    clock: new FakeClock(),
  });
  return new BtcPayoutEngine({ chain, signer, addresses, clock: new FakeClock() });
}

const ids = async (store: Store, account = A): Promise<string[]> => (await spendableCoins(store.read, 'bitcoin', account)).map((c) => c.transferId).sort();

async function fixture(t: ExecutionContext, given?: Store) {
  const store = given ?? (await tempStore(t));
  const coins = {
    confirmed1: await received(store, A, 100_000n),
    confirmed2: await received(store, A, 200_000n),
    seen: await received(store, A, 300_000n, 'seen'),
    reverted: await received(store, A, 400_000n, 'reverted'),
    spent: await received(store, A, 500_000n),
    spendReverted: await received(store, A, 600_000n),
    other: await received(store, B, 700_000n),
  };
  await spent(store, coins.spent, 'seen');
  await spent(store, coins.spendReverted, 'reverted');
  return { store, coins };
}

test("an account's spendable coins are its confirmed outputs not spent on chain: not another account's, not unconfirmed, not reversed", async (t) => {
  const { store, coins } = await fixture(t);
  t.deepEqual(await ids(store), [coins.confirmed1, coins.confirmed2, coins.spendReverted].sort());
  t.deepEqual(await ids(store, B), [coins.other]);
  const [one] = (await spendableCoins(store.read, 'bitcoin', A)).filter((c) => c.transferId === coins.confirmed2);
  t.is(one!.value, 200_000n);
  t.regex(one!.path, /^m\/84'\/1'\/0'\/0\/\d+$/);
});

test('two payouts in flight never spend one coin; a payout given up gives its coins back', async (t) => {
  const { store, coins } = await fixture(t);
  const engine = engineFor(store);
  const pay = (sat: bigint) =>
    store.write((em) => engine.build(em, { accountId: A, orders: [{ withdrawalId: `w${sat}`, address: elsewhere(), amount: sat }], satPerVbyte: 2 }));
  const first = await pay(500_000n);
  t.deepEqual(
    first.inputs.map((c) => c.transferId),
    [coins.spendReverted],
  );
  const second = await pay(150_000n);
  t.deepEqual(
    second.inputs.map((c) => c.transferId),
    [coins.confirmed2],
  );
  t.deepEqual(await ids(store), [coins.confirmed1]);
  const refused = await t.throwsAsync(pay(150_000n));
  t.is((refused as BtcPayoutRefused).reason, 'insufficient_coins');

  t.is(await store.write((em) => engine.release(em, first.payoutId)), 1);
  t.deepEqual(await ids(store), [coins.confirmed1, coins.spendReverted].sort());
});

test('reserving a coin another payout holds fails the whole payout transaction: nothing reserved, no change address issued', async (t) => {
  const { store, coins } = await fixture(t);
  const stale = await spendableCoins(store.read, 'bitcoin', A);
  await store.write((em) =>
    reserveCoins(
      em,
      { payoutId: 'other-payout', accountId: A, chainId: 'bitcoin', now: new Date().toISOString() },
      stale.filter((c) => c.transferId === coins.confirmed2),
    ),
  );
  const err = await t.throwsAsync(
    store.write(async (em) => {
      await engineFor(store).build(em, { accountId: A, orders: [{ withdrawalId: 'w', address: elsewhere(), amount: 50_000n }], satPerVbyte: 1 });
      await reserveCoins(em, { payoutId: 'late', accountId: A, chainId: 'bitcoin', now: new Date().toISOString() }, stale);
    }),
  );
  t.true(err instanceof CoinTaken);
  const reserved = await rawQuery<{ payout_id: string }>(store.read, 'SELECT payout_id FROM btc_coin_reservations');
  t.deepEqual(
    reserved.map((r) => r.payout_id),
    ['other-payout'],
  );
  t.is(await store.read.countBy(AddressEntity, { purpose: 'change' }), 0);
});

test('a withdrawal to an address of another network, or below dust, is refused by name before anything is read or written', async (t) => {
  const { store } = await fixture(t);
  const engine = engineFor(store);
  const build = (address: string, amount: bigint) =>
    t.throwsAsync(
      store.write((em) =>
        engine.build(em, {
          accountId: A,
          orders: [
            { withdrawalId: 'ok', address: elsewhere(), amount: 10_000n },
            { withdrawalId: 'bad', address, amount },
          ],
          satPerVbyte: 1,
        }),
      ),
    );
  const wrongNet = (await build('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 10_000n)) as BtcPayoutRefused;
  t.like(wrongNet, { reason: 'address_refused', withdrawalId: 'bad' });
  const dust = (await build(elsewhere(), 293n)) as BtcPayoutRefused;
  t.like(dust, { reason: 'below_dust', withdrawalId: 'bad' });
  t.is((await rawQuery(store.read, 'SELECT 1 FROM btc_coin_reservations')).length, 0);
});

test('PostgreSQL: payouts built at the same moment in separate transactions never spend one coin; the loser rolls back whole', async (t) => {
  const url = await tempPostgres(t);
  const opened = await Store.open({ url });
  t.teardown(() => opened.close());
  await opened.migrate();
  const { store } = await fixture(t, opened);
  const engine = engineFor(store);
  const outcomes = await Promise.allSettled(
    Array.from({ length: 6 }, (_, i) =>
      store.write((em) => engine.build(em, { accountId: A, orders: [{ withdrawalId: `w${i}`, address: elsewhere(), amount: 50_000n }], satPerVbyte: 1 })),
    ),
  );
  const built = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  for (const o of outcomes) if (o.status === 'rejected') t.true(o.reason instanceof CoinTaken || o.reason instanceof BtcPayoutRefused, String(o.reason));
  t.true(built.length >= 1);
  const spentIds = built.flatMap((p) => p.inputs.map((c) => c.transferId));
  t.is(new Set(spentIds).size, spentIds.length, 'no coin in two payouts');
  const reserved = await rawQuery<{ transfer_id: string; payout_id: string }>(store.read, 'SELECT transfer_id, payout_id FROM btc_coin_reservations');
  t.deepEqual(reserved.map((r) => r.transfer_id).sort(), [...spentIds].sort());
  t.is(
    await store.read.countBy(AddressEntity, { purpose: 'change' }),
    built.filter((p) => p.outputs.some((o) => o.withdrawalId === null)).length,
    'a failed build left no change address',
  );
});

test('a batch of more than 252 withdrawals from more than 252 coins is priced on its real size: the fee covers the rate', async (t) => {
  const store = await tempStore(t);
  for (let i = 0; i < 300; i++) await received(store, A, 10_000n);
  const orders = Array.from({ length: 260 }, (_, i) => ({ withdrawalId: `w${i}`, address: elsewhere(), amount: 10_000n }));
  const payout = await store.write((em) => engineFor(store).build(em, { accountId: A, orders, satPerVbyte: 1 }));
  const tx = Transaction.fromHex(payout.raw);
  t.true(tx.ins.length > 252);
  t.is(tx.outs.length >= 260, true);
  t.true(payout.fee >= BigInt(tx.virtualSize()));
  t.true(tx.virtualSize() <= payout.vsize);
});
