/**
 * Withdrawals as SPEC and issue 16 §1–§2 state them, beyond the single refusals: the order of the
 * checks (a request failing several gets the first), a destination the chain cannot pay plainly,
 * cancel in every state, review decided through the CLI, each security change that sends payouts
 * to review, and the list's filters, pages and XLSX export.
 */
import test, { type ExecutionContext } from 'ava';
import { address as btcAddress, networks } from 'bitcoinjs-lib';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { WithdrawalEntity, type WithdrawalStatus } from '../../../src/db/entities/withdrawals';
import { verifyLedger } from '../../../src/ledger/verify';
import { Amount } from '../../../src/shared/amount';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile } from '../../helpers/daemon';
import { COINS, type ApiResponse } from '../../helpers/invoice-fixture';
import { signedGet } from '../../helpers/signed-get';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

const body = (over: Record<string, unknown> = {}) => ({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, ...over });

async function fixture(t: ExecutionContext, funds = '1'): Promise<WithdrawalFixture> {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund(funds);
  return f;
}

function refused(t: ExecutionContext, res: ApiResponse, status: number, code: string, what: string) {
  t.is(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
  t.is(res.body.error?.code, code, what);
}

const eventsOf = async (f: WithdrawalFixture, id: string): Promise<string[]> =>
  (await f.td.daemon.store.read.query(`SELECT type FROM events WHERE object_id = '${id}' ORDER BY seq`)).map((e: { type: string }) => e.type);

test('a request failing several checks gets the first in SPEC order, and nothing is created or held at any step', async (t) => {
  const f = await fixture(t, '0.5');
  const nothing = async (what: string) => {
    t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 }, what);
    t.deepEqual(await f.balance(), { available: '0.5', hold: '0' }, what);
  };
  const readOnly = await f.key(['read']);
  // Everything wrong at once: unverified, whitelist enforced, a malformed address, an amount with too many decimals and above the balance.
  await f.setAccount({ verified: false, withdrawal_whitelist_enforced: true });
  const worst = body({ to_address: 'not-an-address', amount: '0.000000001' });

  // A frozen account answers account_frozen on every key (SPEC 6), before anything else.
  await f.td.daemon.team.freeze(f.accountId, { kind: 'member', email: f.owner });
  refused(t, await readOnly.post('/v1/withdrawals', worst), 403, 'account_frozen', 'frozen');
  await f.td.daemon.team.unfreeze(f.accountId);

  refused(t, await readOnly.post('/v1/withdrawals', worst), 403, 'auth.permission_denied', 'no withdraw');
  refused(t, await f.api.post('/v1/withdrawals', worst), 403, 'kyb_required', 'unverified');
  await f.setAccount({ verified: true });
  refused(t, await f.api.post('/v1/withdrawals', worst), 403, 'forbidden', 'not whitelisted');
  await f.setAccount({ withdrawal_whitelist_enforced: false });
  refused(t, await f.api.post('/v1/withdrawals', worst), 422, 'address_refused', 'malformed address');
  refused(t, await f.api.post('/v1/withdrawals', body({ amount: '0.000000001' })), 400, 'validation_error', 'amount');
  await nothing('after each refusal so far');

  // insufficient_funds before the sensitive-operation limit: a payout that cannot be held is not counted.
  for (let i = 0; i < 10; i++) t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.001', payout_id: `n-${i}` }))).status, 201);
  const { withdrawals, holds } = await f.counts();
  refused(t, await f.api.post('/v1/withdrawals', body({ amount: '1' }), { 'Idempotency-Key': 'k-order' }), 409, 'conflict', 'insufficient');
  refused(t, await f.api.post('/v1/withdrawals', body({ amount: '0.001' }), { 'Idempotency-Key': 'k-order' }), 429, 'rate_limited', 'over the limit');
  t.deepEqual(await f.counts(), { withdrawals, holds }, 'neither was created');
  t.is(
    await f.td.daemon.store.read.query("SELECT count(*) AS n FROM withdrawal_keys WHERE key = 'k-order'").then((r: Array<{ n: number }>) => Number(r[0]!.n)),
    0,
    'the key stays free',
  );
});

