/**
 * The payout engine's replacement, without a database or a node: the same coins and payments, a
 * higher fee taken from the change, each input signed again and replaceable; refused cleanly when
 * the change cannot pay it.
 */
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

const chain = parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443', options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a } }] }).chains[0]!;
const signer = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
const wallet = new HdWallet(signer);
const scheme = btcScheme(chain);
const noAllocation = { allocate: () => Promise.reject(new Error('a replacement issues no address')) };
const engine = new BtcPayoutEngine({ chain, signer, addresses: noAllocation, clock: new FakeClock() });
const elsewhere = (): string => baddress.toBech32(randomBytes(20), 0, 'rb');

function payout(change: bigint): BtcPayout {
  const coins = [wallet.derive(scheme, 1, 0), wallet.derive(scheme, 1, 0, 1)].map((o, i) => ({ transferId: `t${i}`, txid: `${i + 1}`.repeat(64), vout: i, value: 60_000n, path: o.path }));
  const fee = 120_000n - 100_000n - change;
  const outputs: BtcPayoutOutput[] = [{ vout: 0, address: elsewhere(), value: 100_000n, withdrawalId: 'w1' }];
  if (change > 0n) outputs.push({ vout: 1, address: wallet.derive(scheme, 1, 1, 1).address, value: change, withdrawalId: null });
  const vsize = 11 + 31 + 2 * 68 + (change > 0n ? 31 : 0);
  return { payoutId: 'p1', chainId: 'bitcoin', accountId: 'a', txid: '', raw: '', fee, satPerVbyte: 1, vsize, inputs: coins, outputs };
}

test('a replacement spends the same coins, pays the same withdrawals, and takes its higher fee from the change', (t) => {
  const first = payout(19_791n);
  const bumped = engine.replace(first, 10);
  t.is(bumped.payoutId, first.payoutId);
  t.deepEqual(bumped.inputs, first.inputs);
  t.is(bumped.fee, 2_090n);
  t.deepEqual(bumped.outputs.map((o) => [o.withdrawalId, o.value]), [['w1', 100_000n], [null, 120_000n - 100_000n - 2_090n]]);
  const tx = Transaction.fromHex(bumped.raw);
  t.is(tx.getId(), bumped.txid);
  t.true(tx.ins.every((i) => i.sequence === RBF_SEQUENCE));
  t.true(tx.virtualSize() <= bumped.vsize);
});

test('a replacement whose change would be dust drops the change output', (t) => {
  const bumped = engine.replace(payout(500n), 100);
  t.deepEqual(bumped.outputs.map((o) => o.withdrawalId), ['w1']);
  t.is(bumped.fee, 20_000n);
  t.is(Transaction.fromHex(bumped.raw).outs.length, 1);
});

test('a payout without change, or whose change cannot pay the bump, is refused for replacement', (t) => {
  for (const [p, rate] of [[payout(0n), 200], [payout(19_791n), 1_000]] as const) {
    const err = t.throws(() => engine.replace(p, rate));
    t.true(err instanceof BtcPayoutRefused);
    t.is((err as BtcPayoutRefused).reason, 'replacement_uncovered');
  }
});
