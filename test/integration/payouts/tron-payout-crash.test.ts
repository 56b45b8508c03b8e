/**
 * kill -9 of a real coinkeepd around a Tron payout's broadcast (issue 20 §4): killed right after
 * the signed payout is stored, and right after its bytes went to the node; restarted, each
 * withdrawal is completed and the chain holds exactly one payout transaction for it (read from the
 * stand-in's blocks: the treasury signed one transaction per withdrawal, each payee was paid once).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { coinId } from '../../../src/catalog/coins';
import { configFromText } from '../../../src/config/load';
import { AddressEntity } from '../../../src/db/entities/chain';
import { SignedClient } from '../../helpers/api-client';
import { CliEnv, pastStartSecond } from '../../helpers/cli';
import { startPreparedDaemon } from '../../helpers/daemon';
import { payoutMerchant } from '../../helpers/payout-fixture';
import { TronNode } from '../../helpers/tron-node';
import { elsewhere, minedFrom, RATES, tronEntry, units } from './tron-payout-fixture';

async function until(ok: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('kill -9 after the payout is stored and after it is sent: after a restart each withdrawal is completed with exactly one transaction on the chain', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  node.mine(2);
  const env = new CliEnv({ chains: [tronEntry(node, { sweep: { stake: '0' } })], rates: RATES, log_level: 'info', payouts: { batch_window_seconds: 0, replace_after_blocks: 3 } });
  t.teardown(() => env.cleanup());
  const TRX = coinId('tron', 'native');

  // Prepared in this process: a verified merchant whose key may withdraw, 300 TRX paid in and swept.
  const setup = await startPreparedDaemon(configFromText(readFileSync(env.configFile, 'utf8')));
  const { m, key } = await payoutMerchant(setup);
  node.pay(setup.addresses.gasStation('tron').address, 'native', units('1000'));
  node.mine();
  const prep = new SignedClient(setup.apiUrl, key.key_id, key.secret);
  const inv = await prep.post('/v1/invoices', { amount: '300', currency: 'TRX', coin_id: TRX }, { headers: { 'Content-Type': 'application/json' } });
  t.is(inv.status, 201, inv.text);
  node.pay(inv.json.address, 'native', units('300'));
  let treasury = '';
  await until(async () => {
    node.mine();
    treasury = (await setup.store.read.findOneBy(AddressEntity, { account_id: m.accountId, purpose: 'treasury' }))?.address ?? '';
    const [open] = await setup.store.read.query(`SELECT COUNT(*) AS n FROM evm_sends WHERE status IN ('signed', 'broadcast')`);
    return treasury !== '' && node.trxBalance(treasury) > units('290') && Number(open.n) === 0;
  }, 'the deposit swept');
  await setup.stop();

  const payees: string[] = [];
  for (const point of ['stored', 'sent'] as const) {
    const dying = await env.spawnDaemon({ env: { COINKEEP_TEST_PAYOUT_CRASH: point } });
    await pastStartSecond();
    const api = new SignedClient(dying.url, key.key_id, key.secret);
    const to = elsewhere();
    payees.push(to);
    const w = await api.post('/v1/withdrawals', { coin_id: TRX, amount: '20', to_address: to }, { headers: { 'Content-Type': 'application/json' } });
    t.is(w.status, 201, w.text);
    const exit = await dying.child.exited;
    t.is(exit.signal, 'SIGKILL', `killed itself ${point}`);
    t.is(node.pendingTxids().length, point === 'stored' ? 0 : 1, point === 'stored' ? 'nothing reached the node' : 'the payout reached the node');

    const again = await env.spawnDaemon();
    await pastStartSecond();
    const api2 = new SignedClient(again.url, key.key_id, key.secret);
    await until(async () => {
      node.mine();
      const res = await api2.get(`/v1/withdrawals/${w.json.id}`);
      return res.json.status === 'completed';
    }, `the withdrawal killed ${point} completed`);
    again.child.child.kill('SIGTERM');
    await again.child.exited;
  }
  for (const to of payees) t.is(node.trxBalance(to), units('20'), 'paid once');
  const sent = minedFrom(node, treasury);
  t.is(sent.length, 2, 'exactly one transaction per withdrawal ever left the treasury');
});
