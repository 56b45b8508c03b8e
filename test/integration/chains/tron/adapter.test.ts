/**
 * The Tron adapter against the node stand-in, and the stand-in against tronweb's own encodings: a
 * transaction's txID is the sha256 of its raw_data protobuf, its signature recovers the payer.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { SigningKey } from 'ethers';
import { TronWeb, utils } from 'tronweb';
import { TronAdapter } from '../../../../src/chains/tron/tron-adapter';
import { parseConfig } from '../../../../src/config/schema';
import { TronNode } from '../../../helpers/tron-node';

const RECIPIENT = TronWeb.address.fromPrivateKey('11'.repeat(32)) as string;

async function setup(extra: Record<string, unknown> = {}) {
  const node = await TronNode.start();
  const chain = parseConfig({
    chains: [
      {
        id: 'tron',
        kind: 'tron',
        full_node_url: node.url,
        confirmations: 19,
        tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }],
        options: { genesis_block_id: node.genesisId },
        ...extra,
      },
    ],
  }).chains[0]!;
  return { node, adapter: new TronAdapter(chain) };
}

test('the stand-in mines transactions in tronweb encodings: txID is sha256 of raw_data_hex, signed by the payer', async (t) => {
  const { node } = await setup();
  t.teardown(() => node.stop());
  const txid = node.pay(RECIPIENT, 'native', 1_500_000n);
  node.mine();
  const tx = node.blocks.at(-1)!.transactions![0]!;
  t.is(tx.txID, txid);
  t.is(createHash('sha256').update(Buffer.from(tx.raw_data_hex, 'hex')).digest('hex'), txid);
  const sig = tx.signature[0]!;
  const pub = SigningKey.recoverPublicKey('0x' + txid, { r: '0x' + sig.slice(0, 64), s: '0x' + sig.slice(64, 128), v: parseInt(sig.slice(128), 16) + 27 });
  t.is(utils.crypto.getBase58CheckAddress(utils.crypto.computeAddress(Buffer.from(pub.slice(2), 'hex'))), node.payer);
  t.is(TronWeb.address.fromHex(String(tx.raw_data.contract[0]!.parameter.value.to_address)), RECIPIENT);
});

test("tip, headers and blocks: TRX transfers and the configured token's Transfer logs, in base58", async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const trx = node.pay(RECIPIENT, 'native', 2_000_000n);
  const usdt = node.pay(RECIPIENT, node.usdt, 7_250_000n);
  node.mine(2);
  const tip = await adapter.tip();
  t.like(tip, { height: 2, hash: node.blocks[2]!.blockID });
  t.deepEqual(await adapter.header(1), { height: 1, hash: node.blocks[1]!.blockID, parentHash: node.blocks[0]!.blockID });
  const blocks = await adapter.blocks(0, 2);
  t.deepEqual(
    blocks.map((b) => b.height),
    [0, 1, 2],
  );
  t.deepEqual(blocks[1]!.transfers, [
    { asset: 'native', to: RECIPIENT, amount: 2_000_000n, txid: trx, index: 0 },
    { asset: node.usdt, to: RECIPIENT, amount: 7_250_000n, txid: usdt, index: 0 },
  ]);
  t.deepEqual(blocks[2]!.transfers, []);
  t.is(node.tokenBalance(RECIPIENT), 7_250_000n);
});

test('a TRC-20 call that reverted is mined but yields no transfer', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  node.pay(RECIPIENT, node.usdt, 5_000_000n, { revert: true });
  node.mine();
  const [block] = await adapter.blocks(1, 1);
  t.is(node.blocks[1]!.transactions!.length, 1);
  t.deepEqual(block!.transfers, []);
  t.is(node.tokenBalance(RECIPIENT), 0n);
});

test('after a reorganisation the adapter reads the new branch', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  node.pay(RECIPIENT, 'native', 1_000_000n);
  node.mine(2);
  const old = await adapter.header(1);
  node.reorg(2);
  node.mine(3);
  const now = await adapter.header(1);
  t.not(now.hash, old.hash);
  t.is(now.parentHash, node.blocks[0]!.blockID);
  t.deepEqual(
    (await adapter.blocks(1, 3)).flatMap((b) => b.transfers),
    [],
  );
});

test("a hosted node's API key travels in the TRON-PRO-API-KEY header; without it the node refuses", async (t) => {
  const { node, adapter } = await setup({ api_key: 'k-123' });
  t.teardown(() => node.stop());
  node.requireApiKey('k-123');
  t.is((await adapter.tip()).height, 0);
  t.true(node.requests.every((r) => r.apiKey === 'k-123'));
  const { adapter: keyless } = {
    adapter: new TronAdapter(
      parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: node.url, options: { genesis_block_id: node.genesisId } }] }).chains[0]!,
    ),
  };
  const err = await t.throwsAsync(keyless.tip());
  t.is(err?.message, 'tron node getnowblock: HTTP 401');
});

test('an unreachable node fails with the endpoint and the reason, not its URL', async (t) => {
  const { node, adapter } = await setup();
  await node.stop();
  const err = await t.throwsAsync(adapter.tip());
  t.regex(err!.message, /^tron node getnowblock: unreachable/);
  t.false(err!.message.includes(String(node.port)));
});

test("an amount no real transfer can have is the node's fault: a negative TRX amount, a token value of 2^128 or more", async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  node.pay(RECIPIENT, 'native', 1_000_000n);
  node.mine();
  node.blocks[1]!.transactions![0]!.raw_data.contract[0]!.parameter.value.amount = -5;
  await t.throwsAsync(adapter.blocks(1, 1), { name: 'NodeFault', message: /^tron node: transaction \w+ has the amount -5$/ });
  const txid = node.pay(RECIPIENT, node.usdt, 1n);
  node.mine();
  node.info(txid).log![0]!.data = (2n ** 128n + 1n).toString(16).padStart(64, '0');
  await t.throwsAsync(adapter.blocks(2, 2), { name: 'NodeFault', message: /has the impossible value/ });
});

test('a Transfer log of a contract not configured, or of a call that failed, credits nothing', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const good = node.pay(RECIPIENT, node.usdt, 1n);
  const failed = node.pay(RECIPIENT, node.usdt, 1n, { revert: true });
  node.mine();
  const log = node.info(good).log![0]!;
  node.info(failed).log = [{ ...log }];
  log.address = TronWeb.address.toHex(TronWeb.address.fromPrivateKey('33'.repeat(32)) as string).slice(2);
  t.deepEqual((await adapter.blocks(1, 1))[0]!.transfers, []);
});

test("a node whose genesis block is not the configured network's is the node's fault, at every tip: mainnet by default, nile or shasta by name, or the genesis_block_id given", async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  const adapterOn = (extra: Record<string, unknown>) =>
    new TronAdapter(parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: node.url, ...extra }] }).chains[0]!);
  await t.throwsAsync(adapterOn({}).tip(), { name: 'NodeFault', message: `tron node's genesis block is ${node.genesisId}, the config says mainnet` });
  await t.throwsAsync(adapterOn({ network: 'nile' }).tip(), {
    name: 'NodeFault',
    message: `tron node's genesis block is ${node.genesisId}, the config says nile`,
  });
  const other = '00'.repeat(8) + 'ab'.repeat(24);
  await t.throwsAsync(adapterOn({ options: { genesis_block_id: other } }).tip(), {
    message: `tron node's genesis block is ${node.genesisId}, the config says genesis block ${other}`,
  });
  const right = adapterOn({ options: { genesis_block_id: node.genesisId } });
  t.is((await right.tip()).hash, node.blocks.at(-1)!.blockID);
  t.deepEqual(
    node.requests
      .slice(-2)
      .map((r) => r.path)
      .sort(),
    ['/wallet/getblockbynum', '/wallet/getnowblock'],
  );
  t.throws(() => parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: node.url, network: 'testnet' }] }), {
    message: 'chains[0].network: must be one of mainnet, nile, shasta',
  });
  t.throws(() => parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: node.url, options: { genesis_block_id: 'xyz' } }] }), {
    message: /chains\[0\]\.options\.genesis_block_id: must be 64 lower-case hex digits/,
  });
});
