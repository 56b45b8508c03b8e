/**
 * The wallet's own EVM sends in trouble on a real anvil (issue 19 §1, §2): a sweep stuck under a
 * raised base fee is replaced (same nonce, higher fees) and moves the deposit once; a payout the
 * node refuses while the treasury's later payouts wait behind its nonce does not stall them (a
 * filler takes the nonce); a deposit reorganised away after it was swept leaves the books right.
 * The books hold what the chain shows at the end of each.
 */
import test from 'ava';
import { Transaction } from 'ethers';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import { TransactionRefused } from '../../../src/chains/types';
import type { ChainConfig } from '../../../src/config/schema';
import { AddressEntity } from '../../../src/db/entities/chain';
import { REFUSED_BY_NODE } from '../../../src/payouts/payout-worker';
import { sendsWithStatus, type EvmSendRow } from '../../../src/chains/evm/payouts/send-store';
import { killAllAnvils } from '../../helpers/anvil';
import { CONFIRMATIONS, elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

const hex = (v: bigint): string => `0x${v.toString(16)}`;

async function treasuryOf(f: EvmPayoutFixture): Promise<string> {
  return (await f.td.daemon.store.read.findOneByOrFail(AddressEntity, { account_id: f.accountId, purpose: 'treasury' })).address;
}

/** Pays `to` from one of anvil's own accounts without waiting for a block (automine may be off). */
async function sendFromAnvil(f: EvmPayoutFixture, to: string, wei: bigint): Promise<string> {
  const accounts = await f.node.rpc<string[]>('eth_accounts');
  return f.node.rpc<string>('eth_sendTransaction', [{ from: accounts[2], to, value: hex(wei) }]);
}

test('a sweep stuck under a raised base fee is replaced with the same nonce and higher fees; the deposit is swept once and the books match the chain', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const store = f.td.daemon.store;
  // Blocks only when the test mines them: the sweep waits in the mempool.
  await f.node.rpc('evm_setAutomine', [false]);
  const inv = await f.createInvoice('ETH', '0.5');
  await sendFromAnvil(f, inv.address, eth('0.5'));
  await f.node.mine(CONFIRMATIONS);
  await f.until(async () => (await f.invoice(inv.id)).status === 'paid', 'the invoice paid');
  let sent: EvmSendRow | undefined;
  await f.until(
    async () => (sent = (await sendsWithStatus(store.read, f.chainId, ['broadcast'])).find((s) => s.kind === 'sweep')) !== undefined,
    'the sweep sent',
  );
  const first = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [sent!.txid]));
  // Blocks from now on cost far more than the sweep offers.
  await f.node.rpc('anvil_setNextBlockBaseFeePerGas', [hex(first.maxFeePerGas! * 50n)]);
  const stop = f.miner(200);
  t.teardown(stop);
  await f.until(async () => (await sendsWithStatus(store.read, f.chainId, ['mined'])).some((s) => s.kind === 'sweep'), 'the sweep mined', 90_000);
  await f.quiet();
  await stop();

  const [swept] = (await sendsWithStatus(store.read, f.chainId, ['mined'])).filter((s) => s.kind === 'sweep');
  t.not(swept!.txid, first.hash, 'the replacement was mined');
  t.true((JSON.parse(swept!.candidate_txids) as string[]).includes(first.hash!), 'the first kept as a candidate');
  const mined = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [swept!.txid]));
  t.is(mined.nonce, first.nonce, 'the same nonce');
  t.true(mined.maxFeePerGas! > first.maxFeePerGas! && mined.maxPriorityFeePerGas! > first.maxPriorityFeePerGas!, 'both fee caps bumped');
  t.is(mined.to, first.to, 'to the treasury');
  t.is(BigInt(swept!.amount), mined.value, 'the row holds what was moved');
  // The higher gas came out of what it moved: the deposit address is empty but for unused gas.
  const treasury = await treasuryOf(f);
  t.is(await f.onChain(treasury, 'ETH'), mined.value);
  t.true((await f.onChain(inv.address, 'ETH')) < eth('0.01'));
  t.is((await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep'`))[0].n, 1, 'one sweep');
  t.is((await f.balance('ETH')).available, '0.5', 'the merchant keeps the deposit');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

/**
 * An anvil adapter that refuses the transactions `refuse` picks, as a node refuses one before it
 * spreads; the first time it is handed one, it times out instead (so the later payouts of the pass
 * are signed with the nonces after it before the refusal proves it dead).
 */
class RefusingAdapter extends EvmAdapter {
  refuse: (tx: Transaction) => boolean = () => false;
  private readonly tried = new Set<string>();

  override async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    if (this.refuse(Transaction.from(rawHex))) {
      if (!this.tried.has(rawHex)) {
        this.tried.add(rawHex);
        throw new Error('evm node eth_sendRawTransaction: timed out');
      }
      throw new TransactionRefused('evm node eth_sendRawTransaction: intrinsic gas too low');
    }
    return super.broadcast(rawHex, signal);
  }
}

test('a payout the node refuses while later payouts of the treasury wait behind its nonce fails alone: a filler takes its nonce and the later ones complete', async (t) => {
  let node: RefusingAdapter | undefined;
  const f = await startEvmPayoutFixture({
    payouts: { batch_window_seconds: 1.5 },
    daemon: { adapterFor: (chain: ChainConfig) => (node = new RefusingAdapter(chain)) },
  });
  t.teardown(() => f.stop());
  await f.paidAndSwept('ETH', '2');
  const treasury = await treasuryOf(f);
  const before = await f.adapter.nonce(treasury);

  const payees = [elsewhere(), elsewhere(), elsewhere()];
  node!.refuse = (tx) => tx.to === payees[0];
  const ws: any[] = [];
  for (const [i, to] of payees.entries()) ws.push(await f.withdraw({ coin_id: f.coin.ETH, amount: `0.${i + 1}`, to_address: to }));
  const stop = f.miner();
  t.teardown(stop);
  const failed = await f.waitWithdrawal(ws[0].id, (x) => x.status === 'failed', 'the refused one failed', 60_000);
  for (const w of ws.slice(1)) await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 60_000);
  await f.quiet();
  await stop();

  t.is(failed.failure_reason, REFUSED_BY_NODE);
  const store = f.td.daemon.store;
  const rows: Array<{ kind: string; nonce: number; status: string; to_address: string; amount: string; withdrawal_id: string | null }> = await store.read.query(
    `SELECT kind, nonce, status, to_address, amount, withdrawal_id FROM account_sends WHERE from_address = '${treasury}' ORDER BY nonce, kind`,
  );
  const refused = rows.find((r) => r.withdrawal_id === ws[0].id)!;
  t.is(Number(refused.nonce), before.latest, 'the first of the pass');
  t.is(refused.status, 'dropped');
  const filler = rows.find((r) => r.kind === 'filler')!;
  t.like(filler, { status: 'mined', to_address: treasury, amount: '0' });
  t.is(Number(filler.nonce), before.latest, 'the filler took the refused nonce');
  t.deepEqual(await f.adapter.nonce(treasury), { latest: before.latest + 3, pending: before.latest + 3 }, 'the filler and the two payouts mined');
  t.is(await f.onChain(payees[0]!, 'ETH'), 0n, 'nothing paid to the refused payee');
  t.is(await f.onChain(payees[1]!, 'ETH'), eth('0.2'));
  t.is(await f.onChain(payees[2]!, 'ETH'), eth('0.3'));
  t.like(await f.balance('ETH'), { hold: '0' });
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('a deposit reorganised away after it was swept: the credit is taken back, the sweep leaves the books with it, and ledger verify and the books against the chain stay clean', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const store = f.td.daemon.store;
  const snapshot = await f.node.rpc<string>('evm_snapshot');
  const inv = await f.paidInvoice('ETH', '0.5');
  let stop = f.miner();
  await f.until(
    async () => (await sendsWithStatus(store.read, f.chainId, ['mined'])).some((s) => s.kind === 'sweep' && s.booked_at !== null),
    'swept and booked',
  );
  await f.quiet();
  await stop();
  const treasury = await treasuryOf(f);
  t.true((await f.onChain(treasury, 'ETH')) > 0n, 'swept into the treasury');

  // The payment and the sweep leave the chain; a longer branch without them follows.
  t.true(await f.node.rpc<boolean>('evm_revert', [snapshot]));
  await f.node.mine(CONFIRMATIONS + 3);
  stop = f.miner();
  t.teardown(stop);
  await f.until(async () => (await f.balance('ETH')).available === '0', 'the credit taken back', 60_000);
  await f.until(
    async () => (await store.read.query(`SELECT status FROM account_sends WHERE kind = 'sweep'`))[0].status === 'dropped',
    'the sweep dropped',
    60_000,
  );
  await f.quiet();
  await stop();

  t.is(await f.onChain(treasury, 'ETH'), 0n);
  t.is(await f.onChain(inv.address, 'ETH'), 0n);
  const [sweep] = await store.read.query(`SELECT booked_at FROM account_sends WHERE kind = 'sweep'`);
  t.is(sweep.booked_at, null, 'its fee no longer booked');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
