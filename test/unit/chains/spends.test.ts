import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { TransferRouter } from '../../../src/chains/transfer-router';
import type { NormalisedSpend } from '../../../src/chains/types';
import { WalletCoins } from '../../../src/chains/wallet-coins';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { AddressEntity } from '../../../src/db/entities/chain';
import { RecordingSink } from './fake-chain';
import { ALICE, BOB, eth, setup, STRANGER } from './watcher-harness';

const ETH = coinId('ethereum', 'native');

/** The chain core with a handler for spends from invoice addresses registered, as payouts will register theirs. */
async function withSpends(t: Parameters<typeof setup>[0], opts: Parameters<typeof setup>[1] = {}) {
  const h = await setup(t, opts);
  const spends = new RecordingSink(h.store, h.clock);
  h.router.register('invoice', 'outgoing', spends);
  /** The changes of one transaction's spends, as `previous>status`. */
  const spent = async (txid: string) =>
    (await spends.calls()).filter((c) => c.direction === 'outgoing' && c.txid === txid).map((c) => `${c.previous ?? 'new'}>${c.status}`);
  const outgoing = async () => (await h.transfers()).filter((r) => r.direction === 'outgoing');
  return { ...h, spent, outgoing };
}

const input = (txid: string, spentTxid: string, index = 0): NormalisedSpend => ({ txid, outpoint: { txid: spentTxid, index } });

test("a spend of an output the wallet received goes to the outgoing handler of its address's purpose, and is confirmed once deep enough", async (t) => {
  const { node, sink, watcher, signal, spent, outgoing, transfers } = await withSpends(t, { confirmations: 2 });
  node.mine([eth(ALICE, 5_000n, '0xin')]);
  node.mine([], 'a', [input('0xout', '0xin', 0), input('0xout', '0xin', 1), input('0xout', '0xelse', 0)]);
  await watcher.poll(signal);
  t.deepEqual(await spent('0xout'), ['new>seen']);
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(await spent('0xout'), ['new>seen', 'seen>confirmed']);
  const received = (await transfers()).find((r) => r.txid === '0xin')!;
  const [row] = await outgoing();
  t.like(row, {
    txid: '0xout',
    output_index: 0,
    coin_id: ETH,
    purpose: 'invoice',
    address: ALICE,
    address_id: received.address_id,
    account_id: received.account_id,
    amount: '0.000000000000005',
    spent_transfer_id: received.id,
    status: 'confirmed',
    block_height: 2,
    confirmations: 2,
  });
  t.is((await outgoing()).length, 1, 'inputs spending outputs the wallet never received are not recorded');
  t.deepEqual(
    (await sink.calls()).filter((c) => c.direction === 'incoming').map((c) => c.txid),
    ['0xin'],
    'the incoming handler is told of the payment only',
  );
});

test('an output received and spent in one batch of blocks is matched', async (t) => {
  const { node, watcher, signal, spent } = await withSpends(t, { confirmations: 1 });
  node.mine([eth(BOB, 7n, '0xin')]);
  node.mine([], 'a', [input('0xout', '0xin')]);
  await watcher.poll(signal);
  t.deepEqual(await spent('0xout'), ['new>confirmed']);
});

test('a reorganisation reverts a spend the new branch lacks, keeps one it holds, and matches a new spend of the same output', async (t) => {
  const { node, watcher, signal, spent, outgoing } = await withSpends(t, { confirmations: 2 });
  node.mine([eth(ALICE, 10n, '0xin1'), eth(BOB, 20n, '0xin2'), eth(ALICE, 30n, '0xin3')]);
  node.mine([], 'a', [input('0xkept', '0xin1')]);
  node.mine([], 'a', [input('0xlost', '0xin2'), input('0xmoved', '0xin3')]);
  await watcher.poll(signal);
  node.cutBackTo(3);
  node.mine([], 'b', [input('0xmoved', '0xin3'), input('0xdouble', '0xin2')]);
  node.mineEmpty(1, 'b');
  await watcher.poll(signal);
  t.deepEqual(await spent('0xkept'), ['new>confirmed']);
  t.deepEqual(await spent('0xlost'), ['new>seen', 'seen>reverted']);
  t.deepEqual(await spent('0xmoved'), ['new>seen', 'seen>confirmed'], 'a spend the new branch holds is never reverted');
  t.deepEqual(await spent('0xdouble'), ['new>seen', 'seen>confirmed']);
  t.deepEqual((await outgoing()).map((r) => [r.txid, r.status, r.amount, r.block_hash]).sort(), [
    ['0xdouble', 'confirmed', '0.00000000000000002', '0xb3'],
    ['0xkept', 'confirmed', '0.00000000000000001', '0xa2'],
    ['0xlost', 'reverted', '0.00000000000000002', '0xa3'],
    ['0xmoved', 'confirmed', '0.00000000000000003', '0xb3'],
  ]);
});

