import type { Command } from 'commander';
import { adminCall } from '../admin-client';
import { cliConfig, otpFrom, output } from '../context';

type Opts = Record<string, string | boolean | undefined>;

/** One rule on one line: coin, what stays hot, the cold address, from when it is used, what went cold. */
const line = (r: any) =>
  `${r.ticker ?? r.coin_id}  keep ${r.keep} -> ${r.address}  ${r.waiting ? `waiting until ${r.effective_at} (security change)` : 'active'}  forwarded ${r.forwarded}${r.last_withdrawal_id ? `  (last forward ${r.last_withdrawal_id})` : ''}`;

/** `coinkeep custody set|list|remove` (PRODUCT §18, issue 36 §2): an account's cold storage per coin. */
export function registerCustodyCommands(program: Command): void {
  const call = (cmd: Command, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => adminCall(cliConfig(cmd).data_dir, method, path, body);
  const base = (o: Opts) => `/admin/accounts/${encodeURIComponent(String(o.account))}/custody`;

  const custody = program
    .command('custody')
    .description("cold storage: above what it keeps, an account's available balance of a coin is withdrawn to its cold address");
  custody
    .command('list')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}?${new URLSearchParams({ as: String(o.as) })}`);
      output(cmd, r, (x) => x.items.map(line).join('\n') || 'no cold storage rules');
    });
  custody
    .command('set')
    .description('set or change the cold address and what stays available (owner or admin, with OTP; a new address waits out the security-change window)')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .requiredOption('--coin <coin-id>', 'the coin kept cold')
    .requiredOption('--address <address>', 'the cold address, on the coin’s network')
    .requiredOption('--keep <amount>', 'what stays available (an exact decimal of the coin; 0: everything goes cold)')
    .option('--otp <code>', 'two-factor code')
    .action(async (o: Opts, cmd: Command) => {
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', base(o), { as: o.as, otp, coin_id: o.coin, address: o.address, keep: o.keep });
      output(cmd, r, line);
    });
  custody
    .command('remove')
    .description('stop forwarding a coin to cold storage (owner or admin, with OTP)')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .requiredOption('--coin <coin-id>')
    .option('--otp <code>', 'two-factor code')
    .action(async (o: Opts, cmd: Command) => {
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `${base(o)}/remove`, { as: o.as, otp, coin_id: o.coin });
      output(cmd, r, (x) => `removed the cold storage of ${x.coin_id} (${x.id})`);
    });
}
