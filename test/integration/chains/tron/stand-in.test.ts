/**
 * The Tron node stand-in against tronweb's own encodings and client: tronweb builds, checks
 * (txCheck: the node's raw_data_hex and txID against its own protobuf encoding of raw_data),
 * signs and broadcasts through the stand-in as it would through java-tron. Account resources per
 * Stake 2.0: bandwidth (staked, free, burnt), energy of a TRC-20 transfer (about twice to a
 * recipient holding none of the token), TRX burnt when energy is short, fee_limit, activation of a
 * never-used address, freezing, unfreezing, delegating and undelegating; a reorg restores them.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { TronWeb, utils } from 'tronweb';
import {
  CREATE_ACCOUNT_BANDWIDTH_FEE,
  CREATE_ACCOUNT_FEE,
  ENERGY_TO_HOLDER,
  ENERGY_TO_NEW_HOLDER,
  signTronTransaction,
  SUN_PER_ENERGY,
  TronNode,
  type TronTx,
} from '../../../helpers/tron-node';

const TRX = 1_000_000;

/** A tronweb client of the stand-in that signs as `key`. */
const client = (node: TronNode, key: string) => new TronWeb({ fullHost: node.url, privateKey: key });

/** A fresh key and its address. */
function account(): { key: string; address: string } {
  const key = randomBytes(32).toString('hex');
  return { key, address: TronWeb.address.fromPrivateKey(key) as string };
}

async function start() {
  const node = await TronNode.start();
  node.mine(2);
  return node;
}

/** Signs with tronweb (after its txCheck of what the node built) and broadcasts; returns the node's answer. */
async function signAndSend(
  tw: TronWeb,
  tx: unknown,
): Promise<{ result?: boolean; code?: string; txid?: string; message?: string; transaction: { txID: string } }> {
  const signed = await tw.trx.sign(tx as never);
  return (await tw.trx.sendRawTransaction(signed as never)) as never;
}

/** Activates `address` by a TRX payment from the payer, mined. */
function fund(node: TronNode, address: string, sun: number): void {
  node.pay(address, 'native', BigInt(sun));
  node.mine();
}

