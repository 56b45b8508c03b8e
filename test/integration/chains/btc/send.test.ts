/**
 * The Bitcoin adapter's send half against a real bcoin regtest node: a fee quote, a broadcast, and
 * the status of a sent transaction from unknown to the mempool to mined, while another transaction
 * spending the same coin is conflicted once the first is mined.
 */
import test from 'ava';
import { BtcAdapter } from '../../../../src/chains/btc/btc-adapter';
import { btcScheme } from '../../../../src/chains/btc/derive';
import { parseConfig } from '../../../../src/config/schema';
import { silentLogger } from '../../../../src/shared/logger';
import { HdWallet } from '../../../../src/wallet/hd';
import { WalletSigner } from '../../../../src/wallet/signer';
import { TEST_MNEMONIC } from '../../../helpers/daemon';
import { killAllBcoins, sats, startBcoin } from '../../../helpers/bcoin';
import { btcChain, until } from './btc-fixture';

test.after.always(killAllBcoins);

test('a sent transaction is unknown, then in the mempool, then mined at its height; a double spend of its coin is conflicted', async (t) => {
  const node = await startBcoin();
  const adapter = new BtcAdapter(parseConfig({ chains: [btcChain(node, { fee_fallback_sat_vb: 3 })] }).chains[0]!);
  t.deepEqual(await adapter.feeQuote(), { kind: 'btc', satPerVbyte: 3, source: 'fallback' });

  const [coin] = await node.payer.coins(node.rpc, sats('1'));
  const sent = node.payer.sign([coin!], [{ address: node.payer.address, value: sats('0.3') }]);
  const rival = node.payer.sign([coin!], [{ address: node.payer.address, value: sats('0.4') }]);
  const a = { txid: sent.getId(), raw: sent.toHex() };
  const b = { txid: rival.getId(), raw: rival.toHex() };
  t.deepEqual(await adapter.sentStatus(a), { state: 'unknown' });

  t.is(await adapter.broadcast(a.raw), a.txid);
  await until(async () => (await adapter.sentStatus(a)).state === 'mempool', 'the transaction in the mempool');
  // bcoin's gettxout does not count spends in its mempool (Core's does): the rival is not known yet.
  t.deepEqual(await adapter.sentStatus(b), { state: 'unknown' });
  // Sending it again is harmless.
  t.is(await adapter.broadcast(a.raw), a.txid);

  const [hash] = await node.mine(1);
  const height = await node.height();
  t.deepEqual(await adapter.sentStatus(a), { state: 'mined', height, blockHash: hash!, succeeded: true });
  t.deepEqual(await adapter.sentStatus(b), { state: 'conflicted' });
  await node.mine(2);
  t.deepEqual(await adapter.sentStatus(a), { state: 'mined', height, blockHash: hash!, succeeded: true });
});

test('a spend of a coin paid to a wallet address, signed by the signer, is accepted by bcoin and mined; its block lists the outpoint it spends', async (t) => {
  const node = await startBcoin();
  const chain = parseConfig({ chains: [btcChain(node)] }).chains[0]!;
  const adapter = new BtcAdapter(chain);
  const signer = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
  const owner = new HdWallet(signer).derive(btcScheme(chain), 0, 3);
  await node.pay([{ address: owner.address, value: sats('0.5') }]);
  await node.mine(1);
  const height = await node.height();
  const paid = (await adapter.blocks(height, height))[0]!.transfers.find((x) => x.to === owner.address)!;

  const sent = signer.signBitcoin({
    chain,
    coins: [{ txid: paid.txid, vout: paid.index, value: paid.amount, path: owner.path }],
    outputs: [{ address: node.payer.address, value: paid.amount - 2_000n }],
  });
  t.is(await adapter.broadcast(sent.raw), sent.txid);
  await until(async () => (await adapter.sentStatus(sent)).state === 'mempool', 'the spend in the mempool');
  const [hash] = await node.mine(1);
  t.deepEqual(await adapter.sentStatus(sent), { state: 'mined', height: height + 1, blockHash: hash!, succeeded: true });
  const block = (await adapter.blocks(height + 1, height + 1))[0]!;
  t.deepEqual(
    block.spends!.filter((s) => s.txid === sent.txid),
    [{ txid: sent.txid, outpoint: { txid: paid.txid, index: paid.index } }],
  );
});
