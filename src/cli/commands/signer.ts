import type { Command } from 'commander';
import type { Config } from '../../config/schema';
import { defaultSignerSocketPath } from '../../daemon/paths';
import { createLogger } from '../../shared/logger';
import { UserError } from '../../shared/errors';
import type { WalletBackupResponse } from '../../admin/contract';
import { cliConfig, output } from '../context';

// The signer's code (and the seed's) loads only for these commands.
const signerModule = () => require('../../wallet/signer-process/main') as typeof import('../../wallet/signer-process/main');

/** The config from the first line on stdin (the daemon that starts the signer sends it so: a database password stays out of argv and the environment). */
async function configFromStdin(): Promise<Config> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      process.stdin.off('data', onData);
      try {
        resolve(configFromLine(text.slice(0, nl)));
      } catch (err) {
        reject(err instanceof Error ? new UserError(`config: ${err.message}`) : err);
      }
    };
    process.stdin.on('data', onData);
    process.stdin.once('end', () => reject(new UserError('config: nothing on stdin')));
  });
}

/** The config the daemon parsed and sent (signer.wiring.ts configLine): JSON, bigints tagged. */
function configFromLine(line: string): Config {
  return JSON.parse(line, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && typeof (v as { $bigint?: unknown }).$bigint === 'string' ? BigInt((v as { $bigint: string }).$bigint) : v,
  ) as Config;
}

/** Prints the backup words in rows of four. */
export function backupText(x: WalletBackupResponse): string {
  const words = String(x.mnemonic).split(' ');
  const rows: string[] = [];
  for (let i = 0; i < words.length; i += 4)
    rows.push(
      words
        .slice(i, i + 4)
        .map((w, j) => `${String(i + j + 1).padStart(2)}. ${w.padEnd(10)}`)
        .join(' ')
        .trimEnd(),
    );
  return [
    `Wallet seed, fingerprint ${x.fingerprint}, ${x.words} words. Write them down on paper and keep them offline:`,
    'anyone who has them controls every deposit address. Restore: coinkeep init --restore.',
    '',
    ...rows,
  ].join('\n');
}

/** `coinkeep wallet backup` and `coinkeep signer backup`: the words read with the signer key in this shell, never through the daemon. */
export async function showBackup(cmd: Command): Promise<void> {
  const { fingerprint, words } = await signerModule().signerBackupWords(cliConfig(cmd));
  output(cmd, { fingerprint, words: words.split(' ').length, mnemonic: words } satisfies WalletBackupResponse, backupText);
}

/** `coinkeep signer`: the process that alone holds the wallet seed (PRODUCT §18, docs/custody.md). */
export function registerSignerCommands(program: Command): void {
  const signer = program.command('signer').description('the signer, which alone opens the wallet seed (PRODUCT §18; docs/custody.md)');
  signer
    .command('run', { isDefault: true })
    .description('run the signer in the foreground (the daemon starts it, or run it apart and set signer.socket)')
    .option('--socket <path>', 'listen on this Unix socket (default: signer.socket, else <data_dir>/signer.sock)')
    .option('--config-stdin', 'read the config from the first line on stdin (how the daemon starts it)')
    .action(async (o: { socket?: string; configStdin?: boolean }, cmd: Command) => {
      const config = o.configStdin ? await configFromStdin() : cliConfig(cmd);
      const logger = createLogger({ level: config.log_level, base: { component: 'signer', pid: process.pid } });
      const socketPath = o.socket ?? config.signer.socket ?? defaultSignerSocketPath(config.data_dir);
      const server = await signerModule().runSigner(config, { socketPath, logger });
      await new Promise<void>((resolve) => {
        const onSignal = () => void server.close().then(resolve);
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        // Started by a daemon: when it is gone (its end of stdin closes), so is this signer.
        if (o.configStdin) {
          process.stdin.once('end', onSignal);
          process.stdin.once('close', onSignal);
          process.stdin.resume();
        }
      });
      logger.info('signer stopped');
      process.exit(0);
    });

  signer
    .command('backup')
    .description('show the seed words to write down (read here with the signer key; keep them offline)')
    .action(async (_o: unknown, cmd: Command) => showBackup(cmd));
}
