/**
 * A reorganisation on a real chain: anvil goes back to a snapshot taken before the payment
 * (evm_revert) and mines a different, longer branch without it. The confirmed credit is reversed
 * with an adjustment, the invoice recomputed and invoice.reverted recorded; the ledger stays true.
 */
import test from 'ava';
import { killAllAnvils } from '../../../helpers/anvil';
import { CONFIRMATIONS, startEvmFixture } from './evm-fixture';

test.after.always(killAllAnvils);

test('a reorganisation that drops a confirmed payment reverts it: adjustment, invoice new again, invoice.reverted, ledger clean', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '2' });
  const inv = await f.createInvoice('ETH', '1');
  const snapshot = await f.node.rpc<string>('evm_snapshot');
  const txid = await f.pay(inv.address, 'ETH', '1');
  await f.node.mine(CONFIRMATIONS - 1);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.is(await f.available('ETH'), '0.98');
  const oldTip = await f.node.blockNumber();

  t.true(await f.node.rpc<boolean>('evm_revert', [snapshot]));
  await f.node.mine(CONFIRMATIONS + 2);
  t.true((await f.node.blockNumber()) > oldTip);

  const reverted = await f.waitInvoice(inv.id, (i) => i.status !== 'paid', 'the invoice recomputed');
  t.like(reverted, { status: 'new', paid_amount: '0', remaining_amount: '1' });
  t.is(await f.available('ETH'), '0');
  const txs = await f.transactions(inv.id);
  const payment = txs.find((x: { type: string }) => x.type === 'invoice_payment');
  const adjustment = txs.find((x: { type: string }) => x.type === 'adjustment');
  t.like(payment, { status: 'reverted', txid });
  t.like(adjustment, { status: 'confirmed', amount: '-1', fee: '-0.02', net_amount: '-0.98', txid });
  const events = await f.events('invoice.reverted');
  t.is(events.length, 1);
  t.is(events[0]!.data.invoice.id, inv.id);
  t.true(await f.ledgerClean());

  // The same payment mined again on the new branch is credited again, once.
  await f.pay(inv.address, 'ETH', '1');
  await f.node.mine(CONFIRMATIONS - 1);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid again');
  t.is(await f.available('ETH'), '0.98');
  t.true(await f.ledgerClean());
});

test('a payment mined again in a block of the new branch stays credited once, not reverted', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '5');
  const snapshot = await f.node.rpc<string>('evm_snapshot');
  const txid = await f.pay(inv.address, 'USDT', '5');
  const raw = await f.node.rpc<string>('eth_getRawTransactionByHash', [txid]);
  await f.node.mine(CONFIRMATIONS - 1);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  const oldBlock = (await f.transactions(inv.id))[0];

  // The new branch, in one step as the watcher sees it: another block at the payment's height holding
  // another transaction and the same signed payment.
  await f.node.rpc('evm_revert', [snapshot]);
  await f.node.rpc('evm_setAutomine', [false]);
  const [, , other] = await f.node.rpc<string[]>('eth_accounts');
  await f.node.rpc('eth_sendTransaction', [{ from: other, to: '0x000000000000000000000000000000000000dEaD', value: '0x1' }]);
  t.is(await f.node.rpc<string>('eth_sendRawTransaction', [raw]), txid);
  await f.node.mine(CONFIRMATIONS + 1);
  await f.scanned();

  t.like(await f.invoice(inv.id), { status: 'paid', paid_amount: '5' });
  t.is(await f.available('USDT'), '5');
  const txs = await f.transactions(inv.id);
  t.is(txs.length, 1);
  t.like(txs[0], { id: oldBlock.id, status: 'confirmed', txid });
  t.is((await f.events('invoice.reverted')).length, 0);
  t.true(await f.ledgerClean());
});

test("after a reorganisation to a shorter branch, a deeper one that drops the payment's block still reverts the payment", async (t) => {
  // Headers are kept 3 blocks under the scanned height.
  const f = await startEvmFixture({ watch: { reorg_max_depth: 3 } });
  t.teardown(() => f.stop());
  const [, , other] = await f.node.rpc<string[]>('eth_accounts');
  // A block of its own on a new branch: a transaction no other branch holds.
  const branchBlock = () => f.node.rpc('eth_sendTransaction', [{ from: other, to: '0x000000000000000000000000000000000000dEaD', value: '0x1' }]);
  const scannedTo = async (height: number) => {
    const deadline = Date.now() + 10_000;
    while (f.td.daemon.chains.status()[0]!.scanned_height !== height) {
      if (Date.now() > deadline) throw new Error(`not scanned to ${height}: ${JSON.stringify(f.td.daemon.chains.status()[0])}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const inv = await f.createInvoice('ETH', '1');
  const beforePayment = await f.node.rpc<string>('evm_snapshot');
  await f.pay(inv.address, 'ETH', '1');
  const paidAt = await f.node.blockNumber();
  await f.node.mine(1);
  const abovePayment = await f.node.rpc<string>('evm_snapshot');
  await f.node.mine(3);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');

  // A shorter branch from the block above the payment's: the scanned height goes down by two.
  t.true(await f.node.rpc<boolean>('evm_revert', [abovePayment]));
  await branchBlock();
  await scannedTo(paidAt + 2);
  t.like(await f.invoice(inv.id), { status: 'paid' });

  // Then a longer branch from below the payment's block.
  t.true(await f.node.rpc<boolean>('evm_revert', [beforePayment]));
  await branchBlock();
  await f.node.mine(4);
  await scannedTo(paidAt + 4);
  t.like(await f.invoice(inv.id), { status: 'new', paid_amount: '0' });
  t.is(await f.available('ETH'), '0');
  t.like(f.td.daemon.chains.status()[0], { maintenance: false, last_error: null });
  t.true(await f.ledgerClean());
});
