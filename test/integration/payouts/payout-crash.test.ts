/**
 * kill -9 of a real daemon process in the middle of a payout: signed but not stored (its claim
 * rolls back), right after the signed payout is stored (before any broadcast), and right after its
 * bytes went to the node. The crash tests'
 * daemon (test/helpers/crashing-daemon.ts, the daemon with a payout checkpoint injected) kills
 * itself at that point; a production run has no such hook. A restart (bin/coinkeepd)
 * broadcasts the stored bytes: the node sees exactly one payout transaction, the withdrawal
 * completes, and the books stay true.
 */
import test from 'ava';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import { parseConfig } from '../../../src/config/schema';
import { spendableCoins } from '../../../src/chains/btc/payouts/coin-store';
import { killAllBcoins, sats, startBcoin } from '../../helpers/bcoin';
import { CliEnv } from '../../helpers/cli';
import { startPreparedDaemon, testConfig } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';
import { BTC, CONFIRMATIONS, elsewhere, payoutMerchant, until } from '../../helpers/payout-fixture';
import { btcChain } from '../chains/btc/btc-fixture';

test.after.always(killAllBcoins);

const WHEN = {
  signed: 'after signing, before the payout is stored (the claim rolls back)',
  stored: 'between signing and broadcasting',
  sent: 'right after broadcasting',
} as const;

for (const point of ['signed', 'stored', 'sent'] as const) {
  test(`kill -9 ${WHEN[point]}, restart: exactly one payout transaction on the node, the withdrawal completed once`, async (t) => {
    const node = await startBcoin();
    const chains = [btcChain(node)];
    const payouts = { batch_window_seconds: 0 };
    const env = new CliEnv({ chains, payouts, log_level: 'info' });
    t.teardown(() => env.cleanup());

    // The merchant, its withdraw key and its coins, made by the daemon in this process on the same data dir.
    const setup = await startPreparedDaemon(testConfig(env.dataDir, { chains, payouts }));
    const { m, key } = await payoutMerchant(setup);
    let api = new ApiClient(setup.apiUrl, key.key_id, key.secret);
    const inv = await api.post('/v1/invoices', { amount: '0.5', currency: 'BTC', coin_id: BTC });
    t.is(inv.status, 201);
    await node.pay([{ address: inv.body.address, value: sats('0.5') }]);
    await node.mine(CONFIRMATIONS);
    await until(async () => (await spendableCoins(setup.store.read, chains[0]!.id as string, m.accountId)).length === 1, 'the paid invoice spendable');
    const fundedAt = await node.height();
    await setup.stop();

    const first = await env.spawnCrashingDaemon(point);
    api = new ApiClient(first.url, key.key_id, key.secret);
    const to = elsewhere();
    const created = await api.post('/v1/withdrawals', { coin_id: BTC, amount: '0.1', to_address: to });
    t.is(created.status, 201, JSON.stringify(created.body));
    t.is((await first.child.exited).signal, 'SIGKILL');
    if (point !== 'sent') t.deepEqual(await node.mempool(), [], 'nothing broadcast before the kill');
    else await until(async () => (await node.mempool()).length === 1, 'the payout in the mempool before the restart');

    const second = await env.spawnDaemon();
    // After a crash the daemon refuses every signature stamped up to the second it started in (its
    // replay guard was not saved): the merchant's next requests are stamped after it.
    await new Promise((r) => setTimeout(r, 1100));
    api = new ApiClient(second.url, key.key_id, key.secret);
    let w: any;
    await until(
      async () => (w = (await api.get(`/v1/withdrawals/${created.body.id}`)).body).status === 'broadcast',
      () => `broadcast: ${JSON.stringify(w)}`,
    );
    await until(async () => (await node.mempool()).includes(w.txid), 'the stored payout in the mempool');
    t.deepEqual(await node.mempool(), [w.txid], 'one payout transaction');
    await node.mine(CONFIRMATIONS);
    await until(
      async () => (w = (await api.get(`/v1/withdrawals/${created.body.id}`)).body).status === 'completed',
      () => `completed: ${JSON.stringify(w)}`,
    );
    const balances = await api.get('/v1/balances');
    t.is(balances.status, 200, JSON.stringify(balances.body));
    t.like(
      balances.body.items.find((b: { coin_id: string }) => b.coin_id === BTC),
      { hold: '0' },
    );

    // Every block since the funding: one payment to the destination, in the withdrawal's transaction.
    const adapter = new BtcAdapter(parseConfig({ chains }).chains[0]!);
    const blocks = await adapter.blocks(fundedAt + 1, await node.height());
    const payments = blocks.flatMap((b) => b.transfers).filter((x) => x.to === to);
    t.deepEqual(
      payments.map((p) => [p.txid, p.amount]),
      [[w.txid, sats('0.1')]],
    );
    t.deepEqual(await node.mempool(), []);
    const verify = await env.run(['--json', 'ledger', 'verify']);
    t.is(verify.code, 0, verify.stderr);
    t.true(verify.json.ok);
    await second.child.stop('SIGTERM');
  });
}