test('an EVM transaction sent from a watched address is an outgoing spend with its nonce; one from another sender is not recorded', async (t) => {
  const { node, watcher, signal, spent, outgoing } = await withSpends(t, { confirmations: 1 });
  node.mine([], 'a', [
    { txid: '0xsent', from: BOB, nonce: 7 },
    { txid: '0xtheirs', from: STRANGER, nonce: 1 },
  ]);
  await watcher.poll(signal);
  t.deepEqual(await spent('0xsent'), ['new>confirmed']);
  t.deepEqual(await spent('0xtheirs'), []);
  t.like(await outgoing(), [{ txid: '0xsent', output_index: 0, address: BOB, nonce: 7, amount: '0', purpose: 'invoice', spent_transfer_id: null }]);
});

test('after a restart, the outputs received before it are loaded: their spends are matched', async (t) => {
  const { node, watcher, restart, signal, spent, store, watched } = await withSpends(t, { confirmations: 1 });
  node.mine([eth(ALICE, 3n, '0xin')]);
  await watcher.poll(signal);
  const coins = new WalletCoins(watched);
  t.is(await coins.load(store), 1);
  const again = restart(coins);
  node.mine([], 'a', [input('0xout', '0xin')]);
  await again.poll(signal);
  t.deepEqual(await spent('0xout'), ['new>confirmed']);
});

test('a transfer to an address whose purpose has no handler is recorded with that purpose, and no handler is told', async (t) => {
  const { node, sink, watcher, signal, store, watched, transfers } = await withSpends(t, { confirmations: 1 });
  const id = '00000000-0000-4000-8000-0000000000ff';
  await store.write((em) =>
    em.insert(AddressEntity, {
      id,
      account_id: 'acc',
      chain_id: 'ethereum',
      coin_id: ETH,
      address: '0x7EA5',
      derivation_path: "m/44'/60'/0'/1/0",
      derivation_index: 0,
      purpose: 'treasury',
      invoice_id: null,
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    }),
  );
  watched.add('ethereum', '0x7EA5', id);
  node.mine([eth('0x7EA5', 9n, '0xsweep')], 'a', [{ txid: '0xpayout', from: '0x7EA5', nonce: 0 }]);
  await watcher.poll(signal);
  t.like(
    (await transfers())
      .map((r) => ({ txid: r.txid, purpose: r.purpose, direction: r.direction, status: r.status }))
      .sort((a, b) => a.txid.localeCompare(b.txid)),
    [
      { txid: '0xpayout', purpose: 'treasury', direction: 'outgoing', status: 'confirmed' },
      { txid: '0xsweep', purpose: 'treasury', direction: 'incoming', status: 'confirmed' },
    ],
  );
  t.deepEqual(await sink.calls(), []);
});

test('several handlers of one purpose and direction are called in the order registered; the same one twice is refused', async (t) => {
  const calls: string[] = [];
  const first = { onTransfer: async () => void calls.push('first') };
  const router = new TransferRouter()
    .register('invoice', 'incoming', first)
    .register('invoice', 'incoming', { onTransfer: async () => void calls.push('second') });
  t.throws(() => router.register('invoice', 'incoming', first), { message: /already registered for invoice\/incoming/ });
  await router.route(undefined as never, { purpose: 'invoice', direction: 'incoming' } as never, null);
  t.deepEqual(calls, ['first', 'second']);
});

test("a spend whose sender's watch key no watched address has is dropped without its `from` being read (an adapter may build it then: EVM hashes it)", (t) => {
  const watched = new WatchedAddresses();
  const key = (a: string) => new TextEncoder().encode(a);
  watched.add('ethereum', ALICE, 'id-alice');
  watched.keyBy('ethereum', key);
  const coins = new WalletCoins(watched);
  let reads = 0;
  const spend = (txid: string, sender: string): NormalisedSpend => ({
    txid,
    nonce: 0,
    watchKey: key(sender),
    get from() {
      reads++;
      return sender;
    },
  });
  const kept = coins.maySpend('ethereum', [spend('0x1', BOB), spend('0x2', STRANGER), spend('0x3', ALICE)]);
  t.deepEqual(
    kept.map((k) => [k.spend.txid, k.addressId]),
    [['0x3', 'id-alice']],
  );
  t.is(reads, 1);
});

test("on a chain without watch keys (Tron) a spend is screened on its sender's text before any look-up in the watched set", (t) => {
  const watched = new WatchedAddresses();
  watched.add('tron', ALICE, 'id-alice');
  const looked: string[] = [];
  const lookup = watched.lookup.bind(watched);
  watched.lookup = (chainId, address) => (looked.push(address), lookup(chainId, address));
  const coins = new WalletCoins(watched);
  const kept = coins.maySpend('tron', [
    { txid: '0x1', from: BOB },
    { txid: '0x2', from: STRANGER },
    { txid: '0x3', from: ALICE },
  ]);
  t.deepEqual(
    kept.map((k) => [k.spend.txid, k.addressId]),
    [['0x3', 'id-alice']],
  );
  t.deepEqual(looked, [ALICE], 'the senders no watched address has were not looked up');
  t.deepEqual(coins.maySpend('nowhere', [{ txid: '0x4', from: ALICE }]), [], 'a chain with no watched address keeps none');
});
