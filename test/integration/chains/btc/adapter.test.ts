/**
 * The Bitcoin adapter against a real bcoin regtest node: tips, headers and blocks agree with the
 * node; a broadcast transaction is in the mempool with its outputs as transfers and then in its
 * block; bcoin has no fee estimate on regtest, so the configured fallback is used.
 */
import test from 'ava';
import { BtcAdapter } from '../../../../src/chains/btc/btc-adapter';
import type { NormalisedTransfer } from '../../../../src/chains/types';
import { parseConfig } from '../../../../src/config/schema';
import { killAllBcoins, sats, startBcoin } from '../../../helpers/bcoin';
import { btcChain, until } from './btc-fixture';

test.after.always(killAllBcoins);

test('blocks, headers, mempool, broadcast and fee rate, read from bcoin', async (t) => {
  const node = await startBcoin();
  const adapter = new BtcAdapter(parseConfig({ chains: [btcChain(node, { fee_fallback_sat_vb: 3 })] }).chains[0]!);

  const tip = await adapter.tip();
  t.is(tip.height, await node.height());
  t.is(tip.hash, await node.rpc.call<string>('getbestblockhash'));
  const blocks = await adapter.blocks(tip.height - 2, tip.height);
  t.deepEqual(
    blocks.map((b) => b.height),
    [tip.height - 2, tip.height - 1, tip.height],
  );
  t.is(blocks[2]!.hash, tip.hash);
  t.is(blocks[1]!.parentHash, blocks[0]!.hash);
  t.deepEqual(await adapter.header(tip.height), { height: tip.height, hash: tip.hash, parentHash: blocks[1]!.hash });
  t.is((await adapter.header(0)).parentHash, '0'.repeat(64));
  // Block rewards go to the payer: the coinbase output is a transfer like any other.
  t.true(blocks[2]!.transfers.some((x) => x.to === node.payer.address && x.index === 0));

  const [coin] = await node.payer.coins(node.rpc, sats('1'));
  const tx = node.payer.sign(
    [coin!],
    [
      { address: node.payer.address, value: sats('0.25') },
      { address: node.payer.address, value: sats('0.5') },
    ],
  );
  t.is(await adapter.broadcast(tx.toHex()), tx.getId());
  // bcoin answers sendrawtransaction before its mempool has taken the transaction.
  let waiting: NormalisedTransfer[] = [];
  await until(async () => (waiting = (await adapter.mempool()).filter((x) => x.txid === tx.getId())).length > 0, 'the transaction in the mempool');
  // Two payments to one address and the change: three transfers, told apart by vout.
  t.deepEqual(
    waiting.map((x) => [x.index, x.to]),
    [0, 1, 2].map((i) => [i, node.payer.address]),
  );
  t.deepEqual(
    waiting.slice(0, 2).map((x) => x.amount),
    [sats('0.25'), sats('0.5')],
  );

  const [mined] = await node.mine(1);
  t.deepEqual(await adapter.mempool(), []);
  const [block] = await adapter.blocks(tip.height + 1, tip.height + 1);
  t.is(block!.hash, mined);
  t.deepEqual(
    block!.transfers.filter((x) => x.txid === tx.getId()).map((x) => x.index),
    waiting.map((x) => x.index),
  );
  t.deepEqual(await adapter.feeQuote(), { kind: 'btc', satPerVbyte: 3, source: 'fallback' });
});