test('a destination the chain cannot pay plainly (a witness version with no standard template) is address_refused', async (t) => {
  const f = await fixture(t);
  const future = btcAddress.toBech32(Buffer.alloc(32, 7), 2, networks.regtest.bech32);
  t.regex(future, /^bcrt1z/);
  refused(t, await f.api.post('/v1/withdrawals', body({ to_address: future })), 422, 'address_refused', 'witness v2');
  refused(t, await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1', to_address: future }), 422, 'address_refused', 'estimate');
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
  // A taproot output is a standard template: accepted.
  const taproot = btcAddress.toBech32(Buffer.alloc(32, 7), 1, networks.regtest.bech32);
  t.is((await f.api.post('/v1/withdrawals', body({ to_address: taproot }))).status, 201);
});

test('cancel: allowed in pending, review and awaiting_approval (hold released, withdrawal.cancelled); 409 from processing on, nothing changed', async (t) => {
  const f = await fixture(t, '2');
  const late: Array<[WithdrawalStatus, string]> = [];
  for (const status of ['processing', 'broadcast', 'completed', 'failed', 'rejected'] as const) {
    const w = await f.api.post('/v1/withdrawals', body({ amount: '0.01', payout_id: `late-${status}` }));
    t.is(w.status, 201);
    // The payout worker's states, set as it would leave them (the worker is not part of this test).
    await f.td.daemon.store.write((em) => em.update(WithdrawalEntity, { id: w.body.id }, { status }));
    late.push([status, w.body.id]);
  }
  const pending = await f.api.post('/v1/withdrawals', body({ amount: '0.01', payout_id: 'early-pending' }));
  await f.setAccount({ dual_approval_threshold: '1000' });
  const awaiting = await f.api.post('/v1/withdrawals', body({ payout_id: 'early-awaiting' }));
  t.is(awaiting.body.status, 'awaiting_approval');
  await f.setAccount({ dual_approval_threshold: null });
  await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'new@example.com', 'developer');
  const review = await f.api.post('/v1/withdrawals', body({ amount: '0.2', payout_id: 'early-review' }));
  t.is(review.body.status, 'review');

  const before = await f.balance();
  for (const [status, id] of late) {
    const res = await f.api.post(`/v1/withdrawals/${id}/cancel`);
    refused(t, res, 409, 'conflict', status);
    t.is(res.body.error.details.status, status);
    t.is((await f.api.get(`/v1/withdrawals/${id}`)).body.status, status, `${status} stays`);
  }
  t.deepEqual(await f.balance(), before, 'refused cancels release nothing');

  let { available } = before;
  for (const w of [pending, awaiting, review]) {
    const c = await f.api.post(`/v1/withdrawals/${w.body.id}/cancel`);
    t.is(c.status, 200, JSON.stringify(c.body));
    t.is(c.body.status, 'cancelled');
    t.is((await eventsOf(f, w.body.id)).at(-1), 'withdrawal.cancelled');
    const after = await f.balance();
    t.is(Amount.of(after.available).minus(Amount.of(available)).toString(), w.body.total_debit, `${w.body.payout_id}'s total_debit returns to available`);
    available = after.available;
  }
  t.true((await f.td.daemon.store.snapshot((em) => verifyLedger(em))).ok);
});

test('a review is approved through the CLI by an admin and rejected by an owner (two-factor code, security log); a developer cannot decide; show reads it', async (t) => {
  const f = await fixture(t);
  const cli = (args: string[]) => runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', ...args], { timeoutMs: 60_000 });
  await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'dev@example.com', 'developer');
  // The owner holds the secret of the key that asks: the approval is a second person's (PRODUCT §14).
  const adminOtp = new RealOtp((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@example.com', 'admin')).member.totp_secret);
  const a = await f.api.post('/v1/withdrawals', body({ payout_id: 'r-a' }));
  const b = await f.api.post('/v1/withdrawals', body({ payout_id: 'r-b', amount: '0.2' }));
  t.like(a.body, { status: 'review', review_reason: 'pattern' });
  t.like(b.body, { status: 'review', review_reason: 'pattern' });

  const shown = await cli(['withdrawals', 'show', '--account', f.accountId, '--as', 'dev@example.com', a.body.id]);
  t.is(shown.code, 0, shown.stderr);
  t.like(shown.json, { id: a.body.id, status: 'review', review_reason: 'pattern' });
  const byDev = await cli(['withdrawals', 'approve', '--account', f.accountId, '--as', 'dev@example.com', '--otp', '000000', a.body.id]);
  t.not(byDev.code, 0);
  t.regex(byDev.stderr, /forbidden/);
  t.is((await f.api.get(`/v1/withdrawals/${a.body.id}`)).body.status, 'review');

  const approved = await cli(['withdrawals', 'approve', '--account', f.accountId, '--as', 'admin@example.com', '--otp', await adminOtp.next(), a.body.id]);
  t.is(approved.code, 0, approved.stderr);
  t.like(approved.json, { id: a.body.id, status: 'pending', review_reason: 'pattern' });
  const rejected = await cli(['withdrawals', 'reject', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), b.body.id]);
  t.is(rejected.code, 0, rejected.stderr);
  t.is(rejected.json.status, 'rejected');
  t.deepEqual(await eventsOf(f, b.body.id), ['withdrawal.review', 'withdrawal.rejected']);
  t.deepEqual(await f.balance(), { available: '0.899975', hold: '0.100025' }, 'the approved one stays held, the rejected one is released');

  const log = await f.td.daemon.store.read.find(SecurityLogEntity, { where: { account_id: f.accountId }, order: { created_at: 'ASC' } });
  const decisions = log.filter((e) => e.action.startsWith('withdrawal.')).map((e) => [e.action, e.actor, JSON.parse(e.details).withdrawal_id]);
  t.deepEqual(decisions, [
    ['withdrawal.approved', 'admin@example.com', a.body.id],
    ['withdrawal.rejected', f.owner, b.body.id],
  ]);
  const listed = await cli(['withdrawals', 'list', '--account', f.accountId, '--as', f.owner, '--status', 'pending']);
  t.deepEqual(
    listed.json.items.map((i: { id: string }) => i.id),
    [a.body.id],
  );
});

