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
import { CliEnv } from '../../helpers/cli';
import { startPreparedDaemon } from '../../helpers/daemon';
import { payoutAcrossKills } from '../../helpers/payout-crash';
import { payoutMerchant, until } from '../../helpers/payout-fixture';
import { TronNode } from '../../helpers/tron-node';
import { elsewhere, minedFrom, RATES, tronEntry, units } from './tron-payout-fixture';

test('kill -9 after the payout is stored and after it is sent: after a restart each withdrawal is completed with exactly one transaction on the chain', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  node.mine(2);
  const env = new CliEnv({
    chains: [tronEntry(node, { sweep: { stake: '0' } })],
    rates: RATES,
    log_level: 'info',
    payouts: { batch_window_seconds: 0, replace_after_blocks: 3 },
  });
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
    const [open] = await setup.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE status IN ('signed', 'broadcast')`);
    return treasury !== '' && node.trxBalance(treasury) > units('290') && Number(open.n) === 0;
  }, 'the deposit swept');
  await setup.stop();

  const payees = await payoutAcrossKills(t, env, key, {
    payee: elsewhere,
    body: (to) => ({ coin_id: TRX, amount: '20', to_address: to }),
    killed: async (point) =>
      t.is(node.pendingTxids().length, point === 'stored' ? 0 : 1, point === 'stored' ? 'nothing reached the node' : 'the payout reached the node'),
    mine: () => node.mine(),
  });
  for (const to of payees) t.is(node.trxBalance(to), units('20'), 'paid once');
  const sent = minedFrom(node, treasury);
  t.is(sent.length, 2, 'exactly one transaction per withdrawal ever left the treasury');
});