async function post(node: TronNode, endpoint: string, body: unknown): Promise<Record<string, any>> {
  return (await (await fetch(`${node.url}/wallet/${endpoint}`, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<string, any>;
}

test('tronweb reads blocks and builds TRX transfers against the stand-in; a TRX payment to a never-used address creates its account for 1 TRX + 0.1 TRX of bandwidth', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const tw = client(node, node.payerKey);
  const block = (await tw.trx.getCurrentBlock()) as { blockID: string; block_header: { raw_data: { number: number } } };
  t.is(block.blockID, node.blocks.at(-1)!.blockID);
  t.is(block.block_header.raw_data.number, node.height);

  const fresh = account();
  t.deepEqual(await post(node, 'getaccount', { address: TronWeb.address.toHex(fresh.address) }), {}, 'a never-used address has no account');
  t.deepEqual(await tw.trx.getAccountResources(fresh.address), {});
  const before = node.trxBalance(node.payer);
  const tx = await tw.transactionBuilder.sendTrx(fresh.address, 5 * TRX, node.payer);
  const sent = await signAndSend(tw, tx);
  t.like(sent, { result: true, txid: (tx as { txID: string }).txID });
  node.mine();
  t.is(node.trxBalance(fresh.address), BigInt(5 * TRX));
  t.is(before - node.trxBalance(node.payer), BigInt(5 * TRX + CREATE_ACCOUNT_FEE + CREATE_ACCOUNT_BANDWIDTH_FEE));
  const info = (await tw.trx.getTransactionInfo(sent.txid!)) as { fee: number; receipt: { net_fee: number } };
  t.like(info, { fee: CREATE_ACCOUNT_FEE + CREATE_ACCOUNT_BANDWIDTH_FEE, receipt: { net_fee: CREATE_ACCOUNT_BANDWIDTH_FEE } });
  const acc = (await tw.trx.getAccount(fresh.address)) as { address: string; balance: number };
  t.like(acc, { address: TronWeb.address.toHex(fresh.address).toLowerCase(), balance: 5 * TRX });
  t.like(await tw.trx.getAccountResources(fresh.address), { freeNetLimit: 600, TotalEnergyLimit: 180_000_000_000 });

  // The second payment to the now existing account pays only bandwidth, from the payer's free 600 bytes.
  const again = await signAndSend(tw, await tw.transactionBuilder.sendTrx(fresh.address, TRX, node.payer));
  node.mine();
  const second = (await tw.trx.getTransactionInfo(again.txid!)) as { fee?: number; receipt: { net_usage: number } };
  t.is(second.fee, undefined);
  t.true(second.receipt.net_usage > 200 && second.receipt.net_usage < 300);
});

test("the builder endpoints answer transactions that match tronweb's own encoding (txCheck), for every Stake 2.0 contract", async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const other = account();
  fund(node, other.address, 2 * TRX);
  const owner = TronWeb.address.toHex(node.payer);
  const receiver = TronWeb.address.toHex(other.address);
  const built = [
    await post(node, 'createtransaction', { owner_address: owner, to_address: receiver, amount: 7 }),
    await post(node, 'freezebalancev2', { owner_address: owner, frozen_balance: 10 * TRX, resource: 'ENERGY' }),
    await post(node, 'freezebalancev2', { owner_address: owner, frozen_balance: 10 * TRX }),
  ];
  for (const tx of built) {
    t.true(utils.transaction.txCheck(tx), JSON.stringify(tx.raw_data.contract[0].type));
    t.is(tx.raw_data.ref_block_hash, node.blocks.at(-1)!.blockID.slice(16, 32));
  }
  // A delegation beyond the stake, and an undelegation of nothing, do not validate.
  t.regex(
    (await post(node, 'delegateresource', { owner_address: owner, receiver_address: receiver, balance: 5 * TRX, resource: 'ENERGY' })).Error,
    /delegateBalance must be less than or equal to available FreezeV2 balance/,
  );
  t.regex(
    (await post(node, 'undelegateresource', { owner_address: owner, receiver_address: receiver, balance: TRX, resource: 'ENERGY' })).Error,
    /insufficient delegatedFrozenBalance\(ENERGY\)/,
  );
  const tw = client(node, node.payerKey);
  t.like(await signAndSend(tw, built[1]), { result: true });
  node.mine();
  const delegate = await post(node, 'delegateresource', {
    owner_address: owner,
    receiver_address: receiver,
    balance: 5 * TRX,
    resource: 'ENERGY',
    lock: true,
    lock_period: 20,
  });
  t.true(utils.transaction.txCheck(delegate));
  t.deepEqual(delegate.raw_data.contract[0].parameter.value, {
    owner_address: owner.toLowerCase(),
    receiver_address: receiver.toLowerCase(),
    balance: 5 * TRX,
    resource: 'ENERGY',
    lock: true,
    lock_period: 20,
  });
  t.true(utils.transaction.txCheck(await post(node, 'unfreezebalancev2', { owner_address: owner, unfreeze_balance: TRX, resource: 'ENERGY' })));
  // tronweb's own local builds go through the node's broadcast checks.
  const local = await tw.transactionBuilder.delegateResource(5 * TRX, other.address, 'ENERGY', node.payer, true, 20);
  t.like(await signAndSend(tw, local), { result: true });
  node.mine();
  t.like(await post(node, 'getdelegatedresourcev2', { fromAddress: owner, toAddress: receiver }), {
    delegatedResource: [{ from: owner.toLowerCase(), to: receiver.toLowerCase(), frozen_balance_for_energy: 5 * TRX }],
  });
});

test("a TRC-20 transfer: triggerconstantcontract gives its energy (about twice to a new holder), tronweb's triggerSmartContract passes its check, and the energy short is burnt as TRX", async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const tw = client(node, node.payerKey);
  const holder = account();
  const params = (to: string, amount: number) => [
    { type: 'address', value: to },
    { type: 'uint256', value: amount },
  ];
  const estimate = async (to: string) =>
    ((await tw.transactionBuilder.triggerConstantContract(node.usdt, 'transfer(address,uint256)', {}, params(to, 5), node.payer)) as { energy_used: number })
      .energy_used;
  t.is(await estimate(holder.address), ENERGY_TO_NEW_HOLDER);

  const call = (await tw.transactionBuilder.triggerSmartContract(
    node.usdt,
    'transfer(address,uint256)',
    { feeLimit: 50 * TRX },
    params(holder.address, 5),
    node.payer,
  )) as unknown as { transaction: TronTx };
  t.is(call.transaction.raw_data.fee_limit, 50 * TRX);
  const before = node.trxBalance(node.payer);
  const sent = await signAndSend(tw, call.transaction);
  t.true(sent.result);
  node.mine();
  t.is(node.tokenBalance(holder.address), 5n);
  t.false(node.activated(holder.address), 'a token transfer does not create the account');
  const info = node.info(sent.txid!);
  t.like(info.receipt, { energy_usage_total: ENERGY_TO_NEW_HOLDER, energy_fee: ENERGY_TO_NEW_HOLDER * SUN_PER_ENERGY, result: 'SUCCESS' });
  t.is(before - node.trxBalance(node.payer), BigInt(ENERGY_TO_NEW_HOLDER * SUN_PER_ENERGY), 'the energy burnt, bandwidth from the free allowance');
  t.is(await estimate(holder.address), ENERGY_TO_HOLDER, 'a holder now: about half');
  // balanceOf answers through the constant call.
  const bal = (await tw.transactionBuilder.triggerConstantContract(
    node.usdt,
    'balanceOf(address)',
    {},
    [{ type: 'address', value: holder.address }],
    node.payer,
  )) as { constant_result: string[] };
  t.is(BigInt('0x' + bal.constant_result[0]), 5n);
});