test('every security change of the last 24 hours sends new payouts to review (pattern): withdraw granted, member added, role changed, whitelist changed', async (t) => {
  const changes: Array<[string, (f: WithdrawalFixture) => Promise<unknown>]> = [
    [
      'withdraw granted',
      (f) => f.td.daemon.keys.create(f.accountId, { email: f.owner, otp: f.ownerOtp.next() }, { name: 'another', permissions: ['read', 'withdraw'] }),
    ],
    ['member added', (f) => f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'm@example.com', 'developer')],
    [
      'role changed',
      async (f) => {
        await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'r@example.com', 'developer');
        await f.td.daemon.store.write((em) =>
          em.update(SecurityLogEntity, { account_id: f.accountId }, { created_at: new Date(Date.now() - 25 * 3600 * 1000).toISOString() }),
        );
        t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.01' }))).body.status, 'pending', 'a day-old change no longer counts');
        return f.td.daemon.team.setRole(f.accountId, { kind: 'operator' }, 'r@example.com', 'admin');
      },
    ],
    [
      'whitelist changed',
      (f) =>
        f.td.daemon.withdrawals.whitelist.add(f.accountId, { kind: 'member', email: f.owner, otp: f.ownerOtp.next() }, { coin_id: COINS.BTC, address: PAY_TO }),
    ],
  ];
  for (const [what, change] of changes) {
    const f = await fixture(t);
    t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.01', payout_id: 'before' }))).body.status, 'pending', `before: ${what}`);
    await change(f);
    const after = await f.api.post('/v1/withdrawals', body({ amount: '0.01', payout_id: 'after' }));
    t.like(after.body, { status: 'review', review_reason: 'pattern' }, what);
  }
});

