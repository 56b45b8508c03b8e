/**
 * The Bitcoin rail's fee ceiling (PRODUCT §14), without a database or a node: a new payout waits
 * while the node's rate is above `payouts.max_fee`; a stuck one is replaced only once the node asks
 * more than it pays, at that rate, never above the ceiling.
 */
import { localSigner } from '../../../../helpers/local-signer';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { address as baddress, Transaction } from 'bitcoinjs-lib';
import type { EntityManager } from 'typeorm';
import { btcScheme } from '../../../../../src/chains/btc/derive';
import { parseConfig } from '../../../../../src/config/schema';
import { BtcRail } from '../../../../../src/chains/btc/payouts/btc-rail';
import { feeCeilings } from '../../../../../src/payouts/fee-ceiling';
import type { StoredPayout } from '../../../../../src/payouts/rail';
import { FakeClock } from '../../../../../src/shared/clock';
import { silentLogger } from '../../../../../src/shared/logger';
import { HdWallet } from '../../../../../src/wallet/hd';
import { WalletSigner } from '../../../../../src/wallet/signer';
import { TEST_MNEMONIC } from '../../../../helpers/test-mnemonic';

const chain = parseConfig({
  chains: [
    {
      id: 'bitcoin',
      kind: 'btc',
      network: 'regtest',
      rpc_url: 'http://127.0.0.1:18443',
      options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a },
      payouts: { max_fee: 50 },
    },
  ],
}).chains[0]!;
const walletSigner = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
const signer = localSigner(walletSigner);
const wallet = new HdWallet(walletSigner);
const scheme = btcScheme(chain);
const clock = new FakeClock();
const unused = {
  tip: () => Promise.reject(new Error('no node')),
  feeQuote: () => Promise.reject(new Error('no node')),
  broadcast: () => Promise.reject(new Error('no node')),
  sentStatus: () => Promise.reject(new Error('no node')),
};
const noAllocation = { allocate: () => Promise.reject(new Error('a replacement issues no address')) };
/** The rail's build and replace read or write nothing when they decide to wait. */
const noDatabase = undefined as unknown as EntityManager;

function rail() {
  const ceiling = feeCeilings([chain], clock).get('bitcoin')!;
  return { ceiling, rail: new BtcRail({ chain, signer, addresses: noAllocation, clock }, unused, ceiling) };
}

/** A stored payout of one withdrawal with change, its current candidate paying `rate` sat/vB. */
function stored(rate: number): StoredPayout {
  const coin = wallet.derive(scheme, 1, 0);
  const vsize = 11 + 31 + 68 + 31;
  const fee = BigInt(rate * vsize);
  const data = {
    payoutId: 'p1',
    satPerVbyte: rate,
    vsize,
    inputs: [{ transferId: 't0', txid: '1'.repeat(64), vout: 0, value: '200000', path: coin.path }],
    outputs: [
      { vout: 0, address: baddress.toBech32(randomBytes(20), 0, 'rb'), value: '100000', withdrawalId: 'w1' },
      { vout: 1, address: wallet.derive(scheme, 1, 1, 1).address, value: String(100_000n - fee), withdrawalId: null },
    ],
  };
  return {
    id: 'p1',
    chainId: 'bitcoin',
    accountId: 'a',
    reservation: 'p1',
    legs: [{ withdrawalId: 'w1', output: 0 }],
    broadcastHeight: 100,
    candidates: [{ txid: 'old', raw: '', fee, data }],
  };
}

test('while the node asks more than payouts.max_fee a Bitcoin payout waits, and coinkeep status names the rate and the ceiling', async (t) => {
  const { rail: r, ceiling } = rail();
  const built = await r.build(noDatabase, {
    accountId: 'a',
    orders: [{ withdrawalId: 'w1', coinId: 'c', address: baddress.toBech32(randomBytes(20), 0, 'rb'), amount: 100_000n }],
    prepared: 80,
  });
  t.deepEqual(built, { payout: null, refused: [] });
  t.like(ceiling.status(), { chain_id: 'bitcoin', quote: '80 sat/vB', ceiling: '50 sat/vB', waiting: ['payouts'] });
});

test('a stuck Bitcoin payout is replaced only once the node asks more than it pays: at that rate, never above the ceiling', async (t) => {
  const { rail: r, ceiling } = rail();
  t.is(await r.replace(noDatabase, stored(10), 10), null, 'the market did not move');
  t.is(await r.replace(noDatabase, stored(10), 8), null, 'the market fell');
  const atQuote = (await r.replace(noDatabase, stored(10), 20))!;
  t.is((atQuote.data as { satPerVbyte: number }).satPerVbyte, 20);
  t.is(Transaction.fromHex(atQuote.raw).getId(), atQuote.txid);
  t.is(ceiling.status(), null);

  const capped = (await r.replace(noDatabase, stored(10), 80))!;
  t.is((capped.data as { satPerVbyte: number }).satPerVbyte, 50, 'at the ceiling, not the quote');
  t.true(capped.fee <= 50n * BigInt((capped.data as { vsize: number }).vsize));
  t.like(ceiling.status(), { quote: '80 sat/vB', ceiling: '50 sat/vB', waiting: ['replacements'] });
  t.is(await r.replace(noDatabase, stored(50), 80), null, 'already at the ceiling: it waits');
});

test("a replacement is priced on what the node's mempool holds of the payout with its descendants (prepare asks for each candidate)", async (t) => {
  const asked: string[] = [];
  const node = {
    ...unused,
    feeQuote: async () => ({ kind: 'btc' as const, satPerVbyte: 20, source: 'node' as const }),
    mempoolFees: async (txid: string) => (asked.push(txid), txid === 'old' ? 1_410n + 4_000n : null),
  };
  const ceiling = feeCeilings([chain], clock).get('bitcoin')!;
  const r = new BtcRail({ chain, signer, addresses: noAllocation, clock }, node, ceiling);
  const payout = stored(10);
  const prepared = await r.prepare(undefined, payout);
  t.deepEqual(asked, ['old']);
  const next = (await r.replace(noDatabase, payout, prepared))!;
  t.is(next.fee, 1_410n + 4_000n + 141n, 'the payout and its child, plus 1 sat/vB over its own size');
  t.is(await r.prepare(), 20, 'a build asks for the rate only');
});
