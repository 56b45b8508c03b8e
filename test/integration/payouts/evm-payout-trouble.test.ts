/**
 * EVM payouts in trouble on a real anvil (issue 19 §2, §4): a payout stuck under a raised base fee
 * is replaced (same nonce, higher fees) and completed once; a payout whose nonce another
 * transaction takes fails with its hold released; a token payout reverted on chain fails with its
 * network fee charged; a payout whose block is reorganised away goes back to broadcast and is
 * mined again, paid once.
 */
import test, { type ExecutionContext } from 'ava';
import { AbiCoder, HDNodeWallet, keccak256, parseUnits, Transaction } from 'ethers';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import type { ChainConfig } from '../../../src/config/schema';
import { AddressEntity } from '../../../src/db/entities/chain';
import { EventEntity } from '../../../src/db/entities/events';
import { verifyLedger } from '../../../src/ledger/verify';
import { CANCELLED_BY_OPERATOR } from '../../../src/payouts/payout-worker';
import { Amount } from '../../../src/shared/amount';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { killAllAnvils } from '../../helpers/anvil';
import { cliConfigFile, TEST_MNEMONIC } from '../../helpers/daemon';
import { elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

async function treasuryOf(f: EvmPayoutFixture): Promise<AddressEntityRow> {
  return f.td.daemon.store.read.findOneByOrFail(AddressEntity, { account_id: f.accountId, purpose: 'treasury' });
}
type AddressEntityRow = { address: string; derivation_path: string };

/** A fixture whose account was paid `amount` of `ticker` by an invoice, swept into its treasury; no block is mined after. */
async function funded(t: ExecutionContext, ticker: 'ETH' | 'USDT', amount: string): Promise<EvmPayoutFixture> {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidAndSwept(ticker, amount);
  return f;
}

/** A withdrawal of 0.2 ETH broadcast and held in the node's pool (no block is mined). */
async function pooledPayout(f: EvmPayoutFixture): Promise<{ id: string; to: string; sent: Transaction }> {
  await f.node.rpc('evm_setAutomine', [false]);
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.2', to_address: to });
  await f.until(async () => (await f.get(w.id)).status === 'broadcast', 'broadcast');
  const sent = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [(await f.get(w.id)).txid]));
  return { id: w.id, to, sent };
}

/**
 * Mines a block every `ms` until withdrawal `id` is `status` (after `first` held, when given) and
 * the sends are quiet; the withdrawal then.
 */
async function mineUntil(
  t: ExecutionContext,
  f: EvmPayoutFixture,
  id: string,
  status: string,
  opts: { ms?: number; timeoutMs?: number; first?: [() => Promise<boolean>, string] } = {},
): Promise<any> {
  const stop = f.miner(opts.ms);
  t.teardown(stop);
  if (opts.first) await f.until(...opts.first);
  const w = await f.waitWithdrawal(id, (x) => x.status === status, status, opts.timeoutMs ?? 60_000);
  await f.quiet();
  await stop();
  return w;
}

