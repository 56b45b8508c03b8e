import type { Command } from 'commander';
import { adminCall } from '../admin-client';
import { cliConfig, otpFrom, output } from '../context';
import { confirmAction, pickId } from '../interactive';

type Opts = Record<string, string | boolean | undefined>;

const line = (w: any) =>
  `${w.id}  ${String(w.status).padEnd(17)}  ${w.amount} ${w.ticker} -> ${w.to_address}${w.review_reason ? `  (${w.review_reason})` : ''}`;

/** What a member may do to a withdrawal from the CLI: who, from which statuses, and whether a terminal asks first. */
const ACTIONS = {
  approve: {
    description: 'approve a withdrawal in review or awaiting approval (owner or admin, with OTP)',
    from: ['review', 'awaiting_approval'],
    confirm: false,
    empty: 'no withdrawal is in review or awaiting approval',
  },
  reject: {
    description: 'reject a withdrawal in review or awaiting approval (owner or admin, with OTP)',
    from: ['review', 'awaiting_approval'],
    confirm: true,
    empty: 'no withdrawal is in review or awaiting approval',
  },
  cancel: {
    description: 'cancel a withdrawal before processing (any member, with OTP; also while the account is frozen)',
    from: ['pending', 'review', 'awaiting_approval'],
    confirm: true,
    empty: 'no withdrawal is pending, in review or awaiting approval',
  },
};

/** `coinkeep withdrawals list|show|approve|reject|cancel` and `coinkeep whitelist list|add|remove` (PRODUCT §8, §14, issue 16 §2). */
export function registerWithdrawalCommands(program: Command): void {
  const call = (cmd: Command, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => adminCall(cliConfig(cmd).data_dir, method, path, body);
  const base = (o: Opts) => `/admin/accounts/${encodeURIComponent(String(o.account))}`;
  const asQuery = (o: Opts, extra: Record<string, string> = {}) => `?${new URLSearchParams({ as: String(o.as), ...extra })}`;

  const withdrawals = program.command('withdrawals').description("an account's withdrawals: review and dual approval");
  withdrawals
    .command('list')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .option('--status <status>', 'only this status (review, awaiting_approval, pending, ...)')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/withdrawals${asQuery(o, o.status ? { status: String(o.status) } : {})}`);
      output(cmd, r, (x) => x.items.map(line).join('\n') || 'no withdrawals');
    });
  withdrawals
    .command('show')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .argument('<withdrawal-id>')
    .action(async (id: string, o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/withdrawals/${encodeURIComponent(id)}${asQuery(o)}`);
      output(cmd, r, (x) => JSON.stringify(x, null, 2));
    });
  for (const [action, a] of Object.entries(ACTIONS)) {
    withdrawals
      .command(action)
      .description(a.description)
      .requiredOption('--account <id>')
      .requiredOption('--as <email>', 'the member acting')
      .option('--otp <code>', 'two-factor code')
      .option('--yes', a.confirm ? 'do not ask to confirm on a terminal' : 'accepted for symmetry; approving never asks')
      .argument('[withdrawal-id]', 'on a terminal, left out: pick it from a list')
      .action(async (given: string | undefined, o: Opts, cmd: Command) => {
        const id = await pickId(cmd, given, {
          argument: '<withdrawal-id>',
          title: `Which withdrawal to ${action}?`,
          empty: a.empty,
          load: async () =>
            ((await call(cmd, 'GET', `${base(o)}/withdrawals${asQuery(o)}`)).items as any[])
              .filter((w) => a.from.includes(w.status))
              .map((w) => ({ value: w.id, label: line(w) })),
        });
        if (a.confirm) await confirmAction(cmd, `${action} withdrawal ${id} (its money returns to available)?`, o.yes as boolean | undefined);
        const otp = await otpFrom(cmd, o.otp as string | undefined);
        const r = await call(cmd, 'POST', `${base(o)}/withdrawals/${encodeURIComponent(id)}/${action}`, { as: o.as, otp });
        output(cmd, r, line);
      });
  }

  const whitelist = program
    .command('whitelist')
    .description('the payout addresses an account allows (enforced with account set withdrawal_whitelist_enforced=true)');
  whitelist
    .command('list')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/whitelist${asQuery(o)}`);
      output(
        cmd,
        r,
        (x) => x.items.map((e: any) => `${e.id}  ${e.coin_id}  ${e.address}${e.label ? `  ${e.label}` : ''}`).join('\n') || 'no whitelisted addresses',
      );
    });
  whitelist
    .command('add')
    .description('allow payouts to an address (owner or admin, with OTP)')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .requiredOption('--coin <coin-id>', 'the coin paid to it')
    .requiredOption('--address <address>')
    .option('--label <label>')
    .option('--otp <code>', 'two-factor code')
    .action(async (o: Opts, cmd: Command) => {
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `${base(o)}/whitelist`, { as: o.as, otp, coin_id: o.coin, address: o.address, label: o.label });
      output(cmd, r, (x) => `whitelisted ${x.address} (${x.id})`);
    });
  whitelist
    .command('remove')
    .description('stop allowing an address (owner or admin, with OTP)')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .option('--otp <code>', 'two-factor code')
    .argument('<entry-id>')
    .action(async (id: string, o: Opts, cmd: Command) => {
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `${base(o)}/whitelist/${encodeURIComponent(id)}/remove`, { as: o.as, otp });
      output(cmd, r, (x) => `removed ${x.id}`);
    });
}
