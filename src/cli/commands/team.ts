import type { Command } from 'commander';
import { adminCall } from '../admin-client';
import { UserError } from '../../shared/errors';
import { cliConfig, otpFrom, output, showEnrolment, wholeNumber } from '../context';

type Opts = Record<string, string | boolean | undefined>;

/** `coinkeep account ...` and `coinkeep member ...` (PRODUCT.md §4, §12). */
export function registerTeamCommands(program: Command): void {
  const account = program.command('account').description('merchant accounts');

  const call = (cmd: Command, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => adminCall(cliConfig(cmd).data_dir, method, path, body);

  account
    .command('create')
    .description('create an account and its first owner (operator)')
    .requiredOption('--name <name>', 'account name')
    .requiredOption('--owner <email>', 'email of the first owner')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'POST', '/admin/accounts', { name: o.name, owner: o.owner });
      output(cmd, r, (x) => `account ${x.account.id} (${x.account.name})\n${showEnrolment(x.member)}`);
    });

  account
    .command('list')
    .description('list accounts (operator)')
    .action(async (_o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', '/admin/accounts');
      output(cmd, r, (x) => x.items.map((a: any) => `${a.id}  ${a.status.padEnd(6)}  ${a.name}`).join('\n') || 'no accounts');
    });

  account
    .command('show')
    .requiredOption('--account <id>')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `/admin/accounts/${encodeURIComponent(String(o.account))}`);
      output(cmd, r, (x) => JSON.stringify(x, null, 2));
    });

  account
    .command('set')
    .description('change settings (owner or admin, with OTP): KEY=VALUE ...')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .option('--otp <code>', 'two-factor code')
    .argument('<settings...>', 'default_fiat=EUR invoice_ttl_minutes=60 ...')
    .action(async (pairs: string[], o: Opts, cmd: Command) => {
      const settings: Record<string, string | null> = {};
      for (const p of pairs) {
        const i = p.indexOf('=');
        if (i <= 0) throw new UserError(`expected KEY=VALUE, got ${JSON.stringify(p)}`);
        settings[p.slice(0, i)] = p.slice(i + 1);
      }
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/settings`, { as: o.as, otp, settings });
      output(cmd, r, (x) => JSON.stringify(x.account, null, 2));
    });

  account
    .command('verify')
    .description('mark the account verified (KYB) (operator)')
    .requiredOption('--account <id>')
    .option('--revoke', 'mark it unverified')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/verify`, { verified: !o.revoke });
      output(cmd, r, (x) => `account ${x.account.id} verified: ${x.account.verified}`);
    });

  account
    .command('freeze')
    .description('freeze the account: every API key is refused (any member)')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/freeze`, { as: o.as });
      output(cmd, r, (x) => `account ${x.account.id} is ${x.account.status}`);
    });

  account
    .command('unfreeze')
    .description('unfreeze the account (operator)')
    .requiredOption('--account <id>')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/unfreeze`, {});
      output(cmd, r, (x) => `account ${x.account.id} is ${x.account.status}`);
    });

  account
    .command('set-fee')
    .description('platform fee in percent (operator)')
    .requiredOption('--account <id>')
    .requiredOption('--percent <p>')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/fee`, { percent: o.percent });
      output(cmd, r, (x) => `account ${x.account.id} platform fee ${x.account.platform_fee_percent}%`);
    });

  const member = program.command('member').description('members of an account');
  /** `operatorMay`: without `--as` the host's operator acts (like `account create`'s first owner). */
  const memberCmd = (name: string, description: string, operatorMay = false) => {
    const cmd = member.command(name).description(description).requiredOption('--account <id>');
    if (operatorMay) cmd.option('--as <email>', 'the member acting (owner or admin); without it the operator adds them, and their rights count at once');
    else cmd.requiredOption('--as <email>', 'the member acting (owner or admin)');
    return cmd.option('--otp <code>', 'two-factor code').requiredOption('--email <email>', 'the member concerned');
  };

  memberCmd('add', 'add a member; prints their TOTP enrolment', true)
    .requiredOption('--role <role>', 'owner, admin or developer')
    .action(async (o: Opts, cmd: Command) => {
      const otp = o.as === undefined ? undefined : await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/members`, { as: o.as, otp, email: o.email, role: o.role });
      output(cmd, r, (x) => `${showEnrolment(x.member)}\nrole: ${x.member.role}`);
    });
  memberCmd('remove', 'remove a member').action(async (o: Opts, cmd: Command) => {
    const otp = await otpFrom(cmd, o.otp as string | undefined);
    const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/members/remove`, { as: o.as, otp, email: o.email });
    output(cmd, r, (x) => `member ${x.member.email} removed`);
  });
  memberCmd('set-role', "change a member's role")
    .requiredOption('--role <role>', 'owner, admin or developer')
    .action(async (o: Opts, cmd: Command) => {
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `/admin/accounts/${encodeURIComponent(String(o.account))}/members/role`, {
        as: o.as,
        otp,
        email: o.email,
        role: o.role,
      });
      output(cmd, r, (x) => `member ${x.member.email} is now ${x.member.role}`);
    });

  program
    .command('security-log')
    .description("an account's security log")
    .requiredOption('--account <id>')
    .option('--limit <n>', 'rows', '100')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `/admin/accounts/${encodeURIComponent(String(o.account))}/security-log?limit=${wholeNumber('--limit', o.limit)}`);
      output(cmd, r, (x) => x.items.map((e: any) => `${e.created_at}  ${e.actor}  ${e.action}  ${JSON.stringify(e.details)}`).join('\n') || 'empty');
    });
}