test('a fee_limit below the energy it needs: mined OUT_OF_ENERGY, the fee_limit burnt, no token moved and no Transfer log', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const tw = client(node, node.payerKey);
  const to = account().address;
  const feeLimit = 1000 * SUN_PER_ENERGY;
  const call = (await tw.transactionBuilder.triggerSmartContract(
    node.usdt,
    'transfer(address,uint256)',
    { feeLimit },
    [
      { type: 'address', value: to },
      { type: 'uint256', value: 9 },
    ],
    node.payer,
  )) as unknown as { transaction: TronTx };
  const before = node.trxBalance(node.payer);
  const sent = await signAndSend(tw, call.transaction);
  node.mine();
  t.is(node.blocks.at(-1)!.transactions![0]!.ret[0]!.contractRet, 'OUT_OF_ENERGY');
  t.like(node.info(sent.txid!), { result: 'FAILED', fee: feeLimit, receipt: { result: 'OUT_OF_ENERGY', energy_fee: feeLimit } });
  t.is(node.info(sent.txid!).log, undefined);
  t.is(node.tokenBalance(to), 0n);
  t.is(before - node.trxBalance(node.payer), BigInt(feeLimit));
});

test('staked energy delegated to a deposit address pays its TRC-20 sweep: no TRX burnt; undelegated, the next one burns', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const station = account();
  const deposit = account();
  const treasury = account();
  fund(node, station.address, 20_000 * TRX);
  fund(node, deposit.address, TRX); // activation, as the gas station would do
  node.pay(deposit.address, node.usdt, 100n);
  node.pay(treasury.address, node.usdt, 1n);
  node.mine();
  const st = client(node, station.key);
  t.like(await signAndSend(st, await st.transactionBuilder.freezeBalanceV2(10_000 * TRX, 'ENERGY', station.address)), { result: true });
  node.mine();
  // 10 energy a staked TRX, less a hair: the stake itself adds to the network's weight.
  const about = (got: number | undefined, want: number) => t.true(got !== undefined && want - got >= 0 && want - got <= 2, `${got} for about ${want}`);
  about(node.resources(station.address).EnergyLimit, 100_000);
  t.is(node.resources(station.address).tronPowerLimit, 10_000);
  t.like(await signAndSend(st, await st.transactionBuilder.delegateResource(5_000 * TRX, deposit.address, 'ENERGY', station.address)), { result: true });
  node.mine();
  about(node.resources(station.address).EnergyLimit, 50_000);
  about(node.resources(deposit.address).EnergyLimit, 50_000);
  // getaccount as java-tron answers it: the delegated TRX leaves frozenV2 for delegated_frozenV2_balance_for_energy.
  const staked = (await post(node, 'getaccount', { address: TronWeb.address.toHex(station.address) })) as {
    frozenV2: Array<{ type?: string; amount?: number }>;
    account_resource: { delegated_frozenV2_balance_for_energy?: number };
  };
  t.is(staked.frozenV2.find((f) => f.type === 'ENERGY')!.amount, 5_000 * TRX);
  t.is(staked.account_resource.delegated_frozenV2_balance_for_energy, 5_000 * TRX);

  const dep = client(node, deposit.key);
  const sweep = async (amount: number) => {
    const call = (await dep.transactionBuilder.triggerSmartContract(
      node.usdt,
      'transfer(address,uint256)',
      { feeLimit: 30 * TRX },
      [
        { type: 'address', value: treasury.address },
        { type: 'uint256', value: amount },
      ],
      deposit.address,
    )) as unknown as { transaction: TronTx };
    const sent = await signAndSend(dep, call.transaction);
    t.true(sent.result, JSON.stringify(sent));
    node.mine();
    return node.info(sent.txid!);
  };
  const trxBefore = node.trxBalance(deposit.address);
  const first = await sweep(60);
  t.like(first.receipt, { energy_usage: ENERGY_TO_HOLDER, energy_usage_total: ENERGY_TO_HOLDER, result: 'SUCCESS' });
  t.is(first.receipt.energy_fee, undefined);
  t.is(node.trxBalance(deposit.address), trxBefore, 'no TRX burnt: staked energy and free bandwidth paid it');
  t.like(node.resources(deposit.address), { EnergyUsed: ENERGY_TO_HOLDER });

  t.like(await signAndSend(st, await st.transactionBuilder.undelegateResource(5_000 * TRX, deposit.address, 'ENERGY', station.address)), { result: true });
  node.mine();
  t.false('EnergyLimit' in node.resources(deposit.address), 'java-tron leaves a zero out');
  fund(node, deposit.address, 10 * TRX);
  const second = await sweep(40);
  t.like(second.receipt, { energy_fee: ENERGY_TO_HOLDER * SUN_PER_ENERGY, result: 'SUCCESS' });
  t.is(node.tokenBalance(treasury.address), 101n);
});

