import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { PROJECT_ROOT } from '../config/load';
import { ConfigError } from '../config/schema';
import { UserError } from '../shared/errors';
import { DaemonRefusal } from './admin-client';
import { registerDashboardCommand } from './commands/dashboard';
import { registerDevCommands } from './commands/dev';
import { registerDoctorCommand } from './commands/doctor';
import { registerLifecycleCommands } from './commands/lifecycle';
import { registerKeyCommands } from './commands/keys';
import { registerLedgerCommands } from './commands/ledger';
import { registerTeamCommands } from './commands/team';
import { registerWalletCommands } from './commands/wallet';
import { registerWebhookCommands } from './commands/webhooks';
import { registerWithdrawalCommands } from './commands/withdrawals';
import { registerPayoutCommands } from './commands/payouts';
import { registerSignerCommands } from './commands/signer';
import { registerRefundCommands } from './commands/refunds';
import { registerCustodyCommands } from './commands/custody';

export function buildProgram(): Command {
  const program = new Command('coinkeep')
    .description('Coinkeep: self-hosted crypto payment processor')
    .option('--config <file>', 'config file (default config/coinkeep.yaml or $COINKEEP_CONFIG)')
    .option('--json', 'print one JSON object on stdout (a failure: {"error":{"code","message","details"}} on stderr)')
    .version(version(), '-V, --version')
    .showHelpAfterError(false)
    .showSuggestionAfterError(false)
    .configureOutput({ writeErr: (text) => process.stderr.write(text.replace(/^error: /, 'coinkeep: ')) })
    .exitOverride();
  registerLifecycleCommands(program);
  registerTeamCommands(program);
  registerKeyCommands(program);
  registerWalletCommands(program);
  registerWebhookCommands(program);
  registerWithdrawalCommands(program);
  registerPayoutCommands(program);
  registerSignerCommands(program);
  registerRefundCommands(program);
  registerCustodyCommands(program);
  requireSubcommands(program);
  // `dev` runs the sandbox itself and also has `dev pay`: it is not a group that needs a subcommand.
  registerDevCommands(program);
  registerLedgerCommands(program);
  registerDashboardCommand(program);
  registerDoctorCommand(program);
  return program;
}

/** A group (`keys`, `account`...) named without its subcommand is a one-line usage error, not a help page. */
function requireSubcommands(cmd: Command): void {
  for (const sub of cmd.commands) {
    // A group with a default subcommand (`coinkeep signer` runs `signer run`) runs it.
    if (sub.commands.length === 0 || (sub as unknown as { _defaultCommandName?: string })._defaultCommandName) continue;
    const names = sub.commands.map((c) => c.name()).filter((n) => n !== 'help');
    sub.action(() => {
      throw new UserError(`${sub.name()}: name a subcommand (${names.join(', ')}); see coinkeep ${sub.name()} --help`);
    });
    requireSubcommands(sub);
  }
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Every failure ends as one line on stderr and a non-zero exit code: for a person the message, and
 * under --json one JSON object shaped like the API's envelope (a daemon's refusal as it answered
 * it; a failure of the CLI itself with code `cli_error`, or `internal_error` when unexpected).
 */
export async function main(argv: string[]): Promise<void> {
  // Files the CLI and the daemon create (database, WAL, logs, pid, socket) are the owner's only.
  process.umask(0o077);
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    const code = err instanceof UserError ? err.exitCode : 1;
    const expected = err instanceof UserError || err instanceof ConfigError;
    const message = expected ? err.message : `unexpected error: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
    if (program.opts<{ json?: boolean }>().json) {
      const envelope = err instanceof DaemonRefusal ? err.envelope : { code: expected ? 'cli_error' : 'internal_error', message, details: {} };
      process.stderr.write(JSON.stringify({ error: envelope }) + '\n');
    } else {
      process.stderr.write(`coinkeep: ${message}\n`);
    }
    process.exitCode = code;
    // A failed command ends now, even if something it opened still holds the event loop.
    setTimeout(() => process.exit(code), 2000).unref();
  }
}

if (require.main === module) void main(process.argv);
