/**
 * The Bitcoin adapter's send half against a real bcoin regtest node: a fee quote and a broadcast
 * (again is harmless); what Bitcoin Core's answers to a broadcast mean is a unit test
 * (test/unit/chains/broadcast-answers), bcoin relays without answering.
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

test('a broadcast transaction reaches the mempool and is mined; sending it again is harmless', async (t) => {
  const node = await startBcoin();
  const adapter = new BtcAdapter(parseConfig({ chains: [btcChain(node, { fee_fallback_sat_vb: 3 })] }).chains[0]!);
  t.deepEqual(await adapter.feeQuote(), { kind: 'btc', satPerVbyte: 3, source: 'fallback' });

  const [coin] = await node.payer.coins(node.rpc, sats('1'));
  const sent = node.payer.sign([coin!], [{ address: node.payer.address, value: sats('0.3') }]);
  t.is(await adapter.broadcast(sent.toHex()), sent.getId());
  await until(async () => (await node.mempool()).includes(sent.getId()), 'the transaction in the mempool');
  t.is(await adapter.broadcast(sent.toHex()), sent.getId());
  await node.mine(1);
  const height = await node.height();
  t.true((await adapter.blocks(height, height))[0]!.spends!.some((s) => s.txid === sent.getId()));
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
  await until(async () => (await node.mempool()).includes(sent.txid), 'the spend in the mempool');
  await node.mine(1);
  const block = (await adapter.blocks(height + 1, height + 1))[0]!;
  t.deepEqual(
    block.spends!.filter((s) => s.txid === sent.txid),
    [{ txid: sent.txid, outpoint: { txid: paid.txid, index: paid.index } }],
  );
});
