/**
 * Accounts, members, keys, withdraw requests and the security log through bin/coinkeep against one
 * daemon started with `coinkeep start`. Every command is run with --json (and some for people);
 * every failure must be one line on stderr with a non-zero exit and nothing on stdout.
 */
import test, { type ExecutionContext } from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CliEnv, type CliResult } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { signRequest } from '../../helpers/signer';

const env = new CliEnv();
let apiUrl = '';

/** Everything the CLI printed in this file, to look for secrets at the end. */
const printed: string[] = [];
/** Every secret the CLI handed out (TOTP secrets, key secrets). */
const secrets: string[] = [];

async function ck(args: string[]): Promise<CliResult> {
  const r = await env.run(args);
  printed.push(r.stdout, r.stderr);
  return r;
}

/** A --json call that must succeed; returns the parsed object. */
async function ok(t: ExecutionContext, args: string[]): Promise<any> {
  const r = await ck(['--json', ...args]);
  t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  t.is(r.stderr, '');
  return r.json;
}

/** A call that must fail: non-zero, stdout empty, one line on stderr for a person matching `re`. */
async function fails(t: ExecutionContext, args: string[], re: RegExp): Promise<string> {
  const r = await ck(args);
  t.not(r.code, 0, `${args.join(' ')} should fail`);
  t.is(r.stdout, '', args.join(' '));
  t.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  t.regex(r.stderr, /^coinkeep: /);
  t.regex(r.stderr, re);
  return r.stderr;
}

/** A call that must fail under --json: non-zero, stdout empty, the envelope as one JSON line on stderr. */
async function refusedJson(t: ExecutionContext, args: string[]): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const r = await ck(['--json', ...args]);
  t.not(r.code, 0, `${args.join(' ')} should fail`);
  t.is(r.stdout, '', args.join(' '));
  t.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  const parsed = JSON.parse(r.stderr) as { error: { code: string; message: string; details: Record<string, unknown> } };
  t.deepEqual(Object.keys(parsed), ['error']);
  t.deepEqual(Object.keys(parsed.error), ['code', 'message', 'details']);
  return parsed.error;
}

/** Refusals that change nothing run side by side (each CLI call is a process start). */
async function failsAll(t: ExecutionContext, cases: Array<[string[], RegExp]>): Promise<void> {
  await Promise.all(cases.map(([args, re]) => fails(t, args, re)));
}

/** A signed GET (the test signer never signs the same request twice, so replay protection does not refuse it). */
async function api(keyId: string, secret: string, target = '/v1/account/api-keys'): Promise<{ status: number; body: any }> {
  const headers = signRequest({ keyId, secret, method: 'GET', target });
  const res = await fetch(apiUrl + target, { headers });
  return { status: res.status, body: await res.json() };
}

const OWNER = 'owner@shop.test';
const ADMIN = 'admin@shop.test';
const ADMIN2 = 'admin2@shop.test';
const DEV = 'dev@shop.test';
const DEV2 = 'dev2@shop.test';
const otp: Record<string, RealOtp> = {};
let account = '';

test.before(async () => {
  const init = await env.run(['init']);
  if (init.code !== 0) throw new Error(init.stderr);
  const start = await env.run(['--json', 'start']);
  if (start.code !== 0) throw new Error(start.stderr);
  apiUrl = start.json.api_url;
});

test.after.always(() => env.cleanup());

