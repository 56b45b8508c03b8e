/**
 * The EVM fee models (issue 32 §1, chains[].fee_model) on anvil, through the provider emulator
 * where anvil does not price like the chain: an OP-stack chain's receipts carry an L1 data fee the
 * sender pays beside its gas (the emulator adds `l1Fee` to the receipts of the daemon's
 * transactions and takes it from their senders), booked exactly so the books match the chain;
 * `legacy` pays with type 0 transactions at eth_gasPrice on a node that answers a base fee; on
 * Arbitrum a native transfer's gas is estimated, not 21,000.
 */
import test from 'ava';
import { Transaction } from 'ethers';
import { killAllAnvils } from '../../helpers/anvil';
import { elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

/** Pays an ETH invoice of 1, withdraws 0.25 of it, and waits until every send is final and booked; the withdrawal. */
async function payAndWithdraw(t: { teardown(fn: () => unknown): void }, f: EvmPayoutFixture, to: string): Promise<any> {
  await f.paidInvoice('ETH', '1');
  const stop = f.miner();
  t.teardown(stop);
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.25', to_address: to });
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed' || x.status === 'failed', 'ETH withdrawal finished', 60_000);
  await f.quiet();
  await stop();
  return done;
}

interface SendRow {
  kind: string;
  txid: string;
  gas_limit: string;
  fee_paid: string;
  amount: string;
}

const sends = (f: EvmPayoutFixture): Promise<SendRow[]> =>
  f.td.daemon.store.read.query(`SELECT kind, txid, gas_limit, fee_paid, amount FROM account_sends WHERE status IN ('mined', 'reserved') ORDER BY created_at`);

test.serial(
  'op-stack: the L1 data fee of each receipt is booked beside gas used × price, reserved before sending, and the books match the chain',
  async (t) => {
    const l1Fee = 123_456_789_000_000n;
    const f = await startEvmPayoutFixture({ provider: { l1Fee }, chain: { fee_model: 'op-stack' } });
    t.teardown(() => f.stop());
    const to = elsewhere();
    const done = await payAndWithdraw(t, f, to);
    t.is(done.status, 'completed', String(done.failure_reason));
    t.is(await f.onChain(to, 'ETH'), eth('0.25'));
    // The withdrawal's reserved network fee (charged by default) has room for the payout's L1 data fee reserve.
    t.true(eth(done.network_fee_charged) > 2n * l1Fee, `network_fee_charged ${done.network_fee_charged}`);
    const rows = await sends(f);
    const sweep = rows.find((r) => r.kind === 'sweep')!;
    const payout = rows.find((r) => r.kind === 'payout')!;
    t.truthy(sweep && payout, JSON.stringify(rows));
    for (const r of [sweep, payout]) {
      const receipt = await f.node.rpc<{ gasUsed: string; effectiveGasPrice: string }>('eth_getTransactionReceipt', [r.txid]);
      t.is(BigInt(r.fee_paid), BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice) + l1Fee, `${r.kind}: gas used × price + L1 fee`);
      t.is(f.provider!.l1Charged.get(r.txid.toLowerCase()), l1Fee, `${r.kind}: the chain took its L1 fee`);
    }
    // The native sweep left room for its L1 data fee (reserved twice over): the deposit address holds what was not taken.
    const tx = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [sweep.txid]));
    t.is(BigInt(sweep.amount), eth('1') - 21_000n * tx.maxFeePerGas! - 2n * l1Fee);
    const check = await f.booksMatchChain();
    t.true(check.ok, check.detail);
  },
);

test.serial('legacy: on a node answering an EIP-1559 base fee, fee_model legacy sweeps and pays with type 0 transactions at eth_gasPrice', async (t) => {
  const f = await startEvmPayoutFixture({ chain: { fee_model: 'legacy' } });
  t.teardown(() => f.stop());
  const base = await f.node.rpc<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
  t.true(BigInt(base.baseFeePerGas ?? '0x0') > 0n, 'the node has EIP-1559');
  const to = elsewhere();
  const done = await payAndWithdraw(t, f, to);
  t.is(done.status, 'completed', String(done.failure_reason));
  t.is(await f.onChain(to, 'ETH'), eth('0.25'));
  const rows = await sends(f);
  t.true(rows.some((r) => r.kind === 'sweep'));
  for (const r of rows) {
    const tx = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [r.txid]));
    t.is(tx.type, 0, `${r.kind} is legacy`);
    t.true(tx.gasPrice! > 0n);
  }
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test.serial('arbitrum: a native transfer gas is estimated (the L1 cost inside), and the sweep and the payout are sent with it', async (t) => {
  const f = await startEvmPayoutFixture({ provider: { transferGas: 30_000n }, chain: { fee_model: 'arbitrum' } });
  t.teardown(() => f.stop());
  const to = elsewhere();
  const done = await payAndWithdraw(t, f, to);
  t.is(done.status, 'completed', String(done.failure_reason));
  t.is(await f.onChain(to, 'ETH'), eth('0.25'));
  const rows = await sends(f);
  for (const kind of ['sweep', 'payout']) {
    const r = rows.find((x) => x.kind === kind)!;
    t.truthy(r, kind);
    t.is(r.gas_limit, '37500', `${kind}: the estimate of 30,000 padded a quarter`);
    t.is(Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [r.txid])).gasLimit, 37_500n);
  }
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
