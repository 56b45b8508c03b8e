/**
 * The send half of the Tron adapter against the node stand-in: a transaction signed offline
 * (tronweb's encoding, the payer's key) is broadcast as hex, waits in the pending pool, is mined;
 * a TRC-20 call that fails is mined with `succeeded` false; the node refuses a bad signature, an
 * expired transaction and one whose reference block is not on its chain.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { TronWeb } from 'tronweb';
import { TronAdapter } from '../../../../src/chains/tron/tron-adapter';
import { parseConfig } from '../../../../src/config/schema';
import { ENERGY_TO_HOLDER, ENERGY_TO_NEW_HOLDER, signTronTransaction, SUN_PER_ENERGY, TronNode } from '../../../helpers/tron-node';

const RECIPIENT = TronWeb.address.fromPrivateKey('22'.repeat(32)) as string;

async function setup() {
  const node = await TronNode.start();
  node.mine(2);
  const adapter = new TronAdapter(
    parseConfig({
      chains: [
        {
          id: 'tron',
          kind: 'tron',
          full_node_url: node.url,
          tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }],
          options: { genesis_block_id: node.genesisId },
        },
      ],
    }).chains[0]!,
  );
  return { node, adapter };
}

/** A TRX transfer from the payer, signed with `key` (the payer's unless told). */
function trxTransfer(node: TronNode, amount: number, opts: { key?: string; expiration?: number; refHash?: string } = {}) {
  const head = node.head();
  const raw = {
    contract: [
      {
        parameter: {
          value: { amount, owner_address: TronWeb.address.toHex(node.payer), to_address: TronWeb.address.toHex(RECIPIENT) },
          type_url: 'type.googleapis.com/protocol.TransferContract',
        },
        type: 'TransferContract',
      },
    ],
    ref_block_bytes: head.ref_block_bytes,
    ref_block_hash: opts.refHash ?? head.ref_block_hash,
    expiration: opts.expiration ?? head.timestamp + 60_000,
    timestamp: head.timestamp,
  };
  return signTronTransaction(raw, opts.key ?? node.payerKey);
}

test('a signed TRX transfer broadcast as hex waits in the pending pool, then is mined; broadcasting it again is harmless', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const tx = trxTransfer(node, 3_000_000);
  t.is(await adapter.broadcast(tx.hex), tx.txID);
  t.is(await adapter.broadcast(tx.hex), tx.txID);
  t.deepEqual(await adapter.sentStatus({ txid: tx.txID, raw: tx.hex }), { state: 'mempool' });
  node.mine();
  t.deepEqual(await adapter.sentStatus({ txid: tx.txID, raw: tx.hex }), {
    state: 'mined',
    height: node.height,
    blockHash: node.blocks.at(-1)!.blockID,
    succeeded: true,
  });
  t.is(node.trxBalance(RECIPIENT), 3_000_000n);
  t.deepEqual((await adapter.blocks(node.height, node.height))[0]!.transfers, [
    { asset: 'native', to: RECIPIENT, amount: 3_000_000n, txid: tx.txID, index: 0 },
  ]);
});

test('a TRC-20 call that reverted is mined with succeeded false', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const txid = node.pay(RECIPIENT, node.usdt, 1n, { revert: true });
  node.mine();
  t.like(await adapter.sentStatus({ txid, raw: '' }), { state: 'mined', succeeded: false });
});

test('the node refuses a transaction signed by another key, an expired one and one on an unknown reference block; none is known after', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const cases = [
    [trxTransfer(node, 1_000_000, { key: randomBytes(32).toString('hex') }), /^tron node broadcasthex: SIGERROR validate signature error/],
    [trxTransfer(node, 1_000_000, { expiration: node.head().timestamp - 1 }), /^tron node broadcasthex: TRANSACTION_EXPIRATION_ERROR/],
    [trxTransfer(node, 1_000_000, { refHash: '00'.repeat(8) }), /^tron node broadcasthex: TAPOS_ERROR/],
  ] as const;
  for (const [tx, message] of cases) {
    await t.throwsAsync(adapter.broadcast(tx.hex), { message });
    t.deepEqual(await adapter.sentStatus({ txid: tx.txID, raw: tx.hex }), { state: 'unknown' });
  }
  node.mine();
  t.is(node.trxBalance(RECIPIENT), 0n);
});

