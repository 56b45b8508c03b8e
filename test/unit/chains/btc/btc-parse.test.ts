import test from 'ava';
import { networks, payments, Transaction } from 'bitcoinjs-lib';
import { BtcAdapter } from '../../../../src/chains/btc/btc-adapter';
import { btcNetwork } from '../../../../src/chains/btc/derive';
import { outputAddress, outputScript, parseTransaction } from '../../../../src/chains/btc/parse';
import type { BitcoinRpc } from '../../../../src/chains/btc/rpc';
import { parseConfig } from '../../../../src/config/schema';

const BCOIN = btcNetwork({ network: 'regtest', options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a } });
const hash20 = new Uint8Array(20).fill(7);
const hash32 = new Uint8Array(32).fill(9);

test('standard output scripts read as the address bitcoinjs-lib gives them, with the chain\'s parameters', (t) => {
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

test('an address\'s watch key is the output script paying it, for every standard type; text of another network has none', (t) => {
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

test('the fee rate is the node\'s estimate in sat/vB (Core\'s feerate or bcoin\'s fee), rounded up', async (t) => {
  const core = feeAdapter({ feerate: 0.00012345, blocks: 6 }, { fee_target_blocks: 3 });
  t.deepEqual(await core.adapter.feeRate(), { satPerVbyte: 13, source: 'node' });
  t.deepEqual(core.asked, [[3]]);
  t.deepEqual(await feeAdapter({ fee: 0.00002, blocks: 6 }).adapter.feeRate(), { satPerVbyte: 2, source: 'node' });
});

test('without an estimate from the node the configured fallback rate is used', async (t) => {
  t.deepEqual(await feeAdapter({ fee: -1, blocks: 2 }, { fee_fallback_sat_vb: 4 }).adapter.feeRate(), { satPerVbyte: 4, source: 'fallback' });
  t.deepEqual(await feeAdapter({ errors: ['Insufficient data or no feerate found'], blocks: 0 }).adapter.feeRate(), { satPerVbyte: 10, source: 'fallback' });
});

test('fee options are checked at load', (t) => {
  const load = (options: Record<string, unknown>) => () =>
    parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:1', options }] });
  t.throws(load({ fee_fallback_sat_vb: 0 }), { message: /chains\[0\]\.options\.fee_fallback_sat_vb/ });
  t.throws(load({ fee_target_blocks: 'soon' }), { message: /chains\[0\]\.options\.fee_target_blocks/ });
});
