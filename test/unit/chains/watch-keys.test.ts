import test from 'ava';
import { randomBytes } from 'node:crypto';
import { coinId } from '../../../src/catalog/coins';
import { KeyFilter } from '../../../src/chains/key-filter';
import type { NormalisedTransfer } from '../../../src/chains/types';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { AddressEntity } from '../../../src/db/entities/chain';
import { FakeChain } from './fake-chain';
import { ALICE, BOB, eth, setup, STRANGER } from './watcher-harness';

test('a key filter answers "maybe" for every key added and "no" for almost every other', (t) => {
  const filter = new KeyFilter();
  const added = Array.from({ length: 20_000 }, () => randomBytes(22));
  for (const k of added) filter.add(k);
  t.true(added.every((k) => filter.mayHave(Uint8Array.from(k))));
  const passed = Array.from({ length: 20_000 }, () => randomBytes(22)).filter((k) => filter.mayHave(k)).length;
  t.true(passed < 20, `${passed} of 20000 absent keys passed`);
});

test('a key filter passes, in order, the items whose key may be in it and those without a key', (t) => {
  const filter = new KeyFilter();
  const added = Array.from({ length: 1000 }, () => randomBytes(22));
  for (const k of added) filter.add(k);
  const items = [{ key: added[5] }, { key: randomBytes(22) }, { key: undefined }, { key: added[7] }, { key: randomBytes(22) }];
  t.deepEqual(
    filter.pass(items, (i) => i.key),
    [items[0], items[2], items[3]],
  );
  // Scratch space reused by a longer call, then a shorter one.
  const many = [...added, ...added].map((key) => ({ key }));
  t.is(filter.pass(many, (i) => i.key).length, 2000);
  t.deepEqual(
    filter.pass([items[1]!, items[3]!], (i) => i.key),
    [items[3]],
  );
});

test('a chain is screened by its watch keys only once keyed; addresses watched before and after are both keyed', (t) => {
  const watched = new WatchedAddresses();
  const key = (a: string) => new TextEncoder().encode(a);
  // Each transfer pays an address text no watched address has: only its key lets it pass.
  const mayWatch = (chainId: string, a: string) => watched.mayWatch(chainId, [{ to: 'unwatched', watchKey: key(a) }]).length === 1;
  watched.add('bitcoin', 'before', 'id-1');
  t.false(mayWatch('bitcoin', 'anything'));
  t.is(watched.mayWatch('bitcoin', [{ to: 'before' }]).length, 1);
  watched.keyBy('bitcoin', key);
  watched.add('bitcoin', 'after', 'id-2');
  t.true(mayWatch('bitcoin', 'before'));
  t.true(mayWatch('bitcoin', 'after'));
  t.false(mayWatch('bitcoin', 'other'));
  // A chain nobody watches: nothing passes.
  t.false(mayWatch('ethereum', 'other'));
  const [other, keyless, after] = [{ to: 'other', watchKey: key('other') }, { to: 'unwatched' }, { to: 'after', watchKey: key('after') }];
  t.deepEqual(watched.mayWatch('bitcoin', [other, keyless, after]), [keyless, after]);
  // A second keying (a watcher built again) keeps the first.
  watched.keyBy('bitcoin', () => key('x'));
  t.true(mayWatch('bitcoin', 'before'));
});

test("a chain without watch keys is screened by its addresses' text: watched ones pass, almost no other does", (t) => {
  const watched = new WatchedAddresses();
  const address = () => 'T' + randomBytes(24).toString('base64url').slice(0, 33);
  const ours = Array.from({ length: 20_000 }, address);
  ours.forEach((a, i) => watched.add('tron', a, `id-${i}`));
  // As an adapter hands them over: other string objects of the same text.
  const transfers = ours.map((a) => ({ to: Buffer.from(a).toString() }));
  t.is(watched.mayWatch('tron', transfers).length, ours.length);
  const strangers = Array.from({ length: 20_000 }, () => ({ to: address() }));
  const passed = watched.mayWatch('tron', strangers).length;
  t.true(passed < 20, `${passed} of 20000 unwatched addresses passed`);
  const mixed = [strangers[0]!, transfers[3]!, strangers[1]!, transfers[9]!];
  t.deepEqual(watched.mayWatch('tron', mixed), [transfers[3], transfers[9]]);
  // Watched later: passes from then on.
  watched.add('tron', strangers[1]!.to, 'id-late');
  t.deepEqual(watched.mayWatch('tron', mixed), [transfers[3], strangers[1], transfers[9]]);
  t.deepEqual(watched.mayWatch('bitcoin', mixed), []);
});

const textKey = (address: string): Uint8Array => new TextEncoder().encode(address);

/** A family with watch keys: its transfers carry the key of the address they pay. */
class KeyedChain extends FakeChain {
  watchKey(address: string): Uint8Array | null {
    return textKey(address);
  }
}
const keyed = (tr: NormalisedTransfer, key = tr.to): NormalisedTransfer => ({ ...tr, watchKey: textKey(key) });

test('with watch keys, the core records transfers whose key is watched, skips the rest, and keys addresses added later', async (t) => {
  const { node, watcher, signal, transfers, store, watched } = await setup(t, { node: new KeyedChain(), confirmations: 1 });
  await store.write((em) =>
    em.insert(AddressEntity, {
      id: '00000000-0000-4000-8000-000000000009',
      account_id: 'acc',
      chain_id: 'ethereum',
      coin_id: coinId('ethereum', 'native'),
      address: STRANGER,
      derivation_path: "m/44'/60'/0'/0/9",
      derivation_index: 9,
      purpose: 'invoice',
      invoice_id: null,
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    }),
  );
  watched.add('ethereum', STRANGER, '00000000-0000-4000-8000-000000000009');
  node.mine([
    keyed(eth(ALICE, 5n, '0x01')),
    // Its key is not watched: the core never reads its address.
    keyed(eth(BOB, 6n, '0x02'), '0xNOBODY'),
    keyed(eth(STRANGER, 7n, '0x03')),
  ]);
  await watcher.poll(signal);
  t.deepEqual(
    (await transfers()).map((r) => [r.txid, r.address, r.amount]),
    [
      ['0x01', ALICE, '0.000000000000000005'],
      ['0x03', STRANGER, '0.000000000000000007'],
    ],
  );
});
