import test from 'ava';
import { Block, networks, payments, Transaction } from 'bitcoinjs-lib';
import { BtcAdapter } from '../../../../src/chains/btc/btc-adapter';
import { btcNetwork } from '../../../../src/chains/btc/derive';
import { MAX_SATOSHI, outputAddress, outputScript, parseBlock, parseTransaction } from '../../../../src/chains/btc/parse';
import { NodeFault } from '../../../../src/chains/types';
import type { BitcoinRpc } from '../../../../src/chains/btc/rpc';
import { parseConfig } from '../../../../src/config/schema';

const BCOIN = btcNetwork({ network: 'regtest', options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a } });
const hash20 = new Uint8Array(20).fill(7);
const hash32 = new Uint8Array(32).fill(9);

test("standard output scripts read as the address bitcoinjs-lib gives them, with the chain's parameters", (t) => {
  for (const network of [networks.bitcoin, networks.regtest, BCOIN]) {
    const scripts = [
      payments.p2wpkh({ hash: hash20, network }),
      payments.p2wsh({ hash: hash32, network }),
      payments.p2pkh({ hash: hash20, network }),
      payments.p2sh({ hash: hash20, network }),
    ];
    for (const p of scripts) t.is(outputAddress(p.output!, network), p.address!);
    const taproot = Uint8Array.from([0x51, 32, ...hash32]);
    t.is(outputAddress(taproot, network)!.slice(0, network.bech32.length + 2), `${network.bech32}1p`);
  }
  t.true(outputAddress(payments.p2wpkh({ hash: hash20, network: BCOIN }).output!, BCOIN)!.startsWith('rb1q'));
});

test("an address's watch key is the output script paying it, for every standard type; text of another network has none", (t) => {
  for (const network of [networks.bitcoin, networks.regtest, BCOIN]) {
    const taproot = Uint8Array.from([0x51, 32, ...hash32]);
    const scripts = [
      payments.p2wpkh({ hash: hash20, network }).output!,
      payments.p2wsh({ hash: hash32, network }).output!,
      payments.p2pkh({ hash: hash20, network }).output!,
      payments.p2sh({ hash: hash20, network }).output!,
      taproot,
    ];
    for (const script of scripts) t.deepEqual(outputScript(outputAddress(script, network)!, network), Uint8Array.from(script));
  }
  t.is(outputScript(payments.p2wpkh({ hash: hash20, network: BCOIN }).address!, networks.bitcoin), null);
  t.is(outputScript('not an address', BCOIN), null);
});

test('parsed transfers carry their output script as watch key and build the address only when read', (t) => {
  const to = payments.p2wpkh({ hash: hash20, network: BCOIN });
  const tx = new Transaction();
  tx.addInput(new Uint8Array(32), 0);
  tx.addOutput(to.output!, 1500n);
  const [transfer] = parseTransaction(tx.toHex(), BCOIN).transfers;
  t.deepEqual(Uint8Array.from(transfer!.watchKey!), outputScript(to.address!, BCOIN));
  t.is(transfer!.to, to.address!);
});

test('outputs without an address (OP_RETURN, bare scripts) and empty outputs are not transfers', (t) => {
  t.is(outputAddress(payments.embed({ data: [new Uint8Array([1, 2, 3])] }).output!, networks.bitcoin), null);
  t.is(outputAddress(Uint8Array.from([0x51]), networks.bitcoin), null);
  const tx = new Transaction();
  tx.addInput(new Uint8Array(32), 0);
  tx.addOutput(payments.embed({ data: [new Uint8Array([1])] }).output!, 0n);
  tx.addOutput(payments.p2wpkh({ hash: hash20, network: BCOIN }).output!, 0n);
  t.deepEqual(parseTransaction(tx.toHex(), BCOIN).transfers, []);
});

test('two outputs to one address in one transaction are two transfers, told apart by vout', (t) => {
  const to = payments.p2wpkh({ hash: hash20, network: BCOIN });
  const tx = new Transaction();
  tx.addInput(new Uint8Array(32), 0);
  tx.addOutput(to.output!, 1500n);
  tx.addOutput(payments.p2wpkh({ hash: new Uint8Array(20), network: BCOIN }).output!, 1n);
  tx.addOutput(to.output!, 2500n);
  const { txid, transfers } = parseTransaction(tx.toHex(), BCOIN);
  t.is(txid, tx.getId());
  t.deepEqual(
    transfers.filter((x) => x.to === to.address).map((x) => [x.index, x.amount]),
    [
      [0, 1500n],
      [2, 2500n],
    ],
  );
});