test.serial('account create (operator) returns the account and the owner with totp_secret and otpauth_url', async (t) => {
  const r = await ok(t, ['account', 'create', '--name', 'Shop', '--owner', OWNER]);
  account = r.account.id;
  t.like(r.account, { name: 'Shop', status: 'active', verified: false, platform_fee_percent: '0', invoice_ttl_minutes: 30 });
  t.like(r.member, { email: OWNER, role: 'owner', status: 'active' });
  t.regex(r.member.totp_secret, /^[A-Z2-7]{32}$/);
  t.true(r.member.otpauth_url.startsWith('otpauth://totp/Coinkeep%3Aowner%40shop.test?'));
  t.true(r.member.otpauth_url.includes(`secret=${r.member.totp_secret}`));
  otp[OWNER] = new RealOtp(r.member.totp_secret);
  secrets.push(r.member.totp_secret);

  // For people: the enrolment is printed (the QR code only on a terminal).
  const human = await ck(['account', 'create', '--name', 'Other', '--owner', 'other@shop.test']);
  t.is(human.code, 0);
  t.regex(human.stdout, /TOTP secret: [A-Z2-7]{32}/);
  t.regex(human.stdout, /otpauth URL: otpauth:\/\/totp\//);
  secrets.push(human.stdout.match(/TOTP secret: ([A-Z2-7]{32})/)![1]!);

  await failsAll(t, [
    [['account', 'create', '--name', 'X', '--owner', 'not-an-email'], /a valid email is required \[validation_error\] field: email$/m],
    [['account', 'create', '--name', 'X'], /required option '--owner <email>'/],
  ]);
  const list = await ok(t, ['account', 'list']);
  t.is(list.items.length, 2, 'the refused create changed nothing');
});

test.serial('account show, set (owner with OTP), verify, set-fee, freeze, unfreeze', async (t) => {
  const shown = await ok(t, ['account', 'show', '--account', account]);
  t.is(shown.account.id, account);
  t.deepEqual(
    shown.members.map((m: any) => [m.email, m.role]),
    [[OWNER, 'owner']],
  );
  const code = await otp[OWNER]!.next();
  await failsAll(t, [
    [['account', 'show', '--account', 'no-such-account'], /account not found \[not_found\]/],
    [['account', 'set', '--account', account, '--as', OWNER, 'invoice_ttl_minutes=60'], /two-factor code is required/],
    [['account', 'set', '--account', account, '--as', OWNER, '--otp', '000000', 'invoice_ttl_minutes=60'], /two-factor code is not valid/],
    [['account', 'set', '--account', account, '--as', OWNER, 'invoice_ttl_minutes'], /expected KEY=VALUE/],
    [['account', 'set', '--account', account, '--as', OWNER, '--otp', code, 'invoice_ttl_minutes=9999'], /invoice_ttl_minutes/],
    [['account', 'set', '--account', account, '--as', OWNER, '--otp', code, 'colour=blue'], /unknown setting colour/],
  ]);
  const set = await ok(t, ['account', 'set', '--account', account, '--as', OWNER, '--otp', code, 'default_fiat=EUR', 'invoice_ttl_minutes=60']);
  t.like(set.account, { default_fiat: 'EUR', invoice_ttl_minutes: 60 });
  await fails(t, ['account', 'set', '--account', account, '--as', OWNER, '--otp', code, 'invoice_ttl_minutes=90'], /already used/);
  const [verified, fee] = await Promise.all([
    ok(t, ['account', 'verify', '--account', account]),
    ok(t, ['account', 'set-fee', '--account', account, '--percent', '1.5']),
  ]);
  t.true(verified.account.verified);
  t.is(fee.account.platform_fee_percent, '1.5');
  const human = await ck(['account', 'verify', '--account', account, '--revoke']);
  t.regex(human.stdout, /verified: false/);
  await failsAll(t, [
    [['account', 'set-fee', '--account', account, '--percent', '101'], /percent must be from 0 to 100/],
    [['account', 'set-fee', '--account', account, '--percent', 'abc'], /\[validation_error\] field: percent$/m],
    [['account', 'freeze', '--account', account, '--as', 'stranger@shop.test'], /not a member of this account \[forbidden\]/],
  ]);
  t.like(
    (await ok(t, ['account', 'show', '--account', account])).account,
    { invoice_ttl_minutes: 60, platform_fee_percent: '1.5', verified: false, status: 'active' },
    'refusals changed nothing',
  );

  const key = await ok(t, ['keys', 'create', '--account', account, '--as', OWNER, '--name', 'probe', '--permissions', 'read']);
  secrets.push(key.key.secret);
  t.is((await ok(t, ['account', 'freeze', '--account', account, '--as', OWNER])).account.status, 'frozen');
  const frozen = await api(key.key.key_id, key.key.secret);
  t.is(frozen.status, 403);
  t.is(frozen.body.error.code, 'account_frozen');
  t.is((await ok(t, ['account', 'unfreeze', '--account', account])).account.status, 'active');
  t.is((await api(key.key.key_id, key.key.secret)).status, 200);
  await ok(t, ['keys', 'revoke', '--account', account, '--as', OWNER, key.key.key_id]);
});

test.serial('member add returns totp_secret and otpauth_url; set-role and remove need owner or admin with OTP', async (t) => {
  for (const [by, email] of [
    [OWNER, ADMIN],
    [ADMIN, ADMIN2],
  ] as const) {
    const r = await ok(t, ['member', 'add', '--account', account, '--as', by, '--otp', await otp[by]!.next(), '--email', email, '--role', 'admin']);
    const role = 'admin';
    t.like(r.member, { email, role, status: 'active' });
    t.regex(r.member.totp_secret, /^[A-Z2-7]{32}$/);
    t.true(r.member.otpauth_url.includes(`secret=${r.member.totp_secret}`));
    otp[email] = new RealOtp(r.member.totp_secret);
    secrets.push(r.member.totp_secret);
  }
  for (const email of [DEV, DEV2]) {
    const r = await ok(t, ['member', 'add', '--account', account, '--as', ADMIN, '--otp', await otp[ADMIN]!.next(), '--email', email, '--role', 'developer']);
    t.is(r.member.role, 'developer');
    otp[email] = new RealOtp(r.member.totp_secret);
    secrets.push(r.member.totp_secret);
  }
  await failsAll(t, [
    [
      ['member', 'add', '--account', account, '--as', DEV, '--otp', '123456', '--email', 'x@shop.test', '--role', 'developer'],
      /needs the role owner or admin \[forbidden\]/,
    ],
    [['member', 'add', '--account', account, '--as', OWNER, '--email', 'x@shop.test', '--role', 'boss'], /role must be one of owner, admin, developer/],
    [
      ['member', 'add', '--account', account, '--as', ADMIN, '--otp', '123456', '--email', 'x@shop.test', '--role', 'owner'],
      /needs the role owner \[forbidden\]/,
    ],
    [['member', 'remove', '--account', account, '--as', OWNER, '--email', 'nobody@shop.test'], /member not found/],
    [['member', 'add', '--account', account, '--as', OWNER, '--email', 'x@shop.test'], /required option '--role <role>'/],
  ]);

  const role = await ok(t, [
    'member',
    'set-role',
    '--account',
    account,
    '--as',
    ADMIN2,
    '--otp',
    await otp[ADMIN2]!.next(),
    '--email',
    DEV2,
    '--role',
    'admin',
  ]);
  t.like(role.member, { email: DEV2, role: 'admin' });
  const shown = await ok(t, ['account', 'show', '--account', account]);
  t.deepEqual(
    shown.members.map((m: any) => `${m.email}:${m.role}`).sort(),
    [`${ADMIN}:admin`, `${ADMIN2}:admin`, `${DEV}:developer`, `${DEV2}:admin`, `${OWNER}:owner`].sort(),
  );
});

let keyId = '';
let keySecret = '';

test.serial('keys create shows the secret once; list and show give secret_last4 only; the key signs requests', async (t) => {
  const r = await ok(t, [
    'keys',
    'create',
    '--account',
    account,
    '--as',
    DEV,
    '--name',
    'backend',
    '--permissions',
    'read,create_invoice',
    '--rate-limit',
    '120',
  ]);
  keyId = r.key.key_id;
  keySecret = r.key.secret;
  secrets.push(keySecret);
  t.regex(keyId, /^ck_live_[0-9A-Za-z]{24}$/);
  t.regex(keySecret, /^[A-Za-z0-9_-]{43}$/);
  t.like(r.key, {
    name: 'backend',
    permissions: ['read', 'create_invoice'],
    withdraw_status: 'none',
    network: 'testnet',
    rate_limit_per_minute: 120,
    status: 'active',
    secret_last4: keySecret.slice(-4),
    secret_generation: 1,
    rotation_required: false,
    request_id: null,
  });

  const test_ = await ok(t, ['keys', 'create', '--account', account, '--as', DEV, '--name', 'sandbox', '--permissions', 'read', '--test']);
  t.regex(test_.key.key_id, /^ck_test_/);
  secrets.push(test_.key.secret);

  const [list, shown] = await Promise.all([ok(t, ['keys', 'list', '--account', account]), ok(t, ['keys', 'show', '--account', account, keyId])]);
  t.deepEqual(list.items.map((k: any) => k.key_id).slice(-2), [keyId, test_.key.key_id]);
  t.is(shown.key.secret_last4, keySecret.slice(-4));
  for (const k of [...list.items, shown.key]) t.false('secret' in k, 'the secret is never shown again');

  const human = await ck(['keys', 'list', '--account', account]);
  t.regex(human.stdout, new RegExp(`secret \\.\\.\\.${keySecret.slice(-4).replace(/[-]/g, '\\-')}`));

  const answer = await api(keyId, keySecret);
  t.is(answer.status, 200);
  t.deepEqual(answer.body.items.map((k: any) => k.key_id).slice(0, 2), [test_.key.key_id, keyId], 'the API lists newest first');

  const before = list.items.length;
  await failsAll(t, [
    [
      ['keys', 'create', '--account', account, '--as', DEV, '--name', 'x', '--permissions', 'read,teleport'],
      /unknown permission "teleport" \[validation_error\] field: permissions$/m,
    ],
    [
      ['keys', 'create', '--account', account, '--as', DEV, '--name', 'pay\u202Eouts', '--permissions', 'read'],
      /bidirectional control characters .*\[validation_error\] field: name$/m,
    ],
    [
      ['keys', 'create', '--account', account, '--as', DEV, '--name', 'x', '--permissions', 'read', '--rate-limit', 'lots'],
      /--rate-limit must be a whole number/,
    ],
    [['keys', 'create', '--account', account, '--as', DEV, '--name', 'x', '--permissions', 'read', '--rate-limit', '0'], /rate_limit_per_minute/],
    [['keys', 'create', '--account', account, '--as', DEV, '--name', 'x', '--permissions', 'read', '--ip', '10.0.0.300'], /not an IP or CIDR/],
    [['keys', 'create', '--account', account, '--as', 'stranger@shop.test', '--name', 'x', '--permissions', 'read'], /not a member/],
    [['keys', 'show', '--account', account, 'ck_live_nope'], /key not found \[not_found\]/],
    [['keys', 'show', '--account', account], /missing required argument 'key_id'/],
  ]);
  t.is((await ok(t, ['keys', 'list', '--account', account])).items.length, before, 'refused creates created nothing');
});

test.serial('keys rotate, disable, enable, update, require-rotation, revoke', async (t) => {
  const rotated = await ok(t, ['keys', 'rotate', '--account', account, '--as', DEV, keyId]);
  const newSecret = rotated.key.secret as string;
  secrets.push(newSecret);
  t.not(newSecret, keySecret);
  t.is(rotated.key.secret_generation, 2);
  t.is(rotated.key.secret_last4, newSecret.slice(-4));
  const until = Date.parse(rotated.key.previous_secret_valid_until);
  t.true(Math.abs(until - Date.now() - 10 * 60_000) < 30_000, 'the previous secret lasts 10 minutes');
  t.is((await api(keyId, newSecret)).status, 200);
  t.is((await api(keyId, keySecret)).status, 200, 'the previous secret still works inside its window');
  keySecret = newSecret;

  t.is((await ok(t, ['keys', 'disable', '--account', account, '--as', OWNER, keyId])).key.status, 'disabled');
  const refused = await api(keyId, keySecret);
  t.is(refused.status, 401);
  t.is(refused.body.error.code, 'auth.invalid_key');
  t.is((await ok(t, ['keys', 'enable', '--account', account, '--as', ADMIN, keyId])).key.status, 'active');
  t.is((await api(keyId, keySecret)).status, 200);

  const updated = await ok(t, ['keys', 'update', '--account', account, '--as', DEV, '--name', 'renamed', '--rate-limit', '90', '--permissions', 'read', keyId]);
  t.like(updated.key, { name: 'renamed', rate_limit_per_minute: 90, permissions: ['read'] });
  const wl = await ok(t, ['keys', 'update', '--account', account, '--as', DEV, '--ip', '127.0.0.1', '--ip', '10.0.0.0/8', keyId]);
  t.deepEqual([...wl.key.ip_whitelist].sort(), ['10.0.0.0/8', '127.0.0.1']);
  await failsAll(t, [
    [['keys', 'update', '--account', account, '--as', DEV, keyId], /name at least one change/],
    [['keys', 'update', '--account', account, '--as', DEV, '--rate-limit', '-5', keyId], /--rate-limit must be a whole number/],
    [['keys', 'require-rotation', '--account', account, '--as', DEV, keyId], /needs the role owner or admin/],
  ]);
  t.true((await ok(t, ['keys', 'require-rotation', '--account', account, '--as', OWNER, keyId])).key.rotation_required);

  t.is((await ok(t, ['keys', 'revoke', '--account', account, '--as', ADMIN2, keyId])).key.status, 'revoked');
  await fails(t, ['keys', 'enable', '--account', account, '--as', ADMIN2, keyId], /revoked.*\[conflict\]/);
  t.is((await api(keyId, keySecret)).status, 401);
  t.is((await ok(t, ['keys', 'show', '--account', account, keyId])).key.status, 'revoked');
});

test.serial('withdraw-requests: a developer asks, another owner/admin approves or rejects with OTP', async (t) => {
  const asked = await ok(t, ['keys', 'create', '--account', account, '--as', DEV, '--name', 'payouts', '--permissions', 'read,withdraw']);
  secrets.push(asked.key.secret);
  t.is(asked.key.withdraw_status, 'pending');
  t.truthy(asked.key.request_id);
  const asked2 = await ok(t, ['keys', 'create', '--account', account, '--as', DEV, '--name', 'payouts-2', '--permissions', 'read,withdraw']);
  secrets.push(asked2.key.secret);

  const list = await ok(t, ['withdraw-requests', 'list', '--account', account]);
  t.deepEqual(list.items.map((i: any) => i.key.key_id).sort(), [asked.key.key_id, asked2.key.key_id].sort());
  t.truthy(list.items[0].request.requested_at);

  await failsAll(t, [
    [['withdraw-requests', 'approve', '--account', account, '--as', DEV, '--otp', '123456', asked.key.key_id], /needs the role owner or admin/],
    [['withdraw-requests', 'approve', '--account', account, '--as', ADMIN2, asked.key.key_id], /two-factor code is required/],
  ]);
  const approved = await ok(t, ['withdraw-requests', 'approve', '--account', account, '--as', ADMIN2, '--otp', await otp[ADMIN2]!.next(), asked.key.key_id]);
  t.is(approved.key.withdraw_status, 'granted');
  t.true(approved.key.permissions.includes('withdraw'));
  const rejected = await ok(t, ['withdraw-requests', 'reject', '--account', account, '--as', ADMIN2, '--otp', await otp[ADMIN2]!.next(), asked2.key.key_id]);
  t.is(rejected.key.withdraw_status, 'none');
  t.deepEqual((await ok(t, ['withdraw-requests', 'list', '--account', account])).items, []);
  await fails(
    t,
    ['withdraw-requests', 'approve', '--account', account, '--as', DEV2, '--otp', await otp[DEV2]!.next(), asked2.key.key_id],
    /\[conflict\]|not pending|no pending/i,
  );
});

test.serial(
  'a developer who does not hold the secret asks for withdraw: 409 withdraw_requires_rotation, shown to a person and a script; after rotating the key they ask, and the request is approved by its id',
  async (t) => {
    const DEV3 = 'dev3@shop.test';
    const added = await ok(t, [
      'member',
      'add',
      '--account',
      account,
      '--as',
      OWNER,
      '--otp',
      await otp[OWNER]!.next(),
      '--email',
      DEV3,
      '--role',
      'developer',
    ]);
    secrets.push(added.member.totp_secret);
    const created = await ok(t, ['keys', 'create', '--account', account, '--as', OWNER, '--name', 'shared', '--permissions', 'read']);
    secrets.push(created.key.secret);
    const key = created.key.key_id as string;
    const before = (await ok(t, ['keys', 'show', '--account', account, key])).key;

    const ask = ['keys', 'update', '--account', account, '--as', DEV3, '--permissions', 'read,withdraw', key];
    await fails(t, ask, /rotate the key first \[conflict\] reason: withdraw_requires_rotation$/m);
    const envelope = await refusedJson(t, ask);
    t.is(envelope.code, 'conflict');
    t.deepEqual(envelope.details, { reason: 'withdraw_requires_rotation' });
    t.deepEqual((await ok(t, ['keys', 'show', '--account', account, key])).key, before, 'nothing changed');

    const rotated = await ok(t, ['keys', 'rotate', '--account', account, '--as', DEV3, key]);
    secrets.push(rotated.key.secret);
    t.is(rotated.key.secret_holder, added.member.id);
    t.is(rotated.key.secret_generation, before.secret_generation + 1);
    const asked = await ok(t, ask);
    t.is(asked.key.withdraw_status, 'pending');
    const pending = await ok(t, ['withdraw-requests', 'list', '--account', account]);
    const request = pending.items.find((i: any) => i.key.key_id === key).request;
    t.is(request.requested_by, added.member.id);

    const help = await ck(['withdraw-requests', 'approve', '--help']);
    t.regex(help.stdout, /\[key_or_request_id\]/);
    t.regex(help.stdout, /the key id \(ck_\.\.\.\) or the request_id/);
    const approved = await ok(t, ['withdraw-requests', 'approve', '--account', account, '--as', OWNER, '--otp', await otp[OWNER]!.next(), request.id]);
    t.like(approved.key, { key_id: key, withdraw_status: 'granted' });
    const unknown = await refusedJson(t, [
      'withdraw-requests',
      'reject',
      '--account',
      account,
      '--as',
      OWNER,
      '--otp',
      '123456',
      '00000000-0000-4000-8000-000000000000',
    ]);
    t.is(unknown.code, 'not_found');
    // A failure of the CLI itself under --json is the same envelope.
    const usage = await refusedJson(t, ['keys', 'update', '--account', account, '--as', DEV3, '--rate-limit', 'many', key]);
    t.like(usage, { code: 'cli_error', message: '--rate-limit must be a whole number', details: {} });
    t.is((await ok(t, ['keys', 'revoke', '--account', account, '--as', OWNER, key])).key.status, 'revoked');
  },
);

test.serial('removing a member marks the keys they hold for rotation; the last owner stays', async (t) => {
  const before = await ok(t, ['keys', 'list', '--account', account]);
  const devKeys = before.items.filter((k: any) => k.status === 'active');
  t.true(devKeys.length > 0);
  const removed = await ok(t, ['member', 'remove', '--account', account, '--as', DEV2, '--otp', await otp[DEV2]!.next(), '--email', DEV]);
  t.like(removed.member, { email: DEV, status: 'removed' });
  const after = await ok(t, ['keys', 'list', '--account', account]);
  for (const k of after.items.filter((k: any) => k.status === 'active')) t.true(k.rotation_required, k.key_id);
  await fails(
    t,
    ['member', 'remove', '--account', account, '--as', OWNER, '--otp', await otp[OWNER]!.next(), '--email', OWNER],
    /at least one owner \[conflict\]/,
  );
});

test.serial('the security log records every change with actor and time, and never a secret', async (t) => {
  const log = await ok(t, ['security-log', '--account', account]);
  const actions = log.items.map((e: any) => e.action);
  for (const a of [
    'account.created',
    'account.settings_changed',
    'account.verified',
    'account.unverified',
    'account.fee_changed',
    'account.frozen',
    'account.unfrozen',
    'member.added',
    'member.role_changed',
    'member.removed',
    'key.created',
    'key.rotated',
    'key.disabled',
    'key.enabled',
    'key.updated',
    'key.whitelist_changed',
    'key.rotation_required',
    'key.revoked',
    'withdraw.requested',
    'withdraw.approved',
    'withdraw.rejected',
  ]) {
    t.true(actions.includes(a), `security log has ${a}`);
  }
  for (const e of log.items) {
    t.truthy(e.actor);
    t.false(Number.isNaN(Date.parse(e.created_at)));
  }
  const byAction = (a: string) => log.items.find((e: any) => e.action === a);
  t.is(byAction('account.settings_changed').actor, OWNER);
  t.is(byAction('account.verified').actor, 'operator');
  t.is(byAction('member.removed').actor, DEV2);
  // What follows from a departure is logged as the act of whoever made it, not of the operator.
  t.is(byAction('key.rotation_required').actor, DEV2);
  t.like(byAction('key.updated').details, { key_id: keyId, name: { from: 'backend', to: 'renamed' }, rate_limit_per_minute: { from: 120, to: 90 } });
  t.is((await ok(t, ['security-log', '--account', account, '--limit', '3'])).items.length, 3);
  await fails(t, ['security-log', '--account', account, '--limit', 'all'], /--limit must be a whole number/);
  const human = await ck(['security-log', '--account', account]);
  t.regex(human.stdout, /key\.created/);

  // No secret anywhere: not in anything the CLI printed (the create answers aside), the daemon's log, or the database.
  const createAnswers = new Set(printed.filter((p) => /"secret":|"totp_secret":|TOTP secret:/.test(p)));
  const elsewhere = printed.filter((p) => !createAnswers.has(p)).join('\n');
  const logs = readdirSync(path.join(env.dataDir, 'logs'))
    .map((f) => readFileSync(path.join(env.dataDir, 'logs', f), 'utf8'))
    .join('\n');
  const db = readdirSync(env.dataDir)
    .filter((f) => f.startsWith('coinkeep.db'))
    .map((f) => readFileSync(path.join(env.dataDir, f)).toString('latin1'))
    .join('\n');
  t.true(secrets.length >= 9);
  for (const s of secrets) {
    t.false(elsewhere.includes(s), 'a secret was printed outside its one showing');
    t.false(JSON.stringify(log).includes(s), 'a secret is in the security log');
    t.false(logs.includes(s), 'a secret is in the daemon log');
    t.false(db.includes(s), 'a secret is stored unsealed');
  }
});

test.serial('every command takes --json; commander usage errors are one line too', async (t) => {
  await failsAll(t, [
    [['keys'], /keys: name a subcommand/],
    [['keys', 'frobnicate'], /too many arguments|unknown/],
    [['nonsense'], /unknown command 'nonsense'/],
    [['keys', 'list'], /required option '--account <id>'/],
    [['keys', 'list', '--account', account, '--colour'], /unknown option '--colour'/],
  ]);
  const st = await ok(t, ['status']);
  t.is(st.status, 'running');
});
