import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import type { GasStationResponse } from '../../admin/contract';
import { adminCall } from '../admin-client';
import { cliConfig, output } from '../context';
import { showBackup } from './signer';

/** Backup words for a restore: piped on stdin, or typed at a prompt on a terminal. */
export async function readMnemonic(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question('Backup words (separated by spaces): ');
  } finally {
    rl.close();
  }
}

/** `coinkeep wallet info|gas-station` (operator, over the admin socket) and `backup` (with the signer key, in the operator's shell). */
export function registerWalletCommands(program: Command): void {
  const wallet = program.command('wallet').description('the HD wallet behind every deposit address (operator)');

  wallet
    .command('info')
    .description("seed fingerprint and derivation paths per chain; --account: that account's branch")
    .option('--account <id>', 'show the wallet branch of this merchant account')
    .action(async (o: { account?: string }, cmd: Command) => {
      if (o.account !== undefined) {
        const b = await adminCall(cliConfig(cmd).data_dir, 'GET', `/admin/wallet/branches/${encodeURIComponent(o.account)}`);
        output(cmd, b, (x) => `account ${x.account_id}: wallet branch ${x.branch}`);
        return;
      }
      const r = await adminCall(cliConfig(cmd).data_dir, 'GET', '/admin/wallet');
      output(cmd, r, (x) => [`seed fingerprint ${x.fingerprint}`, ...x.chains.map((c: any) => `  ${c.chain_id.padEnd(12)} ${c.path}`)].join('\n'));
    });

  wallet
    .command('gas-station')
    .description("the operator's address that pays an EVM chain's sweep and token-payout gas: fund it")
    .requiredOption('--chain <id>', 'the EVM chain (its id in the config)')
    .action(async (o: { chain: string }, cmd: Command) => {
      const r = await adminCall<GasStationResponse>(cliConfig(cmd).data_dir, 'GET', `/admin/wallet/gas-station/${encodeURIComponent(o.chain)}`);
      output(cmd, r, (x) =>
        [
          `gas station of ${x.chain_id}: ${x.address} (${x.path})`,
          `balance ${x.balance ?? 'not read yet'}, the next sweeps and payouts need ${x.needed}`,
          ...(x.warning ? [`WARNING: ${x.warning}`] : []),
        ].join('\n'),
      );
    });

  wallet
    .command('backup')
    .description('show the seed words to write down (read with the signer key in this shell; keep them offline)')
    .action(async (_o: unknown, cmd: Command) => showBackup(cmd));
}
