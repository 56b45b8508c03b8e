/**
 * `coinkeep dev` with Bitcoin: the sandbox also starts a bcoin regtest node and enables BTC;
 * `coinkeep dev pay` pays a BTC invoice from the sandbox payer and mines it to its confirmations.
 * The demo account is verified and its key may withdraw: the banner's signed estimate and withdrawal
 * examples work as pasted, `coinkeep dev approve` decides the review, `coinkeep dev mine` mines.
 * Its refund example overpays a demo invoice with `dev pay --amount` and refunds the excess.
 * The chain is kept under the data dir across restarts.
 */
import test from 'ava';
import { COINKEEP_BIN } from '../../helpers/cli';
import { totpCode, totpStep } from '../../../src/team/totp';
import { bash, sandboxEnv, sandboxStarted } from '../../helpers/sandbox';
import { signRequest } from '../../helpers/signer';

const env = sandboxEnv();

test.after.always(() => env.cleanup());

test.serial('dev enables BTC on a bcoin node; dev pay pays a BTC invoice and mines it; the chain survives a restart', async (t) => {
  let dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
  const info = await sandboxStarted(dev);
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

  // The banner's refund example (issue 33 §3): dev pay --amount overpays its demo invoice, the
  // signed curl refunds the excess and waits for the payer's address; pasted twice, the same refund.
  const ex = info.refund_example;
  t.like(ex, { ticker: 'BTC', payer_amount: '0.001', pay_amount: '0.0015', excess: '0.0005' });
  t.is(ex.pay_command, `coinkeep dev pay ${ex.invoice_id} --amount 0.0015`);
  const over = await env.run(['--json', ...ex.pay_command.split(' ').slice(1)], { timeoutMs: 40000 });
  t.is(over.code, 0, over.stderr);
  t.like(over.json, { invoice_id: ex.invoice_id, amount: '0.0015', invoice_status: 'paid', paid_amount: '0.0015', overpaid_amount: '0.0005' });
  const overLine = await env.run(['dev', 'pay', invoice.id, '--amount', '0.0001'], { timeoutMs: 40000 });
  t.regex(overLine.stdout, new RegExp(`invoice ${invoice.id}: paid, paid 0\\.0021, overpaid 0\\.0001 \\(refund it: POST /v1/refunds with amount "excess"\\)`));
  const refunded = await bash(ex.refund_curl_example);
  t.is(refunded.code, 0, refunded.stderr);
  const refund = JSON.parse(refunded.stdout);
  t.like(refund, { invoice_id: ex.invoice_id, amount: '0.0005', status: 'awaiting_address', refund_id: `sandbox-refund-${ex.invoice_id.slice(-8)}` });
  // The link starts with the config's base_url (dev.yaml's; the tests move the port).
  t.regex(refund.refund_url, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/pay/${ex.invoice_id}/refund/[A-Za-z0-9_-]{43}$`));
  // A second later (the same request in the same second would be a replay of the signature).
  await new Promise((r) => setTimeout(r, 1100));
  const pastedAgain = await bash(ex.refund_curl_example);
  t.is(JSON.parse(pastedAgain.stdout).id, refund.id, pastedAgain.stdout);
  const listed = await env.run(['--json', 'refunds', 'list', '--account', info.account_id, '--as', info.owner_email]);
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(
    listed.json.items.map((r: { id: string; status: string }) => [r.id, r.status]),
    [[refund.id, 'awaiting_address']],
  );
  // Cancelled by the demo owner with their code: its hold released before the withdrawal examples.
  // The next step's code: the sandbox's own grant used the owner's code of this step at start.
  const otp = totpCode(info.owner_totp_secret, totpStep(new Date()) + 1);
  const cancelled = await env.run(['--json', 'refunds', 'cancel', '--account', info.account_id, '--as', info.owner_email, '--otp', otp, refund.id]);
  t.is(cancelled.code, 0, cancelled.stderr);
  t.like(cancelled.json, { id: refund.id, status: 'cancelled' });

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
  const again = await sandboxStarted(dev);
  let after = await bitcoinStatus();
  for (const deadline = Date.now() + 10000; after?.node_tip == null && Date.now() < deadline;) after = await bitcoinStatus();
  t.like(after, { node_tip: tip, maintenance: false }, 'the chain went on from where it stopped');
  const target = `/v1/invoices/${invoice.id}`;
  const got = await fetch(again.base_url + target, { headers: signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'GET', target }) });
  t.like(await got.json(), { status: 'paid', paid_amount: '0.0021', overpaid_amount: '0.0001' });
  // The grant is made once: the restart found it granted, and the example names the same withdrawal.
  const again2 = await bash(again.withdrawal_curl_example);
  t.like(JSON.parse(again2.stdout), { id: withdrawal.id });
  t.is((await dev.stop('SIGTERM')).code, 0);
});
