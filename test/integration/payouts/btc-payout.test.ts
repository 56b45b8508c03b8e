/**
 * The Bitcoin payout engine against a real bcoin regtest node and the real daemon watching it: an
 * account's paid invoices are its coins; a batch of withdrawals is paid from them in one signed
 * transaction that bcoin accepts and mines; the change comes back to the account's internal chain
 * and is spendable, the spent coins are not; a stuck payout is replaced with a higher fee from the
 * same coins, and only one of the two is ever mined.
 */
import { localSigner } from '../../helpers/local-signer';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { address as baddress, Transaction } from 'bitcoinjs-lib';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import { AddressEntity } from '../../../src/db/entities/chain';
import { BtcPayoutEngine, BtcPayoutRefused, RBF_SEQUENCE } from '../../../src/chains/btc/payouts/btc-payout-engine';
import { spendableCoins } from '../../../src/chains/btc/payouts/coin-store';
import { systemClock } from '../../../src/shared/clock';
import { killAllBcoins, sats } from '../../helpers/bcoin';
import { CONFIRMATIONS, startBtcFixture, until, type BtcFixture } from '../chains/btc/btc-fixture';

test.after.always(killAllBcoins);

const elsewhere = (): string => baddress.toBech32(randomBytes(20), 0, 'rb');

/** Pays one invoice per amount, mines them to confirmation, and waits until the account can spend them. */
async function fund(f: BtcFixture, ...amounts: string[]): Promise<void> {
  const chainId = f.td.daemon.config.chains[0]!.id;
  const before = (await spendableCoins(f.td.daemon.store.read, chainId, f.accountId)).length;
  for (const amount of amounts) await f.pay((await f.createInvoice(amount)).address, amount);
  await f.node.mine(CONFIRMATIONS);
  await until(
    async () => (await spendableCoins(f.td.daemon.store.read, chainId, f.accountId)).length === before + amounts.length,
    'the paid invoices spendable',
  );
}

function engineOf(f: BtcFixture): { engine: BtcPayoutEngine; adapter: BtcAdapter; chainId: string } {
  const chain = f.td.daemon.config.chains[0]!;
  const engine = new BtcPayoutEngine({ chain, signer: localSigner(), addresses: f.td.daemon.addresses, clock: systemClock });
  return { engine, adapter: new BtcAdapter(chain), chainId: chain.id };
}

test('three withdrawals go out in one transaction from the invoices paid in: bcoin mines three payments and one change, which the account can spend again', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const { engine, adapter, chainId } = engineOf(f);
  await fund(f, '0.3', '0.2', '0.25');

  const orders = [
    { withdrawalId: 'w1', address: elsewhere(), amount: sats('0.1') },
    { withdrawalId: 'w2', address: elsewhere(), amount: sats('0.15') },
    { withdrawalId: 'w3', address: elsewhere(), amount: sats('0.2') },
  ];
  const rate = await engine.feeRate(adapter);
  t.is(rate, 10, 'no estimate on regtest: the configured fallback');
  const payout = await f.td.daemon.store.write((em) => engine.build(em, { accountId: f.accountId, orders, satPerVbyte: rate }));

  const tx = Transaction.fromHex(payout.raw);
  t.is(tx.getId(), payout.txid);
  t.true(
    tx.ins.every((i) => i.sequence === RBF_SEQUENCE),
    'replaceable (BIP125)',
  );
  t.is(tx.outs.length, 4);
  const change = payout.outputs.find((o) => o.withdrawalId === null)!;
  const changeRow = await f.td.daemon.store.read.findOneByOrFail(AddressEntity, { address: change.address });
  t.like(changeRow, { account_id: f.accountId, purpose: 'change' });
  t.regex(changeRow.derivation_path, /^m\/84'\/1'\/\d+'\/1\/0$/, 'the internal chain of the account');
  const paidIn = payout.inputs.reduce((s, c) => s + c.value, 0n);
  t.is(paidIn, sats('0.45') + payout.fee + change.value);
  t.true(payout.fee >= BigInt(tx.virtualSize() * rate));
  t.deepEqual(
    payout.outputs.filter((o) => o.withdrawalId).map((o) => [o.withdrawalId, o.address, o.value]),
    orders.map((o) => [o.withdrawalId, o.address, o.amount]),
  );

  t.is(await adapter.broadcast(payout.raw), payout.txid);
  await until(async () => (await f.node.mempool()).includes(payout.txid), 'the payout in the mempool');
  await f.node.mine(CONFIRMATIONS);
  // The chain core saw the spends and the change: the spent coins are gone, the change is spendable.
  await until(async () => {
    const coins = await spendableCoins(f.td.daemon.store.read, chainId, f.accountId);
    return coins.some((c) => c.txid === payout.txid && c.vout === change.vout);
  }, 'the change spendable');
  const left = await spendableCoins(f.td.daemon.store.read, chainId, f.accountId);
  t.false(
    left.some((c) => payout.inputs.some((i) => i.transferId === c.transferId)),
    'a spent coin is never offered again',
  );
});

// bcoin 1.0.2 refuses any double spend of its mempool (it has no BIP125 replacement), so the stuck
// payout here is one the node never took in: the replacement must still be valid alone, spend the
// same coins, and leave the first conflicted once mined.
test('a payout stuck at a low fee is replaced from the same coins with a higher fee: the replacement is mined, the first conflicted', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const { engine, adapter } = engineOf(f);
  await fund(f, '0.5');

  const orders = [{ withdrawalId: 'w1', address: elsewhere(), amount: sats('0.1') }];
  const first = await f.td.daemon.store.write((em) => engine.build(em, { accountId: f.accountId, orders, satPerVbyte: 1 }));
  // Stored but not yet broadcast, its coin is reserved: no second payout can select it.
  const second = await t.throwsAsync(
    f.td.daemon.store.write((em) => engine.build(em, { accountId: f.accountId, orders: [{ ...orders[0]!, withdrawalId: 'w2' }], satPerVbyte: 1 })),
  );
  t.is((second as BtcPayoutRefused).reason, 'insufficient_coins');

  const bumped = await engine.replace(first, 20);
  t.not(bumped.txid, first.txid);
  t.deepEqual(bumped.inputs, first.inputs);
  t.is(bumped.payoutId, first.payoutId);
  t.true(bumped.fee >= first.fee + BigInt(bumped.vsize), 'BIP125: the replaced fee plus 1 sat/vB over its size');
  t.true(bumped.fee >= BigInt(Transaction.fromHex(bumped.raw).virtualSize() * 20));
  const oldChange = first.outputs.find((o) => o.withdrawalId === null)!.value;
  t.is(bumped.outputs.find((o) => o.withdrawalId === null)!.value, oldChange - (bumped.fee - first.fee), 'the change pays the difference');

  t.is(await adapter.broadcast(bumped.raw), bumped.txid);
  await until(async () => (await f.node.mempool()).includes(bumped.txid), 'the replacement in the mempool');
  await f.node.mine(1);
  const height = await f.node.height();
  const spends = (await adapter.blocks(height, height))[0]!.spends!.map((x) => x.txid);
  t.true(spends.includes(bumped.txid) && !spends.includes(first.txid), 'the replacement mined, never the first');

  // Asked far above Bitcoin Core's maxfeerate (0.10 BTC/kvB), a replacement is held under it (the change could pay more).
  const held = await engine.replace(bumped, 1_000_000);
  t.true(held.fee <= 10_000n * BigInt(Transaction.fromHex(held.raw).virtualSize()));
});