test('GET /v1/withdrawals filters by coin_id and created_from/created_to, pages by cursor, and exports the same list as XLSX', async (t) => {
  const f = await fixture(t);
  const made: string[] = [];
  for (let i = 0; i < 3; i++) made.push((await f.api.post('/v1/withdrawals', body({ amount: '0.01', payout_id: `l-${i}` }))).body.id);
  const old = '2026-01-01T00:00:00.000Z';
  await f.td.daemon.store.write((em) => em.update(WithdrawalEntity, { id: made[0] }, { created_at: old }));

  t.deepEqual(
    (await f.api.get(`/v1/withdrawals?coin_id=${COINS.BTC}`)).body.items.map((w: { id: string }) => w.id),
    [made[2], made[1], made[0]],
  );
  t.deepEqual((await f.api.get(`/v1/withdrawals?coin_id=${COINS.ETH}`)).body.items, []);
  t.deepEqual(
    (await f.api.get('/v1/withdrawals?created_to=2026-01-02T00:00:00Z')).body.items.map((w: { id: string }) => w.id),
    [made[0]],
  );
  t.deepEqual(
    (await f.api.get('/v1/withdrawals?created_from=2026-01-02T00:00:00Z')).body.items.map((w: { id: string }) => w.id),
    [made[2], made[1]],
  );
  refused(t, await f.api.get('/v1/withdrawals?created_from=yesterday'), 400, 'validation_error', 'a bad time');

  const first = await f.api.get('/v1/withdrawals?limit=2');
  t.deepEqual(
    first.body.items.map((w: { id: string }) => w.id),
    [made[2], made[1]],
  );
  t.truthy(first.body.next_cursor);
  const second = await f.api.get(`/v1/withdrawals?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
  t.deepEqual(
    second.body.items.map((w: { id: string }) => w.id),
    [made[0]],
  );
  t.is(second.body.next_cursor, null);

  const xlsx = await signedGet(f.td.url, { keyId: f.api.keyId, secret: f.api.secret }, '/v1/withdrawals?format=xlsx');
  t.is(xlsx.status, 200);
  t.regex(xlsx.headers.get('content-type') ?? '', /spreadsheetml/);
  t.is(xlsx.bytes.subarray(0, 2).toString('latin1'), 'PK', 'a zip (XLSX) file');
});

test('network_fee_mode: the estimate and the withdrawal take actual (the default is reserved, the same reserve is held); another value is 400 and creates nothing', async (t) => {
  const f = await fixture(t);
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1', network_fee_mode: 'actual' });
  t.is(est.status, 200, JSON.stringify(est.body));
  t.like(est.body, { network_fee_mode: 'actual', total_debit: '0.100025' });
  const w = await f.api.post('/v1/withdrawals', body({ network_fee_mode: 'actual' }));
  t.is(w.status, 201, JSON.stringify(w.body));
  t.like(w.body, { network_fee_mode: 'actual', network_fee_reserved: est.body.network_fee_reserved, total_debit: '0.100025' });
  t.deepEqual(await f.balance(), { available: '0.899975', hold: '0.100025' });
  refused(t, await f.api.post('/v1/withdrawals', body({ network_fee_mode: 'cheap', payout_id: 'x' })), 400, 'validation_error', 'unknown mode');
  t.deepEqual(await f.counts(), { withdrawals: 1, holds: 1 });
});

test('the whitelist is changed only by an owner or admin with a fresh two-factor code, each change in the security log', async (t) => {
  const f = await fixture(t);
  const { whitelist } = f.td.daemon.withdrawals;
  await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'dev@example.com', 'developer');
  await t.throwsAsync(whitelist.add(f.accountId, { kind: 'member', email: 'dev@example.com', otp: '000000' }, { coin_id: COINS.BTC, address: PAY_TO }), {
    message: /role/,
  });
  await t.throwsAsync(whitelist.add(f.accountId, { kind: 'member', email: f.owner }, { coin_id: COINS.BTC, address: PAY_TO }), { message: /two-factor/ });
  t.deepEqual(await whitelist.list(f.accountId, { kind: 'member', email: f.owner }), []);
  const code = f.ownerOtp.next();
  const added = await whitelist.add(f.accountId, { kind: 'member', email: f.owner, otp: code }, { coin_id: COINS.BTC, address: PAY_TO });
  await t.throwsAsync(whitelist.remove(f.accountId, { kind: 'member', email: f.owner, otp: code }, added.id), { message: /already used/ });
  await whitelist.remove(f.accountId, { kind: 'member', email: f.owner, otp: f.ownerOtp.next() }, added.id);
  const log = await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId });
  t.deepEqual(
    log
      .filter((e) => e.action.startsWith('whitelist.'))
      .map((e) => [e.action, e.actor])
      .sort(),
    [
      ['whitelist.added', f.owner],
      ['whitelist.removed', f.owner],
    ],
  );
});

test('a payout is decided on the key and the account as they are now: after payouts, the operator unverifies the account (kyb_required), then an owner requires the key rotated (permission_denied); nothing more is created or held', async (t) => {
  const f = await fixture(t);
  t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.01' }))).status, 201);
  t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.02' }))).status, 201, 'the key and its account are cached by now');
  const before = { ...(await f.counts()), ...(await f.balance()) };
  await f.td.daemon.team.setVerified(f.accountId, false);
  refused(t, await f.api.post('/v1/withdrawals', body({ amount: '0.03' })), 403, 'kyb_required', 'unverified after the cache was filled');
  await f.td.daemon.team.setVerified(f.accountId, true);
  t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.04' }))).status, 201, 'verified again');
  const after = { ...(await f.counts()), ...(await f.balance()) };
  await f.td.daemon.keys.requireRotation(f.accountId, f.api.keyId, { email: f.owner });
  const res = await f.api.post('/v1/withdrawals', body({ amount: '0.05' }));
  refused(t, res, 403, 'auth.permission_denied', 'rotation required after the cache was filled');
  t.deepEqual({ ...(await f.counts()), ...(await f.balance()) }, after, 'the refused one created and held nothing');
  t.is(after.withdrawals, before.withdrawals + 1);
});