test('a payout stuck under a raised base fee is replaced with the same nonce and higher fees, and completed once with the txid that was mined', async (t) => {
  const f = await funded(t, 'ETH', '1');
  const { id, to, sent: stuck } = await pooledPayout(f);
  const first = stuck.hash!;
  // Blocks from now on cost far more than the payout offers: it waits in the mempool.
  await f.node.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(stuck.maxFeePerGas! * 50n).toString(16)}`]);
  const done = await mineUntil(t, f, id, 'completed', { ms: 200, timeoutMs: 90_000 });

  t.not(done.txid, first, 'the replacement was mined');
  const replacement = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [done.txid]));
  t.is(replacement.nonce, stuck.nonce, 'the same nonce');
  t.true(replacement.maxFeePerGas! > stuck.maxFeePerGas! && replacement.maxPriorityFeePerGas! > stuck.maxPriorityFeePerGas!, 'both fee caps bumped');
  t.is(await f.onChain(to, 'ETH'), eth('0.2'), 'paid once');
  const row = await f.td.daemon.store.read.query(`SELECT candidate_txids FROM withdrawals WHERE id = '${id}'`);
  t.true((JSON.parse(row[0].candidate_txids) as string[]).includes(first));
  t.like(await f.balance('ETH'), { hold: '0' });
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('a payout whose nonce another transaction takes fails, its hold released and nothing paid', async (t) => {
  const f = await funded(t, 'ETH', '1');
  const { id, to, sent: ours } = await pooledPayout(f);

  // Someone with the treasury's key spends its nonce first, at a higher fee.
  const treasury = await treasuryOf(f);
  const key = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, treasury.derivation_path);
  t.is(key.address, treasury.address);
  const other = await key.signTransaction({
    type: 2,
    chainId: ours.chainId,
    nonce: ours.nonce,
    to: elsewhere(),
    value: 0n,
    gasLimit: 21_000n,
    maxFeePerGas: ours.maxFeePerGas! * 3n,
    maxPriorityFeePerGas: ours.maxPriorityFeePerGas! * 3n + parseUnits('1', 'gwei'),
  });
  const otherTxid = await f.node.rpc<string>('eth_sendRawTransaction', [other]);
  const failed = await mineUntil(t, f, id, 'failed');

  t.truthy(failed.failure_reason);
  t.is(await f.onChain(to, 'ETH'), 0n, 'nothing paid');
  t.like(await f.balance('ETH'), { hold: '0', available: '1' });
  t.true((await verifyLedger(f.td.daemon.store.read)).ok);
  // The books differ from the chain by exactly what the other transaction took from the treasury.
  const receipt = await f.node.rpc<{ gasUsed: string; effectiveGasPrice: string }>('eth_getTransactionReceipt', [otherTxid]);
  const taken = Amount.fromBaseUnits(BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice), 18);
  const check = await f.booksMatchChain();
  const m = /ETH: books ([\d.]+), chain ([\d.]+)/.exec(check.detail)!;
  t.true(Amount.of(m[1]!).minus(Amount.of(m[2]!)).eq(taken), check.detail);
});

test('a token payout mined and reverted (status 0) fails with its reason, its hold released and its network fee charged', async (t) => {
  const f = await funded(t, 'USDT', '100');
  await f.node.rpc('evm_setAutomine', [false]);
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.USDT, amount: '40', to_address: to });
  // The gas station's top-up of the treasury is mined first (one block, then no more); then the payout goes out.
  const store = f.td.daemon.store;
  await f.until(
    async () => (await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'topup' AND status = 'broadcast'`))[0].n > 0,
    'the top-up sent',
  );
  await f.node.mine(1);
  await f.until(async () => (await f.get(w.id)).status === 'broadcast', 'broadcast');
  // Before it is mined, the treasury's token balance is emptied (the contract's storage), so the transfer reverts.
  const treasury = await treasuryOf(f);
  const slot = keccak256(AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [treasury.address, 0]));
  const zero = `0x${'0'.repeat(64)}`;
  const full = await f.node.rpc<string>('eth_getStorageAt', [f.usdt, slot, 'latest']);
  await f.node.rpc('anvil_setStorageAt', [f.usdt, slot, zero]);
  await f.node.mine(1);
  const receipt = await f.node.rpc<{ status: string }>('eth_getTransactionReceipt', [(await f.get(w.id)).txid]);
  t.is(receipt.status, '0x0', 'reverted on chain');
  await f.node.rpc('anvil_setStorageAt', [f.usdt, slot, full]);
  await f.node.rpc('evm_setAutomine', [true]);
  const failed = await mineUntil(t, f, w.id, 'failed');

  t.regex(failed.failure_reason, /reverted/);
  t.is(failed.network_fee_charged, failed.network_fee_reserved);
  t.is(await f.onChain(to, 'USDT'), 0n);
  t.like(await f.balance('USDT'), { hold: '0', available: Amount.of('100').minus(Amount.of(failed.network_fee_charged)).toString() });
  const adjustments = await f.transactions('type=adjustment');
  t.is(adjustments.length, 1);
  t.is(adjustments[0].amount, `-${failed.network_fee_charged}`);
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('a completed payout whose block is reorganised away goes back to broadcast, is sent again from its stored bytes and completed; paid once', async (t) => {
  const f = await funded(t, 'ETH', '1');
  const snapshot = await f.node.rpc<string>('evm_snapshot');
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.2', to_address: to });
  const stop = f.miner();
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 60_000);
  await stop();

  t.true(await f.node.rpc<boolean>('evm_revert', [snapshot]));
  await f.node.mine(6);
  const store = f.td.daemon.store;
  const back = async () => (await store.read.findBy(EventEntity, { type: 'withdrawal.broadcast', object_id: w.id })).length >= 2;
  const again = await mineUntil(t, f, w.id, 'completed', { first: [back, 'back to broadcast'] });

  t.is(again.txid, done.txid, 'the same signed transaction');
  t.is(await f.onChain(to, 'ETH'), eth('0.2'), 'paid once');
  t.is((await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'payout'`))[0].n, 1, 'signed once');
  t.like(await f.balance('ETH'), { hold: '0' });
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

/** An anvil adapter that answers the first payout transaction it is handed with its txid and never sends it, as a node that drops one does. */
class DroppingAdapter extends EvmAdapter {
  dropped: string | null = null;
  override async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    const tx = Transaction.from(rawHex);
    if (this.dropped === null && tx.to !== null && tx.to !== tx.from && tx.value > 0n) this.dropped = tx.hash;
    return tx.hash === this.dropped ? tx.hash! : super.broadcast(rawHex, signal);
  }
}

test('a payout the node answers and drops is never failed by the worker; coinkeep payouts cancel sends its nonce to the treasury itself, and the withdrawal fails once that is confirmed, its hold released and nothing paid', async (t) => {
  let node!: DroppingAdapter;
  const f = await startEvmPayoutFixture({
    payouts: { stuck_alert_minutes: 0, replace_after_blocks: 1000 },
    daemon: { adapterFor: (chain: ChainConfig) => (node = new DroppingAdapter(chain)) },
  });
  t.teardown(() => f.stop());
  await f.paidAndSwept('ETH', '1');
  const treasury = await treasuryOf(f);
  const before = await f.balance('ETH');
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.2', to_address: to });
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  t.is(sent.txid, node.dropped);
  const height = async () => Number(await f.node.rpc<string>('eth_blockNumber', []));
  const at = await height();
  const stop = f.miner();
  t.teardown(stop);
  const [payout] = await f.td.daemon.store.read.query(`SELECT id FROM chain_payouts`);
  await f.until(async () => (await height()) >= at + 5, 'five blocks mined');
  t.is((await f.get(w.id)).status, 'broadcast', 'never failed while the node does not know it');

  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', 'payouts', 'cancel', payout.id, '--as', f.owner, '--otp', f.otp.next()], {
    timeoutMs: 60_000,
  });
  t.is(r.code, 0, r.stderr);
  const failed = await f.waitWithdrawal(w.id, (x) => x.status === 'failed', 'failed', 60_000);
  await f.quiet();
  await stop();
  t.is(failed.failure_reason, CANCELLED_BY_OPERATOR);
  t.not(failed.txid, sent.txid);
  const cancel = await f.node.rpc<{ from: string; to: string; value: string; nonce: string }>('eth_getTransactionByHash', [failed.txid]);
  t.is(cancel.to.toLowerCase(), treasury.address.toLowerCase(), 'to the treasury itself');
  t.is(BigInt(cancel.value), 0n);
  t.is(await f.onChain(to, 'ETH'), 0n, 'nothing paid');
  t.like(await f.balance('ETH'), { hold: '0', available: Amount.of(before.available).minus(Amount.of(failed.network_fee_charged)).toString() });
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test("a rival with the payout's nonce waiting in the node's pool fails nothing (only one in a confirmed block would): once the node drops it, the payout is sent again, mined and completed", async (t) => {
  const f = await funded(t, 'ETH', '1');
  const { id, to, sent: ours } = await pooledPayout(f);
  const treasury = await treasuryOf(f);
  const key = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, treasury.derivation_path);
  const other = await key.signTransaction({
    type: 2,
    chainId: ours.chainId,
    nonce: ours.nonce,
    to: elsewhere(),
    value: 0n,
    gasLimit: 21_000n,
    maxFeePerGas: ours.maxFeePerGas! * 3n,
    maxPriorityFeePerGas: ours.maxPriorityFeePerGas! * 3n + parseUnits('1', 'gwei'),
  });
  const otherTxid = await f.node.rpc<string>('eth_sendRawTransaction', [other]);
  // The node's pending count is past the payout's nonce now: the old rule failed it on that alone.
  const pending = await f.node.rpc<string>('eth_getTransactionCount', [treasury.address, 'pending']);
  t.true(Number(pending) > ours.nonce);
  const runs = Date.now() + 3000;
  await f.until(async () => Date.now() > runs, 'a few worker runs');
  t.is((await f.get(id)).status, 'broadcast', 'not failed while the rival only waits');

  await f.node.rpc('anvil_dropTransaction', [otherTxid]);
  const done = await mineUntil(t, f, id, 'completed');
  t.is(done.txid, ours.hash);
  t.is(await f.onChain(to, 'ETH'), eth('0.2'));
  t.like(await f.balance('ETH'), { hold: '0' });
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
