import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { PROJECT_ROOT } from '../../config/load';
import { ensureDataDir, loadMasterKey, writePrivateFile } from '../../db/seal';
import type { Daemon } from '../../daemon/main';
import { cliConfig, globals } from '../context';
import { runForeground } from './lifecycle';
import { demoCurl, prepareDemo } from './dev-demo';
import { prepareSeed } from '../../wallet/seed';

export const DEV_CONFIG = path.join(PROJECT_ROOT, 'config', 'dev.yaml');

/**
 * `coinkeep dev`: the sandbox. The daemon in the foreground with config/dev.yaml (fixed rates, its
 * own data dir), a demo account created once and printed at every start; Ctrl-C stops it all.
 */
export function registerDevCommands(program: Command): void {
  program
    .command('dev')
    .description('run the local sandbox in the foreground (config/dev.yaml, demo account)')
    .action(async (_o: unknown, cmd: Command) => {
      if (!globals(cmd).config) cmd.setOptionValue('config', DEV_CONFIG);
      const config = cliConfig(cmd);
      ensureDataDir(config.data_dir);
      loadMasterKey(config.data_dir, { create: true });
      await prepareSeed(config);
      await runForeground(cmd, async (daemon: Daemon) => {
        const demoFile = path.join(config.data_dir, 'demo.json');
        let demo: Record<string, unknown>;
        if (existsSync(demoFile)) {
          demo = JSON.parse(readFileSync(demoFile, 'utf8')) as Record<string, unknown>;
        } else {
          demo = await prepareDemo(daemon);
          writePrivateFile(demoFile, JSON.stringify(demo, null, 2));
        }
        const info: Record<string, unknown> = { base_url: daemon.apiUrl, data_dir: config.data_dir, ...demo };
        info.curl_example = demoCurl(daemon.apiUrl, String(demo.key_id), String(demo.key_secret));
        if (globals(cmd).json) process.stdout.write(JSON.stringify(info) + '\n');
        else process.stdout.write(devBanner(info) + '\n');
      });
    });
}

function devBanner(info: Record<string, any>): string {
  const lines = [
    'Coinkeep sandbox is running (test network, fixed rates). Ctrl-C stops it.',
    '',
    `  base URL      ${info.base_url}`,
    `  data dir      ${info.data_dir}`,
    `  account       ${info.account_id}`,
    `  owner         ${info.owner_email} (TOTP secret ${info.owner_totp_secret})`,
  ];
  if (info.key_id) {
    lines.push(`  test key      ${info.key_id}`, `  secret        ${info.key_secret}`, '', 'Try it (signed, paste as is):', '', info.curl_example);
  }
  lines.push('', `  public catalogue: curl -s ${info.base_url}/v1/currencies`);
  return lines.join('\n');
}
