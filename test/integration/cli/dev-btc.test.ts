/**
 * `coinkeep dev` with Bitcoin: the sandbox also starts a bcoin regtest node and enables BTC;
 * `coinkeep dev pay` pays a BTC invoice from the sandbox payer and mines it to its confirmations.
 * The demo account is verified and its key may withdraw: the banner's signed estimate and withdrawal
 * examples work as pasted, `coinkeep dev approve` decides the review, `coinkeep dev mine` mines.
 * The chain is kept under the data dir across restarts.
 */
import test from 'ava';
import { COINKEEP_BIN } from '../../helpers/cli';
import { bash, sandboxEnv } from '../../helpers/sandbox';
import { signRequest } from '../../helpers/signer';

const env = sandboxEnv();

test.after.always(() => env.cleanup());

test.serial('dev enables BTC on a bcoin node; dev pay pays a BTC invoice and mines it; the chain survives a restart', async (t) => {
  let dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
  const info = JSON.parse((await dev.waitFor(/^\{.*\}\n/m, 30000))[0]);
  const bitcoin = info.chains.find((c: { id: string }) => c.id === 'bitcoin');
  t.like(bitcoin, { kind: 'btc' });
  const shown = new URL(bitcoin.rpc_url);
  t.is(shown.username + shown.password, '', "the node's API key is not printed");
  t.deepEqual(
    bitcoin.coins.map((c: { ticker: string }) => c.ticker),
    ['BTC'],
  );

  const body = JSON.stringify({ amount: '0.002', currency: 'BTC', coin_id: bitcoin.coins[0].coin_id });
  const headers = {
    ...signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'POST', target: '/v1/invoices', body }),
    'Content-Type': 'application/json',
  };
  const created = await fetch(`${info.base_url}/v1/invoices`, { method: 'POST', headers, body });
  t.is(created.status, 201);
  const invoice = (await created.json()) as { id: string; address: string };
  t.regex(invoice.address, /^rb1q/);

  const under = await env.run(['--json', 'dev', 'pay', invoice.id, '--amount', '0.0005'], { timeoutMs: 40000 });
  t.is(under.code, 0, under.stderr);
  t.like(under.json, { ticker: 'BTC', network: 'bitcoin', amount: '0.0005', to: invoice.address, credited: true, invoice_status: 'underpaid' });
  t.regex(under.json.txid, /^[0-9a-f]{64}$/);
  const rest = await env.run(['--json', 'dev', 'pay', invoice.id], { timeoutMs: 40000 });
  t.like(rest.json, { amount: '0.0015', invoice_status: 'paid', paid_amount: '0.002' });

  // What dev pay paid in can be paid out at once, with the banner's examples as printed.
  const estimate = await bash(info.estimate_curl_example);
  t.is(estimate.code, 0, estimate.stderr);
  t.like(JSON.parse(estimate.stdout), { coin_id: bitcoin.coins[0].coin_id, amount: '0.0002', network_fee_mode: 'reserved' });
  const made = await bash(info.withdrawal_curl_example);
  t.is(made.code, 0, made.stderr);
  const withdrawal = JSON.parse(made.stdout);
  // Granting withdraw is a security change: the first day's withdrawals wait in review.
  t.like(withdrawal, { amount: '0.0002', payout_id: 'sandbox-1', status: 'review', review_reason: 'pattern' });
  t.regex(withdrawal.to_address, /^rb1q/);
  const approved = await env.run(['--json', 'dev', 'approve', withdrawal.id]);
  t.is(approved.code, 0, approved.stderr);
  t.like(approved.json, { id: withdrawal.id, status: 'pending' });
  const wTarget = `/v1/withdrawals/${withdrawal.id}`;
  const read = await fetch(info.base_url + wTarget, { headers: signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'GET', target: wTarget }) });
  t.like(await read.json(), { status: 'pending' });
  const bTarget = '/v1/balances';
  const balances = (await (
    await fetch(info.base_url + bTarget, { headers: signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'GET', target: bTarget }) })
  ).json()) as { items: Array<{ coin_id: string; hold: string }> };
  t.is(balances.items.find((b) => b.coin_id === bitcoin.coins[0].coin_id)!.hold, withdrawal.total_debit);

  const bitcoinStatus = async () => (await env.run(['--json', 'status'])).json.chains.find((c: { chain_id: string }) => c.chain_id === 'bitcoin');
  const before = (await bitcoinStatus()).node_tip;
  const mined = await env.run(['--json', 'dev', 'mine', '3']);
  t.is(mined.code, 0, mined.stderr);
  t.deepEqual(
    mined.json.chains.map((c: { chain_id: string }) => c.chain_id),
    ['ethereum', 'base', 'bitcoin', 'tron'],
    'both anvils, bcoin and the Tron stand-in',
  );
  const tip = mined.json.chains.find((c: { chain_id: string }) => c.chain_id === 'bitcoin').height;
  t.true(tip >= before + 3, `${tip} after ${before}`);
  let seen = await bitcoinStatus();
  for (const deadline = Date.now() + 10000; seen.node_tip !== tip && Date.now() < deadline;) seen = await bitcoinStatus();
  t.is(seen.node_tip, tip, 'the daemon sees the mined blocks');
  t.is((await dev.stop('SIGINT')).code, 0, dev.stderr);

  dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
  const again = JSON.parse((await dev.waitFor(/^\{.*\}\n/m, 30000))[0]);
  let after = await bitcoinStatus();
  for (const deadline = Date.now() + 10000; after?.node_tip == null && Date.now() < deadline;) after = await bitcoinStatus();
  t.like(after, { node_tip: tip, maintenance: false }, 'the chain went on from where it stopped');
  const target = `/v1/invoices/${invoice.id}`;
  const got = await fetch(again.base_url + target, { headers: signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'GET', target }) });
  t.like(await got.json(), { status: 'paid', paid_amount: '0.002' });
  // The grant is made once: the restart found it granted, and the example names the same withdrawal.
  const again2 = await bash(again.withdrawal_curl_example);
  t.like(JSON.parse(again2.stdout), { id: withdrawal.id });
  t.is((await dev.stop('SIGTERM')).code, 0);
});