test("the fee quote is the chain's prices of energy and bandwidth in sun", async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  t.deepEqual(await adapter.feeQuote(), { kind: 'tron', sunPerEnergy: 420n, sunPerBandwidth: 1000n });
});

test("estimateTransfer: a USDT transfer's energy from the node's dry run (about twice to a new holder), burnt as TRX unless staked energy covers it, with a fee_limit 20% above its whole energy", async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const holder = TronWeb.address.fromPrivateKey('33'.repeat(32)) as string;
  const plan = { from: node.payer, to: holder, asset: node.usdt, amount: 5n };
  const first = await adapter.estimateTransfer(plan);
  t.like(first, {
    kind: 'tron',
    energy: ENERGY_TO_NEW_HOLDER,
    activationSun: 0n,
    feeLimit: (BigInt(ENERGY_TO_NEW_HOLDER * SUN_PER_ENERGY) * 120n + 99n) / 100n,
  });
  t.is(first.burnSun, BigInt(ENERGY_TO_NEW_HOLDER * SUN_PER_ENERGY), 'bandwidth from the free allowance, energy burnt');
  t.true(node.requests.some((r) => r.path === '/wallet/triggerconstantcontract'));

  // Sent with that fee_limit, it is mined and burns exactly what the estimate reserved.
  const before = node.trxBalance(node.payer);
  const txid = node.pay(holder, node.usdt, 5n);
  node.mine();
  t.is(before - node.trxBalance(node.payer), first.burnSun);
  t.true(BigInt(node.info(txid).fee!) <= first.feeLimit);
  t.true(node.blocks.at(-1)!.transactions![0]!.raw_data_hex.length / 2 + 65 + 64 <= first.bandwidth, 'the bandwidth bound holds');

  const second = await adapter.estimateTransfer(plan);
  t.is(second.energy, ENERGY_TO_HOLDER);

  // Staked energy covers the energy; the day's 600 free bytes are spent by the two transactions above, so its bytes burn.
  const tw = new TronWeb({ fullHost: node.url, privateKey: node.payerKey });
  await tw.trx.sendRawTransaction((await tw.trx.sign(await tw.transactionBuilder.freezeBalanceV2(10_000_000_000, 'ENERGY', node.payer))) as never);
  node.mine();
  t.like(await adapter.estimateTransfer(plan), { energy: ENERGY_TO_HOLDER, bandwidth: 350, burnSun: 350n * 1000n });

  // A transfer the sender cannot make is refused, not estimated.
  await t.throwsAsync(adapter.estimateTransfer({ ...plan, from: holder, amount: 10n ** 12n }), {
    message: /^tron node triggerconstantcontract: the transfer would fail REVERT opcode executed$/,
  });
});

test('estimateTransfer: a TRX payment to a never-used address pays its activation (1 TRX, plus 0.1 TRX of bandwidth without staked bandwidth); to an account, only bandwidth', async (t) => {
  const { node, adapter } = await setup();
  t.teardown(() => node.stop());
  const fresh = TronWeb.address.fromPrivateKey('44'.repeat(32)) as string;
  const plan = { from: node.payer, to: fresh, asset: 'native', amount: 2_000_000n };
  t.deepEqual(await adapter.estimateTransfer(plan), { kind: 'tron', energy: 0, bandwidth: 270, activationSun: 1_100_000n, burnSun: 1_100_000n, feeLimit: 0n });
  const before = node.trxBalance(node.payer);
  node.pay(fresh, 'native', 2_000_000n);
  node.mine();
  t.is(before - node.trxBalance(node.payer), 2_000_000n + 1_100_000n, 'the estimate is what the chain took');
  t.like(await adapter.estimateTransfer(plan), { activationSun: 0n, burnSun: 0n });
});
