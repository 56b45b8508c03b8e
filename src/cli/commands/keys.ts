import type { Command } from 'commander';
import { adminCall } from '../admin-client';
import { cliConfig, otpFrom, output, wholeNumber } from '../context';
import { confirmAction, pickId } from '../interactive';

type Opts = Record<string, string | string[] | boolean | undefined>;

const collect = (value: string, previous: string[] = []) => [...previous, value];

const showKey = (k: any): string =>
  [
    `${k.key_id}  ${k.status}  "${k.name}"`,
    `  permissions: ${k.permissions.join(',') || '-'}  withdraw: ${k.withdraw_status}`,
    `  ip whitelist: ${k.ip_whitelist.join(', ') || 'any'}  rate limit: ${k.rate_limit_per_minute}/min`,
    `  secret ...${k.secret_last4} (generation ${k.secret_generation})${k.rotation_required ? '  ROTATION REQUIRED' : ''}`,
  ].join('\n');

/** `coinkeep keys ...` and `coinkeep withdraw-requests ...` (PRODUCT.md §5, §12). */
export function registerKeyCommands(program: Command): void {
  const call = (cmd: Command, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => adminCall(cliConfig(cmd).data_dir, method, path, body);
  const base = (o: Opts) => `/admin/accounts/${encodeURIComponent(String(o.account))}`;
  const keys = program.command('keys').description('API keys of an account');

  keys
    .command('create')
    .description('create a key; its secret is shown once')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member creating it')
    .option('--otp <code>', 'two-factor code (needed to grant withdraw)')
    .requiredOption('--name <name>')
    .requiredOption('--permissions <list>', 'read,create_invoice,create_address,withdraw')
    .option('--ip <cidr>', 'allowed IP or CIDR (repeatable)', collect, [])
    .option('--rate-limit <n>', 'requests per minute', '600')
    .option('--test', 'a ck_test_ key (test-network environments only)')
    .action(async (o: Opts, cmd: Command) => {
      const wantsWithdraw = String(o.permissions).split(',').includes('withdraw');
      const otp = wantsWithdraw ? await otpFrom(cmd, o.otp as string | undefined) : (o.otp as string | undefined);
      const r = await call(cmd, 'POST', `${base(o)}/keys`, {
        as: o.as,
        otp,
        name: o.name,
        permissions: String(o.permissions).split(','),
        ip_whitelist: o.ip,
        rate_limit_per_minute: wholeNumber('--rate-limit', o.rateLimit),
        test: Boolean(o.test),
      });
      output(
        cmd,
        r,
        (x) =>
          `${showKey(x.key)}\n  secret: ${x.key.secret}   (shown once: store it now)${x.key.request_id ? `\n  withdraw requested (request ${x.key.request_id}); an owner or admin approves it` : ''}`,
      );
    });

  keys
    .command('list')
    .requiredOption('--account <id>')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/keys`);
      output(cmd, r, (x) => x.items.map(showKey).join('\n') || 'no keys');
    });

  keys
    .command('show')
    .requiredOption('--account <id>')
    .argument('<key_id>')
    .action(async (keyId: string, o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/keys/${encodeURIComponent(keyId)}`);
      output(cmd, r, (x) => showKey(x.key));
    });

  /** Keys a pick list offers for an action: not revoked ones. */
  const pickKey = (cmd: Command, o: Opts, given: string | undefined, name: string) =>
    pickId(cmd, given, {
      argument: '<key_id>',
      title: `Which key to ${name}?`,
      empty: 'the account has no key that is not revoked',
      load: async () =>
        ((await call(cmd, 'GET', `${base(o)}/keys`)).items as any[])
          .filter((k) => k.status !== 'revoked')
          .map((k) => ({ value: k.key_id, label: `${k.key_id}  ${k.status}  "${k.name}"  ${k.permissions.join(',')}` })),
    });
  /** Rotate, disable and revoke cut off whoever holds the secret: on a terminal they ask first. */
  const DESTRUCTIVE: Record<string, string> = { rotate: 'replace its secret', disable: 'stop it', revoke: 'revoke it for good' };
  const action = (name: string, description: string) =>
    keys
      .command(name)
      .description(description)
      .requiredOption('--account <id>')
      .requiredOption('--as <email>')
      .option('--otp <code>')
      .option('--yes', 'do not ask to confirm on a terminal')
      .argument(name in DESTRUCTIVE ? '[key_id]' : '<key_id>', name in DESTRUCTIVE ? 'the key; on a terminal, left out: pick it from a list' : undefined)
      .action(async (given: string | undefined, o: Opts, cmd: Command) => {
        const keyId = name in DESTRUCTIVE ? await pickKey(cmd, o, given, name) : given!;
        if (name in DESTRUCTIVE) await confirmAction(cmd, `${name} key ${keyId} (${DESTRUCTIVE[name]})?`, o.yes as boolean | undefined);
        const r = await call(cmd, 'POST', `${base(o)}/keys/${encodeURIComponent(keyId)}/${name}`, { as: o.as, otp: o.otp });
        output(
          cmd,
          r,
          (x) =>
            `${showKey(x.key)}${x.key.secret ? `\n  new secret: ${x.key.secret}   (shown once; the previous one works until ${x.key.previous_secret_valid_until ?? 'now'})` : ''}`,
        );
      });
  action('rotate', 'issue a new secret; the previous one keeps working for 10 minutes');
  action('disable', 'stop the key until it is enabled again');
  action('enable', 'enable a disabled key');
  action('revoke', 'revoke the key for good');
  action('require-rotation', 'mark the key as needing a rotation (owner or admin)');

  keys
    .command('update')
    .description('change name, permissions, IP whitelist or rate limit')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>')
    .option('--otp <code>', 'two-factor code (withdraw or whitelist changes)')
    .option('--name <name>')
    .option('--permissions <list>')
    .option('--ip <cidr>', 'the new whitelist, replacing the old (repeatable)', collect)
    .option('--clear-ip', 'remove the whitelist')
    .option('--rate-limit <n>')
    .argument('<key_id>')
    .action(async (keyId: string, o: Opts, cmd: Command) => {
      const changes: Record<string, unknown> = {};
      if (o.name !== undefined) changes.name = o.name;
      if (o.permissions !== undefined) changes.permissions = String(o.permissions).split(',');
      if (o.ip !== undefined) changes.ip_whitelist = o.ip;
      if (o.clearIp) changes.ip_whitelist = [];
      if (o.rateLimit !== undefined) changes.rate_limit_per_minute = wholeNumber('--rate-limit', o.rateLimit);
      const sensitive = changes.ip_whitelist !== undefined || (changes.permissions as string[] | undefined)?.includes('withdraw');
      const otp = sensitive ? await otpFrom(cmd, o.otp as string | undefined) : (o.otp as string | undefined);
      const r = await call(cmd, 'POST', `${base(o)}/keys/${encodeURIComponent(keyId)}/update`, { as: o.as, otp, changes });
      output(cmd, r, (x) => showKey(x.key));
    });

  const wr = program.command('withdraw-requests').description("developers' requests for the withdraw permission");
  wr.command('list')
    .requiredOption('--account <id>')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/withdraw-requests`);
      output(
        cmd,
        r,
        (x) =>
          x.items.map((i: any) => `${i.key.key_id}  requested by ${i.request?.requested_by} at ${i.request?.requested_at}`).join('\n') || 'no pending requests',
      );
    });
  for (const verb of ['approve', 'reject'] as const) {
    wr.command(verb)
      .description(`${verb} a request (owner or admin other than the requester, with OTP); name it by its key id or its request id`)
      .requiredOption('--account <id>')
      .requiredOption('--as <email>')
      .option('--otp <code>')
      .option('--yes', verb === 'reject' ? 'do not ask to confirm on a terminal' : 'accepted for symmetry; approving never asks')
      .argument(
        '[key_or_request_id]',
        'the key id (ck_...) or the request_id that keys create printed; a key has at most one open request; on a terminal, left out: pick it from a list',
      )
      .action(async (given: string | undefined, o: Opts, cmd: Command) => {
        const id = await pickId(cmd, given, {
          argument: '<key_or_request_id>',
          title: `Which request to ${verb}?`,
          empty: 'no withdraw-permission request is waiting',
          load: async () =>
            ((await call(cmd, 'GET', `${base(o)}/withdraw-requests`)).items as any[]).map((i) => ({
              value: i.key.key_id,
              label: `${i.key.key_id}  "${i.key.name}"  requested by ${i.request?.requested_by ?? '-'} at ${i.request?.requested_at ?? '-'}`,
            })),
        });
        if (verb === 'reject') await confirmAction(cmd, `reject the withdraw permission request of key ${id}?`, o.yes as boolean | undefined);
        const otp = await otpFrom(cmd, o.otp as string | undefined);
        const r = await call(cmd, 'POST', `${base(o)}/withdraw-requests/${encodeURIComponent(id)}/${verb}`, { as: o.as, otp });
        output(cmd, r, (x) => showKey(x.key));
      });
  }
}
