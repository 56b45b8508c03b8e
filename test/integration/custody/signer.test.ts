/**
 * The signer process (issue 36 §1, PRODUCT §18): it signs only a spend that matches the rows it reads
 * itself (the paying account's coins, a stored withdrawal's destination and amount) within its hourly
 * limit, refusing anything else with a logged reason; without it payouts wait while the API serves,
 * and once it is back they complete; a signer killed (-9) mid-payout signs nothing twice.
 */
import test from 'ava';
import { Transaction } from 'bitcoinjs-lib';
import { adminCall } from '../../../src/cli/admin-client';
import type { StatusResponse } from '../../../src/admin/contract';
import { schemeFor } from '../../../src/chains/derivation';
import { spendableCoins } from '../../../src/chains/btc/payouts/coin-store';
import { createLogger } from '../../../src/shared/logger';
import { SignerClient } from '../../../src/wallet/signer-client';
import { SignRefused } from '../../../src/wallet/signer-protocol';
import { runSigner } from '../../../src/wallet/signer-process/main';
import type { SignerServer } from '../../../src/wallet/signer-process/server';
import { findTransaction, killAllBcoins, sats } from '../../helpers/bcoin';
import { inProcessSigner } from '../../helpers/signer-process';
import { BTC, candidates, CONFIRMATIONS, elsewhere, paid, startPayoutFixture, until, type PayoutFixture } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

/** A spend of the merchant's coins paying `to` `amount` sat, its change back to the account's change chain (index 0). */
async function spendOf(f: PayoutFixture, accountId: string, to: string, amount: bigint) {
  const d = f.td.daemon;
  const coins = await spendableCoins(d.store.read, f.chainId, accountId);
  const branch = (await d.addresses.branchFor(accountId))!;
  const chain = d.config.chains[0]!;
  await d.wallet.prepare(schemeFor(chain), branch, 1);
  const change = d.wallet.derive(schemeFor(chain), branch, 0, 1);
  const total = coins.reduce((s, c) => s + c.value, 0n);
  return {
    chain,
    coins: coins.map((c) => ({ txid: c.txid, vout: c.vout, value: c.value, path: c.path })),
    outputs: [
      { address: to, value: amount },
      { address: change.address, value: total - amount - 10_000n, path: change.path },
    ],
  };
}

test('the signer refuses a payout not stored, another account inputs, a changed destination or amount, another account withdrawal and one above its hourly limit, each logged with its reason; what matches is signed', async (t) => {
  const lines: string[] = [];
  const f = await startPayoutFixture({
    // No payout worker: the withdrawals stay pending, stored; this test asks the signer itself.
    payouts: { enabled: false },
    // 0.147 BTC an hour at 68,000 USD.
    overrides: { signer: { max_per_hour: { BTC: '10000' } } },
    daemon: { signer: (config) => inProcessSigner(config, createLogger({ write: (l) => lines.push(l) })) },
  });
  t.teardown(() => f.stop());
  const other = await f.anotherMerchant();
  await f.fund('0.5');
  await other.fund('0.3');
  const to = elsewhere();
  const w1 = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  const client = new SignerClient(f.td.daemon.signer.socketPath, createLogger({ write: () => undefined }));
  t.teardown(() => client.close());
  const payout = (ids: string[], account = f.accountId) => ({ kind: 'payout', account_id: account, withdrawal_ids: ids });

  const refused = async (what: string, p: Promise<unknown>, code: string) => {
    const err = await t.throwsAsync(p, { instanceOf: SignRefused }, what);
    t.is((err as SignRefused | undefined)?.code, code, `${what}: ${err?.message}`);
    await until(async () => lines.some((l) => l.includes('"signer refused"') && l.includes(`"code":"${code}"`)), `the refusal ${code} logged`);
  };
  await refused(
    'a withdrawal not stored',
    client.signBitcoin(await spendOf(f, f.accountId, to, sats('0.1')), payout(['01a00000-0000-7000-8000-000000000000'])),
    'not_stored',
  );
  const foreign = await spendOf(f, other.accountId, to, sats('0.1'));
  await refused("another account's inputs", client.signBitcoin(foreign, payout([w1.id])), 'foreign_input');
  await refused('a changed destination', client.signBitcoin(await spendOf(f, f.accountId, elsewhere(), sats('0.1')), payout([w1.id])), 'changed_destination');
  await refused('a changed amount', client.signBitcoin(await spendOf(f, f.accountId, to, sats('0.11')), payout([w1.id])), 'changed_amount');
  await refused(
    "another account's withdrawal",
    client.signBitcoin(await spendOf(f, other.accountId, to, sats('0.1')), payout([w1.id], other.accountId)),
    'foreign_withdrawal',
  );
  await refused(
    'a sweep paying out of the wallet',
    client.signBitcoin(await spendOf(f, f.accountId, to, sats('0.1')), { kind: 'cancel', account_id: f.accountId, withdrawal_ids: [] }),
    'changed_destination',
  );

  // What matches its row is signed, and counts toward the hour (again for the same withdrawal: once).
  const signed = await client.signBitcoin(await spendOf(f, f.accountId, to, sats('0.1')), payout([w1.id]));
  t.is(Transaction.fromHex(signed.raw).getId(), signed.txid);
  t.truthy(
    await client.signBitcoin(await spendOf(f, f.accountId, to, sats('0.1')), payout([w1.id])),
    'a replacement of the same withdrawal is not counted again',
  );
  const w2 = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  await refused('above the hourly limit', client.signBitcoin(await spendOf(f, f.accountId, to, sats('0.1')), payout([w2.id])), 'hourly_limit');
  t.true(lines.some((l) => l.includes('"signer signed"') && l.includes(w1.id)));
  t.false(
    lines.some((l) => /abandon|privateKey|private_key/.test(l)),
    'no key material in the log',
  );
  // Nothing changed: both withdrawals still pending.
  t.is((await f.get(w1.id)).status, 'pending');
  t.is((await f.get(w2.id)).status, 'pending');
});

