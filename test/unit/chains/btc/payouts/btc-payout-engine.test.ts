/**
 * The payout engine's replacement, without a database or a node: the same coins and payments, a
 * higher fee taken from the change, each input signed again and replaceable; refused cleanly when
 * the change cannot pay it.
 */
import { localSigner } from '../../../../helpers/local-signer';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { address as baddress, Transaction } from 'bitcoinjs-lib';
import { btcScheme } from '../../../../../src/chains/btc/derive';
import { parseConfig } from '../../../../../src/config/schema';
import { BtcPayoutEngine, BtcPayoutRefused, RBF_SEQUENCE, type BtcPayout, type BtcPayoutOutput } from '../../../../../src/chains/btc/payouts/btc-payout-engine';
import { FakeClock } from '../../../../../src/shared/clock';
import { silentLogger } from '../../../../../src/shared/logger';
import { HdWallet } from '../../../../../src/wallet/hd';
import { WalletSigner } from '../../../../../src/wallet/signer';
import { TEST_MNEMONIC } from '../../../../helpers/test-mnemonic';
import { NODE_MAX_SAT_PER_VBYTE } from '../../../../../src/chains/btc/payouts/replacement';

const chain = parseConfig({
  chains: [
    {
      id: 'bitcoin',
      kind: 'btc',
      network: 'regtest',
      rpc_url: 'http://127.0.0.1:18443',
      options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a },
    },
  ],
}).chains[0]!;
const walletSigner = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
const signer = localSigner(walletSigner);
const wallet = new HdWallet(walletSigner);
const scheme = btcScheme(chain);
const noAllocation = { allocate: () => Promise.reject(new Error('a replacement issues no address')) };
const engine = new BtcPayoutEngine({ chain, signer, addresses: noAllocation, clock: new FakeClock() });
const elsewhere = (): string => baddress.toBech32(randomBytes(20), 0, 'rb');

function payout(change: bigint, coinValue = 60_000n): BtcPayout {
  const coins = [wallet.derive(scheme, 1, 0), wallet.derive(scheme, 1, 0, 1)].map((o, i) => ({
    transferId: `t${i}`,
    txid: `${i + 1}`.repeat(64),
    vout: i,
    value: coinValue,
    path: o.path,
  }));
  const fee = 2n * coinValue - 100_000n - change;
  const outputs: BtcPayoutOutput[] = [{ vout: 0, address: elsewhere(), value: 100_000n, withdrawalId: 'w1' }];
  if (change > 0n) outputs.push({ vout: 1, address: wallet.derive(scheme, 1, 1, 1).address, value: change, withdrawalId: null });
  const vsize = 11 + 31 + 2 * 68 + (change > 0n ? 31 : 0);
  return { payoutId: 'p1', chainId: 'bitcoin', accountId: 'a', txid: '', raw: '', fee, satPerVbyte: 1, vsize, inputs: coins, outputs };
}

test('a replacement spends the same coins, pays the same withdrawals, and takes its higher fee from the change', async (t) => {
  const first = payout(19_791n);
  const bumped = await engine.replace(first, 10);
  t.is(bumped.payoutId, first.payoutId);
  t.deepEqual(bumped.inputs, first.inputs);
  t.is(bumped.fee, 2_090n);
  t.deepEqual(
    bumped.outputs.map((o) => [o.withdrawalId, o.value]),
    [
      ['w1', 100_000n],
      [null, 120_000n - 100_000n - 2_090n],
    ],
  );
  const tx = Transaction.fromHex(bumped.raw);
  t.is(tx.getId(), bumped.txid);
  t.true(tx.ins.every((i) => i.sequence === RBF_SEQUENCE));
  t.true(tx.virtualSize() <= bumped.vsize);
});

test('a replacement whose change would be dust drops the change output', async (t) => {
  const bumped = await engine.replace(payout(500n), 100);
  t.deepEqual(
    bumped.outputs.map((o) => o.withdrawalId),
    ['w1'],
  );
  t.is(bumped.fee, 20_000n);
  t.is(Transaction.fromHex(bumped.raw).outs.length, 1);
});

test('a payout without change, or whose change cannot pay the bump, is refused for replacement', async (t) => {
  for (const [p, rate] of [
    [payout(0n), 200],
    [payout(19_791n), 1_000],
  ] as const) {
    const err = await t.throwsAsync(engine.replace(p, rate));
    t.true(err instanceof BtcPayoutRefused);
    t.is((err as BtcPayoutRefused).reason, 'replacement_uncovered');
  }
});

test('BIP125 rule 3: a replacement outbids the replaced transaction and the descendants the node holds of it (a payee spending its output), plus the incremental relay fee over its own size', async (t) => {
  const first = payout(19_791n);
  t.is(first.fee, 209n);
  // The node's mempool: the payout (209 sat) and a payee's child paying 5,000 sat.
  const bumped = await engine.replace(first, 10, 209n + 5_000n);
  t.is(bumped.fee, 209n + 5_000n + BigInt(first.vsize) * 1n, 'what is evicted, plus 1 sat/vB over its own size');
  t.true(bumped.fee > 10n * BigInt(first.vsize), 'above what the rate alone asks');
  t.deepEqual(
    bumped.outputs.map((o) => [o.withdrawalId, o.value]),
    [
      ['w1', 100_000n],
      [null, 20_000n - bumped.fee],
    ],
  );
  const cancelled = await engine.replace(first, 10);
  t.is(cancelled.fee, 2_090n, 'without descendants the rate decides, as before');
});

test("nothing is signed above Bitcoin Core's default maxfeerate (0.10 BTC/kvB): a rate above it is held under it; a replacement whose evictions ask more waits", async (t) => {
  const rich = payout(9_000_000n, 5_000_000n);
  const bumped = await engine.replace(rich, 20_000);
  const tx = Transaction.fromHex(bumped.raw);
  t.true(bumped.fee <= BigInt(NODE_MAX_SAT_PER_VBYTE) * BigInt(tx.virtualSize()), `${bumped.fee} sat over ${tx.virtualSize()} vB`);
  const err = await t.throwsAsync(engine.replace(rich, 100, 2_100_000n));
  t.is((err as BtcPayoutRefused).reason, 'above_node_max_fee_rate');
});
