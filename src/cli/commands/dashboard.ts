import type { Command } from 'commander';
import { UserError } from '../../shared/errors';
import { cliConfig, globals } from '../context';

/** `coinkeep dashboard` (issue 21 §1): the live view of the install, over the admin socket. */
export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description('the live terminal dashboard: chains, payments, approvals, webhooks, keys, log (q quits)')
    .option('--account <id>', 'show this account only (default: every account)')
    .option('--as <email>', 'the member who acts (approve, reject, rotate, disable)')
    .action(async (o: { account?: string; as?: string }, cmd: Command) => {
      if (globals(cmd).json) throw new UserError('dashboard draws on a terminal; for JSON use coinkeep status --json');
      if (!process.stdin.isTTY || !process.stdout.isTTY) throw new UserError('dashboard needs a terminal (for scripts: coinkeep status --json)');
      const { runDashboard } = require('../../dashboard/run') as typeof import('../../dashboard/run');
      await runDashboard({ dataDir: cliConfig(cmd).data_dir, account: o.account, as: o.as });
      // The terminal is restored: end now rather than when idle keep-alive sockets to the daemon close.
      process.exit(0);
    });
}