test('without the signer payouts wait while the API serves and coinkeep status says so; once it is back the payout completes', async (t) => {
  let server: SignerServer | null = null;
  let socket = '';
  const f = await startPayoutFixture({
    daemon: {
      signer: (config) => async (socketPath) => {
        socket = socketPath;
        server = await runSigner(config, { socketPath, memoryJournal: true });
        return { close: async () => server?.close() };
      },
    },
  });
  t.teardown(() => f.stop());
  await f.fund('0.5');
  const config = f.td.daemon.config;
  await server!.close();
  server = null;
  await until(async () => !(await adminCall<StatusResponse>(config.data_dir, 'GET', '/admin/status')).signer!.up, 'the status says the signer is down', 20_000);
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  // A few worker runs: the withdrawal waits, pending, nothing failed; invoices and reads go on.
  await new Promise((r) => setTimeout(r, 3000));
  t.like(await f.get(w.id), { status: 'pending', failure_reason: null });
  t.is((await f.api.get('/v1/balances')).status, 200);
  t.is((await f.api.post('/v1/invoices', { amount: '0.01', currency: 'BTC', coin_id: BTC })).status, 201);
  const status = await adminCall<StatusResponse>(config.data_dir, 'GET', '/admin/status');
  t.like(status.signer, { mode: 'in_process', up: false });

  server = await runSigner(config, { socketPath: socket, memoryJournal: true });
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast once the signer is back', 60_000);
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.truthy(await findTransaction(f.node, sent.txid));
  await until(async () => (await adminCall<StatusResponse>(config.data_dir, 'GET', '/admin/status')).signer!.up, 'the status says the signer is up', 20_000);
});

test('the real child signer killed (kill -9) while payouts are made is started again; every withdrawal is paid once, by one transaction', async (t) => {
  const f = await startPayoutFixture({ daemon: { signer: 'child' } });
  t.teardown(() => f.stop());
  await f.fund('0.3', '0.3', '0.3');
  const daemon = f.td.daemon;
  t.like(daemon.signerStatus(), { mode: 'child', up: true });
  const firstPid = daemon.signerPid()!;
  const ws = [];
  for (let i = 0; i < 3; i++) ws.push(await f.withdraw({ coin_id: BTC, amount: '0.05', to_address: elsewhere() }));
  process.kill(firstPid, 'SIGKILL');
  for (let i = 0; i < 2; i++) ws.push(await f.withdraw({ coin_id: BTC, amount: '0.05', to_address: elsewhere() }));
  await until(async () => daemon.signerPid() !== null && daemon.signerPid() !== firstPid, 'the child started again', 30_000);
  for (const w of ws) await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast' || x.status === 'completed', 'sent', 90_000);
  await f.node.mine(CONFIRMATIONS);
  for (const w of ws) {
    const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 60_000);
    // Signed once: one candidate, which pays its destination exactly its amount.
    t.deepEqual(await candidates(f, w.id), [done.txid]);
    t.is(paid(f, await findTransaction(f.node, done.txid), w.to_address), sats('0.05'));
  }
  t.true(daemon.signerStatus().restarts >= 1);
  t.true(await f.ledgerClean());
});