test('energy used recovers over 24 hours of block time; unfrozen TRX can be withdrawn after 14 days, not before', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const tw = client(node, node.payerKey);
  await signAndSend(tw, await tw.transactionBuilder.freezeBalanceV2(10_000 * TRX, 'ENERGY', node.payer));
  node.mine();
  node.pay(account().address, node.usdt, 1n);
  node.mine();
  t.like(node.resources(node.payer), { EnergyUsed: ENERGY_TO_NEW_HOLDER });
  node.skipTime(12 * 3600_000);
  node.mine();
  const half = node.resources(node.payer).EnergyUsed!;
  t.true(Math.abs(half - ENERGY_TO_NEW_HOLDER / 2) < 10, String(half));
  node.skipTime(12 * 3600_000);
  node.mine();
  t.false('EnergyUsed' in node.resources(node.payer));

  await signAndSend(tw, await tw.transactionBuilder.unfreezeBalanceV2(4_000 * TRX, 'ENERGY', node.payer));
  node.mine();
  const acc = (await post(node, 'getaccount', { address: TronWeb.address.toHex(node.payer) })) as {
    frozenV2: Array<{ type?: string; amount?: number }>;
    unfrozenV2: Array<{ type: string; unfreeze_amount: number }>;
  };
  t.deepEqual(
    acc.frozenV2.find((f) => f.type === 'ENERGY'),
    { type: 'ENERGY', amount: 6_000 * TRX },
  );
  t.like(acc.unfrozenV2, [{ type: 'ENERGY', unfreeze_amount: 4_000 * TRX }]);
  const early = await signAndSend(tw, await tw.transactionBuilder.withdrawExpireUnfreeze(node.payer as never));
  t.like(early, { result: false, code: 'CONTRACT_VALIDATE_ERROR' });
  node.skipTime(14 * 86_400_000);
  node.mine();
  const before = node.trxBalance(node.payer);
  const done = await signAndSend(tw, await tw.transactionBuilder.withdrawExpireUnfreeze(node.payer as never));
  node.mine();
  t.like(node.info(done.txid!), { withdraw_expire_amount: 4_000 * TRX });
  t.true(node.trxBalance(node.payer) - before === BigInt(4_000 * TRX));
});

