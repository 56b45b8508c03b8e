/**
 * `coinkeep ledger reconcile` as an operator runs it: per coin, what the books say the wallet holds
 * against what the node shows (bcoin: the stored outputs unspent; anvil: balances at every wallet
 * address; the Tron stand-in: TRX and TRC-20 balances). Clean after invoices are paid, including a
 * payment the node shows before the books credit it; a difference exits non-zero naming the coin.
 */
import test from 'ava';
import { TronWeb } from 'tronweb';
import { TronAdapter } from '../../../src/chains/tron/tron-adapter';
import { parseConfig } from '../../../src/config/schema';
import { killAllAnvils } from '../../helpers/anvil';
import { killAllBcoins } from '../../helpers/bcoin';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile, type TestDaemon } from '../../helpers/daemon';
import { TronNode } from '../../helpers/tron-node';
import { BTC, CONFIRMATIONS as BTC_CONFIRMATIONS, startBtcFixture } from '../chains/btc/btc-fixture';
import { CONFIRMATIONS as EVM_CONFIRMATIONS, startEvmFixture } from '../chains/evm/evm-fixture';

test.after.always(killAllBcoins);
test.after.always(killAllAnvils);

/** The command's exit code, stderr and its --json report (printed also when it exits non-zero). */
async function reconcile(td: TestDaemon) {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), '--json', 'ledger', 'reconcile'], { timeoutMs: 60_000 });
  return { ...r, json: JSON.parse(r.stdout) };
}
const table = (td: TestDaemon) => runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), 'ledger', 'reconcile'], { timeoutMs: 60_000 });
const line = (report: { coins: Array<{ ticker: string }> }, ticker: string) => report.coins.find((c) => c.ticker === ticker);

test.serial(
  'bcoin: clean after an invoice is paid (fee book included); a payment the node shows before the books credit it is uncredited_in, still clean',
  async (t) => {
    const f = await startBtcFixture();
    t.teardown(() => f.stop());
    await f.setAccount({ platform_fee_percent: '1' });
    const inv = await f.createInvoice('0.5');
    await f.pay(inv.address, '0.5');
    await f.node.mine(BTC_CONFIRMATIONS);
    await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');

    const clean = await reconcile(f.td);
    t.is(clean.code, 0, clean.stderr);
    t.true(clean.json.ok);
    t.like(line(clean.json, 'BTC'), { coin_id: BTC, chain_id: 'bitcoin', books: '0.5', node: '0.5', difference: '0', uncredited_in: '0', status: 'ok' });

    const second = await f.createInvoice('0.1');
    await f.pay(second.address, '0.1');
    await f.node.mine(1);
    await f.waitScanned();
    const early = await reconcile(f.td);
    t.is(early.code, 0, early.stderr);
    t.like(line(early.json, 'BTC'), { books: '0.5', node: '0.6', uncredited_in: '0.1', difference: '0', status: 'ok' });

    const text = await table(f.td);
    t.is(text.code, 0, text.stderr);
    t.regex(text.stdout, /^COIN\s+CHAIN\s+BOOKS\s+UNCREDITED_IN\s+IN_FLIGHT_OUT\s+IN_FLIGHT_IN\s+NODE\s+DIFFERENCE\s+STATUS$/m);
    t.regex(text.stdout, /^BTC\s+bitcoin\s+0\.5\s+0\.1\s+0\s+0\s+0\.6\s+0\s+ok$/m);
  },
);

test.serial('bcoin: a ledger row removed from the books is a difference: non-zero exit naming BTC', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const inv = await f.createInvoice('0.2');
  await f.pay(inv.address, '0.2');
  await f.node.mine(BTC_CONFIRMATIONS);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.is((await reconcile(f.td)).code, 0);

  // The platform fee's entry and what it added to the fee book vanish (a lost row).
  await f.td.daemon.store.write(async (em) => {
    await em.query("DELETE FROM ledger_entries WHERE code = 'platform_fee'");
    await em.query("UPDATE ledger_balances SET credits_posted = '0' WHERE book = 'fees'");
  });
  const r = await reconcile(f.td);
  t.is(r.code, 1);
  t.regex(r.stderr, /BTC on bitcoin differs by 0\.002/);
  t.false(r.json.ok);
  t.like(line(r.json, 'BTC'), { books: '0.198', node: '0.2', difference: '0.002', status: 'difference' });
});

test.serial('anvil: clean after ETH and USDT invoices are paid; ETH put at a wallet address outside the books is a difference naming ETH', async (t) => {
  // No sweeps here (their own tests reconcile them): the payments stay at the invoices' addresses.
  const f = await startEvmFixture({ chain: { sweep: { min: { ETH: '1000', USDT: '1000000' } } } });
  t.teardown(() => f.stop());
  const eth = await f.createInvoice('ETH', '0.5');
  const usdt = await f.createInvoice('USDT', '25.5');
  await f.pay(eth.address, 'ETH', '0.5');
  await f.pay(usdt.address, 'USDT', '25.5');
  await f.node.mine(EVM_CONFIRMATIONS);
  await f.waitInvoice(eth.id, (i) => i.status === 'paid', 'ETH paid');
  await f.waitInvoice(usdt.id, (i) => i.status === 'paid', 'USDT paid');

  const clean = await reconcile(f.td);
  t.is(clean.code, 0, clean.stderr);
  t.like(line(clean.json, 'ETH'), { books: '0.5', node: '0.5', status: 'ok' });
  t.like(line(clean.json, 'USDT'), { books: '25.5', node: '25.5', status: 'ok' });

  // Value the chain core never sees as a transfer: the node's state set directly.
  await f.node.rpc('anvil_setBalance', [eth.address, '0x' + (10n ** 18n).toString(16)]);
  await f.node.mine(1);
  await f.scanned();
  const r = await reconcile(f.td);
  t.is(r.code, 1);
  t.regex(r.stderr, /ETH on ethereum differs by 0\.5/);
  t.like(line(r.json, 'ETH'), { books: '0.5', node: '1', difference: '0.5', status: 'difference' });
  t.like(line(r.json, 'USDT'), { status: 'ok' });
});

test('tron: the adapter counts TRX (getaccount) and the TRC-20 (balanceOf) at every address asked for', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  const chain = parseConfig({
    chains: [{ id: 'tron', kind: 'tron', full_node_url: node.url, confirmations: 19, tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }] }],
  }).chains[0]!;
  const adapter = new TronAdapter(chain);
  const [a, b, empty] = ['11', '22', '33'].map((k) => TronWeb.address.fromPrivateKey(k.repeat(32)) as string);
  node.pay(a!, 'native', 2_000_000n);
  node.pay(b!, 'native', 500_000n);
  node.pay(b!, node.usdt, 7_250_000n);
  node.mine();
  const held = await adapter.holdings({ outputs: [], addresses: [a!, b!, empty!], assets: ['native', node.usdt], height: null });
  t.deepEqual(
    [...held],
    [
      ['native', 2_500_000n],
      [node.usdt, 7_250_000n],
    ],
  );
});
