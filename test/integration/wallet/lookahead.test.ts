import test from 'ava';
import { Catalog, coinId, NATIVE_ASSET } from '../../../src/catalog/coins';
import { schemeFor } from '../../../src/chains/derivation';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { parseConfig } from '../../../src/config/schema';
import { FakeClock } from '../../../src/shared/clock';
import { AddressLookahead, BUSY_AFTER, LOOKAHEAD_DEPTH } from '../../../src/wallet/address-lookahead';
import { AddressService } from '../../../src/wallet/address.service';
import { HdWallet } from '../../../src/wallet/hd';
import { WalletSigner } from '../../../src/wallet/signer';
import { silentLogger } from '../../../src/shared/logger';
import { TEST_MNEMONIC } from '../../helpers/daemon';
import { tempStore } from '../../helpers/memory-store';

const config = parseConfig({
  chains: [
    {
      id: 'bitcoin',
      kind: 'btc',
      network: 'regtest',
      rpc_url: 'http://127.0.0.1:18443',
      options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a },
    },
    { id: 'ethereum', kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:8545' },
    { id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:8090' },
  ],
});
const wallet = new HdWallet(new WalletSigner(() => TEST_MNEMONIC, silentLogger));

async function until<T>(what: string, get: () => T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('addresses derived ahead from the public branch equal the inline derivation, on every family', async (t) => {
  const la = new AddressLookahead(config.chains, 1);
  t.teardown(() => la.close());
  for (const chain of config.chains) {
    const scheme = schemeFor(chain);
    la.issuedUpTo(chain.id, 3, 0, () => wallet.branchPublicKey(scheme, 3));
    t.is(await until(`${chain.id} index 1`, () => la.take(chain.id, 3, 1)), wallet.derive(scheme, 3, 1).address);
    for (let i = 2; i <= LOOKAHEAD_DEPTH; i++) t.is(la.take(chain.id, 3, i), wallet.derive(scheme, 3, i).address, `${chain.id} index ${i}`);
    t.is(la.take(chain.id, 3, LOOKAHEAD_DEPTH + 1), undefined, 'no further than asked');
    t.is(la.take(chain.id, 4, 1), undefined, 'another branch is not this one');
  }
});

test('an address is handed out once, and an index issued before its result arrived never', async (t) => {
  const la = new AddressLookahead(config.chains, 1);
  t.teardown(() => la.close());
  const scheme = schemeFor(config.chains[1]!);
  const key = () => wallet.branchPublicKey(scheme, 0);
  la.issuedUpTo('ethereum', 0, 0, key);
  la.issuedUpTo('ethereum', 0, 10, key);
  t.is(await until('index 11', () => la.take('ethereum', 0, 11)), wallet.derive(scheme, 0, 11).address);
  t.is(la.take('ethereum', 0, 11), undefined);
  t.is(la.take('ethereum', 0, 5), undefined);
});

test('the address service issues the same addresses with the lookahead as without it', async (t) => {
  const store = await tempStore(t);
  const la = new AddressLookahead(config.chains, 1);
  t.teardown(() => la.close());
  const catalog = new Catalog(config.chains, config.fiat);
  const svc = new AddressService({ store, wallet, chains: config.chains, catalog, watched: new WatchedAddresses(), clock: new FakeClock(), lookahead: la });
  const accountId = '33333333-3333-4333-8333-333333333333';
  for (let i = 0; i < 100; i++) {
    const coin = coinId(i % 3 === 0 ? 'bitcoin' : 'ethereum', NATIVE_ASSET);
    const row = await store.write((em) => svc.allocate(em, { accountId, coinId: coin, purpose: 'invoice', invoiceId: null }));
    t.is(row.address, svc.derive(row.chain_id, 0, row.derivation_index).address, row.derivation_path);
    if (i % 10 === 0) await new Promise((r) => setTimeout(r, 20));
  }
});

test('a branch derives ahead only once it is busy: a daemon issuing an address now and then never starts the thread', async (t) => {
  const la = new AddressLookahead(config.chains);
  t.teardown(() => la.close());
  const scheme = schemeFor(config.chains[1]!);
  const key = () => wallet.branchPublicKey(scheme, 5);
  for (let i = 0; i < BUSY_AFTER - 1; i++) la.issuedUpTo('ethereum', 5, i, key);
  la.issuedUpTo('ethereum', 6, 0, key);
  t.false(la.running, 'quiet branches, no thread');
  la.issuedUpTo('ethereum', 5, BUSY_AFTER - 1, key);
  t.true(la.running);
  t.is(await until('the next index', () => la.take('ethereum', 5, BUSY_AFTER)), wallet.derive(scheme, 5, BUSY_AFTER).address);
});
