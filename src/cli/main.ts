import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/schema';
import { UserError } from '../shared/errors';
import { registerDevCommands } from './commands/dev';
import { registerLifecycleCommands } from './commands/lifecycle';
import { registerKeyCommands } from './commands/keys';
import { registerTeamCommands } from './commands/team';

export function buildProgram(): Command {
  const program = new Command('coinkeep')
    .description('Coinkeep: self-hosted crypto payment processor')
    .option('--config <file>', 'config file (default config/coinkeep.yaml or $COINKEEP_CONFIG)')
    .option('--json', 'print one JSON object on stdout')
    .showHelpAfterError(false)
    .exitOverride();
  registerLifecycleCommands(program);
  registerDevCommands(program);
  registerTeamCommands(program);
  registerKeyCommands(program);
  return program;
}

/** Every failure ends as one line on stderr and a non-zero exit code. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    const code = err instanceof UserError ? err.exitCode : 1;
    const message =
      err instanceof UserError || err instanceof ConfigError
        ? err.message
        : `unexpected error: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
    process.stderr.write(`coinkeep: ${message}\n`);
    process.exitCode = code;
  }
}

if (require.main === module) void main(process.argv);