const feeAdapter = (answer: unknown, options: Record<string, unknown> = {}) => {
  const chain = parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:1', options }] }).chains[0]!;
  const asked: unknown[][] = [];
  const rpc = { call: async (_method: string, params: unknown[]) => (asked.push(params), answer) } as unknown as BitcoinRpc;
  return { adapter: new BtcAdapter(chain, rpc), asked };
};

test("the fee rate is the node's estimate in sat/vB (Core's feerate or bcoin's fee), rounded up", async (t) => {
  const core = feeAdapter({ feerate: 0.00012345, blocks: 6 }, { fee_target_blocks: 3 });
  t.deepEqual(await core.adapter.feeQuote(), { kind: 'btc', satPerVbyte: 13, source: 'node' });
  t.deepEqual(core.asked, [[3]]);
  t.deepEqual(await feeAdapter({ fee: 0.00002, blocks: 6 }).adapter.feeQuote(), { kind: 'btc', satPerVbyte: 2, source: 'node' });
});

test('without an estimate from the node the configured fallback rate is used', async (t) => {
  t.deepEqual(await feeAdapter({ fee: -1, blocks: 2 }, { fee_fallback_sat_vb: 4 }).adapter.feeQuote(), { kind: 'btc', satPerVbyte: 4, source: 'fallback' });
  t.deepEqual(await feeAdapter({ errors: ['Insufficient data or no feerate found'], blocks: 0 }).adapter.feeQuote(), {
    kind: 'btc',
    satPerVbyte: 10,
    source: 'fallback',
  });
});

test('fee options are checked at load', (t) => {
  const load = (options: Record<string, unknown>) => () =>
    parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:1', options }] });
  t.throws(load({ fee_fallback_sat_vb: 0 }), { message: /chains\[0\]\.options\.fee_fallback_sat_vb/ });
  t.throws(load({ fee_target_blocks: 'soon' }), { message: /chains\[0\]\.options\.fee_target_blocks/ });
  t.throws(load({ fee_fallback_sat_vb: 20, fee_max_sat_vb: 19 }), { message: /chains\[0\]\.options\.fee_max_sat_vb/ }, 'a ceiling under the fallback');
  t.is(load({})().chains[0]!.payouts.max_fee, 500n);
  t.is(load({ fee_max_sat_vb: 50 })().chains[0]!.payouts.max_fee, 50n);
});

/** A transaction paying 1 sat to a P2WPKH script, its output value then overwritten with `value` (int64 LE) as a node could send it. */
function withOutputValue(value: bigint): string {
  const tx = new Transaction();
  tx.addInput(new Uint8Array(32).fill(1), 0);
  tx.addOutput(payments.p2wpkh({ hash: hash20, network: BCOIN }).output!, 1n);
  const bytes = Buffer.from(tx.toBuffer());
  // version (4), one input (1 + 32 + 4 + 1 + 4), one output (1): its value follows.
  bytes.writeBigInt64LE(value, 47);
  return bytes.toString('hex');
}

test('an output of a negative value or of more than 21 million BTC is a node fault, never a transfer', (t) => {
  t.is(parseTransaction(withOutputValue(MAX_SATOSHI), BCOIN).transfers[0]!.amount, MAX_SATOSHI);
  for (const value of [-1n, MAX_SATOSHI + 1n, 2n ** 62n])
    t.throws(() => parseTransaction(withOutputValue(value), BCOIN), { instanceOf: NodeFault, message: /impossible value/ }, String(value));
});

test('a block lists one spend per input of its transactions (the outpoint spent), none for the coinbase', (t) => {
  const coinbase = new Transaction();
  coinbase.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, Uint8Array.from([1, 5]));
  coinbase.addOutput(payments.p2wpkh({ hash: hash20, network: BCOIN }).output!, 50n);
  const spender = new Transaction();
  spender.addInput(new Uint8Array(32).fill(0xaa), 3);
  spender.addInput(new Uint8Array(32).fill(0xbb), 0);
  spender.addOutput(payments.p2wpkh({ hash: hash20, network: BCOIN }).output!, 10n);
  const block = new Block();
  block.version = 4;
  block.prevHash = new Uint8Array(32).fill(2);
  block.timestamp = 1_700_000_000;
  block.bits = 0x207fffff;
  block.nonce = 0;
  block.transactions = [coinbase, spender];
  block.merkleRoot = Block.calculateMerkleRoot(block.transactions);
  const parsed = parseBlock(block.toHex(), 7, BCOIN);
  t.deepEqual(parsed.spends, [
    { txid: spender.getId(), outpoint: { txid: 'aa'.repeat(32), index: 3 } },
    { txid: spender.getId(), outpoint: { txid: 'bb'.repeat(32), index: 0 } },
  ]);
});