test('the node refuses a transaction of an address without an account, one signed by another key, an expired one, one on an unknown block, and a repeat', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const stranger = account();
  const head = node.head();
  const transfer = (owner: string, key: string, extra: Record<string, unknown> = {}) =>
    signTronTransaction(
      {
        contract: [
          {
            parameter: {
              value: {
                amount: TRX,
                owner_address: TronWeb.address.toHex(owner).toLowerCase(),
                to_address: TronWeb.address.toHex(account().address).toLowerCase(),
              },
              type_url: 'type.googleapis.com/protocol.TransferContract',
            },
            type: 'TransferContract',
          },
        ],
        ref_block_bytes: head.ref_block_bytes,
        ref_block_hash: head.ref_block_hash,
        expiration: head.timestamp + 60_000,
        timestamp: head.timestamp,
        ...extra,
      },
      key,
    );
  const hexOf = (m: string) => Buffer.from(m, 'hex').toString();
  const cases: Array<[ReturnType<typeof transfer>, string, RegExp]> = [
    [transfer(stranger.address, stranger.key), 'CONTRACT_VALIDATE_ERROR', /does not exist/],
    [transfer(node.payer, stranger.key), 'SIGERROR', /signature/],
    [transfer(node.payer, node.payerKey, { expiration: head.timestamp }), 'TRANSACTION_EXPIRATION_ERROR', /expired/],
    [transfer(node.payer, node.payerKey, { expiration: head.timestamp + 2 * 86_400_000 }), 'TRANSACTION_EXPIRATION_ERROR', /too long/],
    [transfer(node.payer, node.payerKey, { ref_block_hash: '00'.repeat(8) }), 'TAPOS_ERROR', /Tapos/],
  ];
  for (const [tx, code, message] of cases) {
    const got = await post(node, 'broadcasthex', { transaction: tx.hex });
    t.like(got, { result: false, code });
    t.regex(hexOf(got.message), message);
  }
  const good = transfer(node.payer, node.payerKey);
  t.like(await post(node, 'broadcasthex', { transaction: good.hex }), { result: true, txid: good.txID });
  t.like(await post(node, 'broadcasthex', { transaction: good.hex }), { result: false, code: 'DUP_TRANSACTION_ERROR' });
  node.mine();
  t.is(node.blocks.at(-1)!.transactions!.length, 1);
});

test('a pool held back keeps a transaction pending across blocks; a block past its expiration drops it for good (never mined, a repeat refused as expired)', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const to = account().address;
  const head = node.head();
  const tx = signTronTransaction(
    {
      contract: [
        {
          parameter: {
            value: { amount: TRX, owner_address: TronWeb.address.toHex(node.payer).toLowerCase(), to_address: TronWeb.address.toHex(to).toLowerCase() },
            type_url: 'type.googleapis.com/protocol.TransferContract',
          },
          type: 'TransferContract',
        },
      ],
      ref_block_bytes: head.ref_block_bytes,
      ref_block_hash: head.ref_block_hash,
      expiration: head.timestamp + 9_000,
      timestamp: head.timestamp,
    },
    node.payerKey,
  );
  t.like(await post(node, 'broadcasthex', { transaction: tx.hex }), { result: true, txid: tx.txID });
  node.holdPending(true);
  node.mine(2);
  t.is((await post(node, 'gettransactionfrompending', { value: tx.txID })).txID, tx.txID);
  t.deepEqual(await post(node, 'gettransactioninfobyid', { value: tx.txID }), {});
  // The third block's time (head + 9 s) reaches the expiration: dropped, though the pool is open again after it.
  node.mine(1);
  node.holdPending(false);
  node.mine(1);
  t.deepEqual(await post(node, 'gettransactionfrompending', { value: tx.txID }), {});
  t.deepEqual(await post(node, 'gettransactioninfobyid', { value: tx.txID }), {});
  t.false(node.activated(to));
  t.like(await post(node, 'broadcasthex', { transaction: tx.hex }), { result: false, code: 'TRANSACTION_EXPIRATION_ERROR' });
});

test('a reorg restores balances, token holdings and resources to the fork point; save and load keep the chain', async (t) => {
  const node = await start();
  t.teardown(() => node.stop());
  const holder = account();
  const forkHeight = node.height;
  const payerBefore = node.trxBalance(node.payer);
  fund(node, holder.address, 3 * TRX);
  node.pay(holder.address, node.usdt, 7n);
  node.mine();
  t.true(node.activated(holder.address));
  node.reorg(node.height - forkHeight);
  t.false(node.activated(holder.address));
  t.is(node.tokenBalance(holder.address), 0n);
  t.is(node.trxBalance(node.payer), payerBefore);
  node.mine(3);
  t.not(node.blocks[forkHeight + 1]!.block_header.raw_data.witness_address, undefined);

  fund(node, holder.address, 2 * TRX);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-tron-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'chain.json');
  node.save(file);
  const again = TronNode.load(file);
  t.is(again.genesisId, node.genesisId);
  t.is(again.height, node.height);
  t.is(again.trxBalance(holder.address), 2n * BigInt(TRX));
  t.is(again.payer, node.payer);
  again.pay(holder.address, again.usdt, 1n);
  again.mine();
  t.is(again.tokenBalance(holder.address), 1n);
});
