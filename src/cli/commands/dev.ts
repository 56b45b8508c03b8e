import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig, PROJECT_ROOT } from '../../config/load';
import { ensureDataDir, loadMasterKey, writePrivateFile } from '../../db/seal';
import type { Daemon } from '../../daemon/main';
import { adminCall } from '../admin-client';
import { cliConfig, configPath, globals, output } from '../context';
import { runForeground } from './lifecycle';
import {
  addDemoApprover,
  demoCurl,
  demoInvoice,
  demoRefundExample,
  demoWithdrawalCurls,
  DEMO_APPROVER,
  DEMO_WITHDRAWAL_AMOUNT,
  DEMO_WITHDRAWAL_AMOUNTS,
  enableDemoWithdrawals,
  prepareDemo,
} from './dev-demo';
import { withSandboxCode } from '../../dev/sandbox-otp';
import type { InvoiceToPay } from '../../dev/sandbox-pay';
import { UserError } from '../../shared/errors';

/**
 * The sandbox's chains, their SDKs and the wallet setup are loaded when a dev command runs, not by
 * every CLI call (each is a process start, and they are most of its loading time).
 */
const sandboxModules = () => ({
  ...(require('../../wallet/signer-process/main') as typeof import('../../wallet/signer-process/main')),
  ...(require('../../dev/sandbox') as typeof import('../../dev/sandbox')),
  ...(require('../../dev/sandbox-pay') as typeof import('../../dev/sandbox-pay')),
  ...(require('../../dev/chains') as typeof import('../../dev/chains')),
});

/** What `dev mine` and the sandbox's config need: the chains' sandbox halves, not the wallet setup or the payer. */
const sandboxChains = () => ({
  ...(require('../../dev/sandbox') as typeof import('../../dev/sandbox')),
  ...(require('../../dev/chains') as typeof import('../../dev/chains')),
});

export const DEV_CONFIG = path.join(PROJECT_ROOT, 'config', 'dev.yaml');

/**
 * `coinkeep dev`: the sandbox. Its local chain nodes (src/dev/chains.ts), then the daemon in the
 * foreground with config/dev.yaml plus those chains (fixed rates, its own data dir), a demo account
 * created once and printed at every start; Ctrl-C stops it all. `coinkeep dev pay` pays an invoice
 * from the sandbox's funded wallet.
 */
export function registerDevCommands(program: Command): void {
  const dev = program
    .command('dev')
    .description('run the local sandbox in the foreground (config/dev.yaml, demo account)')
    .action(async (_o: unknown, cmd: Command) => {
      if (!globals(cmd).config) cmd.setOptionValue('config', DEV_CONFIG);
      const base = cliConfig(cmd);
      ensureDataDir(base.data_dir);
      loadMasterKey(base.data_dir, { create: true });
      // Checked before any node starts: a second sandbox would rewrite the running one's sandbox.yaml.
      const running = await adminCall(base.data_dir, 'GET', '/admin/status', undefined, 2000).then(
        () => true,
        () => false,
      );
      if (running) throw new UserError(`a coinkeepd is already running with the data dir ${base.data_dir}: stop it first`);
      const { startSandbox, prepareSeed, sandboxOf, demoWithdrawalTargets } = sandboxModules();
      const sandbox = await startSandbox(configPath(cmd), base.data_dir);
      try {
        const config = loadConfig(sandbox.configFile);
        await prepareSeed(config);
        await runForeground(
          cmd,
          async (daemon: Daemon) => {
            const demoFile = path.join(config.data_dir, 'demo.json');
            let demo: Record<string, unknown>;
            if (existsSync(demoFile)) {
              demo = JSON.parse(readFileSync(demoFile, 'utf8')) as Record<string, unknown>;
            } else {
              demo = await prepareDemo(daemon);
              writePrivateFile(demoFile, JSON.stringify(demo, null, 2));
            }
            const approver = await addDemoApprover(daemon, demo);
            if (approver) {
              demo = { ...demo, ...approver };
              writePrivateFile(demoFile, JSON.stringify(demo, null, 2));
            }
            await enableDemoWithdrawals(daemon, demo as { account_id: string; key_id: string; owner_totp_secret: string });
            // The gas stations pay the sweeps of test USDT and the gas of token payouts.
            const gasStations: Array<{ chain_id: string; address: string }> = [];
            for (const [chainId, evm] of daemon.evmPayouts.byChain) {
              const chain = config.chains.find((c) => c.id === chainId)!;
              await sandboxOf(chain.kind)?.fundGasStation?.(chain, evm.gasStation.address);
              gasStations.push({ chain_id: chainId, address: evm.gasStation.address });
            }
            const chains = sandboxChainsInfo(daemon, sandbox.chains);
            const info: Record<string, unknown> = { base_url: daemon.apiUrl, data_dir: config.data_dir, ...demo, chains, gas_stations: gasStations };
            info.curl_example = demoCurl(daemon.apiUrl, String(demo.key_id), String(demo.key_secret), chains[0]!.coins[0]!.coin_id);
            const targets = demoWithdrawalTargets(chains);
            if (targets.utxo) {
              const curls = demoWithdrawalCurls(
                daemon.apiUrl,
                String(demo.key_id),
                String(demo.key_secret),
                targets.utxo.chain.coins[0]!.coin_id,
                targets.utxo.to,
              );
              info.estimate_curl_example = curls.estimate;
              info.withdrawal_curl_example = curls.withdrawal;
              // An invoice to overpay, and the refund of its excess (PRODUCT §16).
              info.refund_example = await demoRefundExample(
                daemon,
                String(demo.account_id),
                String(demo.key_id),
                String(demo.key_secret),
                targets.utxo.chain.coins[0]!.coin_id,
              );
            }
            // The same for each coin of the EVM chains (ETH and the test USDT on anvil), paid from the treasury.
            info.evm_withdrawal_examples = targets.account
              .flatMap(({ chain: c, to }) => c.coins.filter((coin) => DEMO_WITHDRAWAL_AMOUNTS[coin.ticker]).map((coin) => ({ chain_id: c.id, coin, to })))
              .map(({ chain_id, coin, to }) => {
                const amount = DEMO_WITHDRAWAL_AMOUNTS[coin.ticker]!;
                const curls = demoWithdrawalCurls(
                  daemon.apiUrl,
                  String(demo.key_id),
                  String(demo.key_secret),
                  coin.coin_id,
                  to,
                  amount,
                  `sandbox-${chain_id}-${coin.ticker.toLowerCase()}-1`,
                );
                return {
                  chain_id,
                  ticker: coin.ticker,
                  coin_id: coin.coin_id,
                  amount,
                  to_address: to,
                  estimate_curl_example: curls.estimate,
                  withdrawal_curl_example: curls.withdrawal,
                };
              });
            info.checkout_url = (await demoInvoice(daemon, String(demo.account_id))).checkout_url;
            if (globals(cmd).json) process.stdout.write(JSON.stringify(info) + '\n');
            else process.stdout.write(devBanner(info) + '\n');
          },
          config,
        );
      } finally {
        await sandbox.stop();
      }
    });

  dev
    .command('pay <invoice_id>')
    .description("pay an invoice from the sandbox's funded wallet and mine until it is confirmed")
    .option('--amount <amount>', 'pay this much instead of what is due (less or more)')
    .option('--coin <coin_id>', "pay with this coin of the invoice's network (or of --network) instead of the invoice's coin")
    .option('--network <name>', "pay on this network (a sandbox chain of the invoice's family, e.g. base for an ethereum invoice) instead of the invoice's own")
    .action(async (invoiceId: string, o: { amount?: string; coin?: string; network?: string }, cmd: Command) => {
      const config = sandboxConfig(cmd);
      const invoicePath = `/admin/invoices/${encodeURIComponent(invoiceId)}`;
      type Seen = InvoiceToPay & { paid_amount: string; overpaid_amount: string };
      const before = await adminCall<Seen>(config.data_dir, 'GET', invoicePath);
      const paid = await sandboxModules().payInvoice(config, before, { amount: o.amount, coinId: o.coin, network: o.network });
      // Paid on another network, or in another coin, than the invoice's: a stray payment (PRODUCT §17), never credited to the invoice on its own.
      const stray = paid.coin_id !== paid.invoice_coin_id;
      // The daemon credits at its next poll: wait for it so the answer shows the invoice as it now is.
      let after = before;
      const deadline = Date.now() + (stray ? 0 : CREDIT_WAIT_MS);
      while (after.paid_amount === before.paid_amount && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        after = await adminCall<Seen>(config.data_dir, 'GET', invoicePath);
      }
      const credited = after.paid_amount !== before.paid_amount;
      const result = { ...paid, invoice_status: after.status, paid_amount: after.paid_amount, overpaid_amount: after.overpaid_amount, credited, stray };
      output(cmd, result, (r) =>
        [
          `paid ${r.amount} ${r.ticker} to ${r.to} (${r.network}) in ${r.txid}`,
          r.stray
            ? `not the invoice's ${r.network !== r.invoice_network ? `network (${r.invoice_network})` : 'coin'}: a stray payment, not credited to invoice ${r.invoice_id}; the merchant credits or refunds it (GET /v1/strays)`
            : r.credited
              ? `invoice ${r.invoice_id}: ${r.invoice_status}, paid ${r.paid_amount}${
                  r.overpaid_amount !== '0' ? `, overpaid ${r.overpaid_amount} (refund it: POST /v1/refunds with amount "excess")` : ''
                }`
              : `invoice ${r.invoice_id}: not credited yet (is coinkeep dev running?)`,
        ].join('\n'),
      );
    });

  dev
    .command('mine [blocks]')
    .description('mine blocks on every sandbox chain (default 1), e.g. to confirm a payout')
    .action(async (blocks: string | undefined, _o: unknown, cmd: Command) => {
      const n = blocks === undefined ? 1 : Number(blocks);
      if (!Number.isSafeInteger(n) || n < 1 || n > 1000) throw new UserError('blocks must be a whole number from 1 to 1000');
      const config = sandboxConfig(cmd);
      const mined: Array<{ chain_id: string; blocks: number; height: number }> = [];
      for (const chain of config.chains) {
        const family = sandboxChains().sandboxOf(chain.kind);
        if (family) mined.push({ chain_id: chain.id, blocks: n, height: (await family.mine(chain, n)).height });
      }
      output(cmd, { chains: mined }, (r) =>
        r.chains.map((c: { chain_id: string; blocks: number; height: number }) => `${c.chain_id}: mined ${c.blocks}, height ${c.height}`).join('\n'),
      );
    });

  dev
    .command('approve <withdrawal_id>')
    .description("approve a demo withdrawal waiting in review or for a second approval, as the demo approver with the sandbox's own code")
    .action(async (withdrawalId: string, _o: unknown, cmd: Command) => {
      const config = sandboxConfig(cmd);
      const demoFile = path.join(config.data_dir, 'demo.json');
      if (!existsSync(demoFile)) throw new UserError('the sandbox has no demo account yet: start it with coinkeep dev');
      const demo = JSON.parse(readFileSync(demoFile, 'utf8')) as { account_id: string; approver_totp_secret?: string };
      if (!demo.approver_totp_secret) throw new UserError('the sandbox has no demo approver yet: start it again with coinkeep dev');
      const target = `/admin/accounts/${encodeURIComponent(demo.account_id)}/withdrawals/${encodeURIComponent(withdrawalId)}/approve`;
      const w = await withSandboxCode(demo.approver_totp_secret, (otp) =>
        adminCall<{ id: string; status: string }>(config.data_dir, 'POST', target, { as: DEMO_APPROVER, otp }),
      );
      output(cmd, w, (x) => `withdrawal ${x.id}: ${x.status}`);
    });
}

/** The config the running sandbox wrote (its chains included). */
function sandboxConfig(cmd: Command) {
  if (!globals(cmd).config) cmd.setOptionValue('config', DEV_CONFIG);
  const file = sandboxChains().sandboxConfigPath(cliConfig(cmd).data_dir);
  if (!existsSync(file)) throw new UserError('the sandbox has not run yet: start it with coinkeep dev');
  return loadConfig(file);
}

const CREDIT_WAIT_MS = 30_000;

interface SandboxChainInfo {
  id: string;
  kind: string;
  rpc_url: string;
  coins: Array<{ ticker: string; coin_id: string; contract: string | null }>;
}

/** The sandbox's chains and their coins, for the banner and --json. */
function sandboxChainsInfo(daemon: Daemon, chains: Record<string, unknown>[]): SandboxChainInfo[] {
  return chains.map((c) => ({
    id: String(c.id),
    kind: String(c.kind),
    rpc_url: withoutCredentials(String(c.rpc_url ?? c.full_node_url)),
    coins: daemon.catalog
      .coins()
      .filter((coin) => coin.chain_id === c.id)
      .map((coin) => ({ ticker: coin.ticker, coin_id: coin.id, contract: coin.asset === 'native' ? null : coin.asset })),
  }));
}

/** A node URL as shown to people: the user and password (bcoin's API key) stay in the sandbox config. */
function withoutCredentials(raw: string): string {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  return url.toString();
}

/** The text `coinkeep dev` prints at start (without --json). */
export function devBanner(info: Record<string, any>): string {
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
  if (info.withdrawal_curl_example) {
    lines.push(
      '',
      `The demo key may withdraw. Once coinkeep dev pay has paid a BTC invoice, estimate a withdrawal of ${DEMO_WITHDRAWAL_AMOUNT} BTC:`,
      '',
      info.estimate_curl_example,
      '',
      'and make it (to the sandbox wallet; change payout_id for another):',
      '',
      info.withdrawal_curl_example,
    );
  }
  for (const x of (info.evm_withdrawal_examples ?? []) as Array<Record<string, string>>) {
    lines.push(
      '',
      `Once coinkeep dev pay has paid an invoice in ${x.ticker} on ${x.chain_id}, estimate a withdrawal of ${x.amount} ${x.ticker} (swept into the treasury first; the gas station pays a token's gas):`,
      '',
      x.estimate_curl_example!,
      '',
      `and make it (to the sandbox wallet ${x.to_address}; change payout_id for another):`,
      '',
      x.withdrawal_curl_example!,
    );
  }
  if (info.refund_example) {
    const x = info.refund_example as Record<string, string>;
    lines.push(
      '',
      `Refund an overpayment: demo invoice ${x.invoice_id} asks ${x.payer_amount} ${x.ticker}; overpay it by ${x.excess} ${x.ticker} with`,
      '',
      `  ${x.pay_command}`,
      '',
      'then refund the excess (the answer has refund_url: the payer opens it and enters their address; paste twice, the same refund):',
      '',
      x.refund_curl_example!,
    );
  }
  if (info.withdrawal_curl_example || (info.evm_withdrawal_examples ?? []).length > 0) {
    lines.push(
      '',
      'In the first 24 h after withdraw was granted a withdrawal waits in review (review_reason pattern): coinkeep dev approve WITHDRAWAL_ID',
      'Mine blocks to confirm a payout: coinkeep dev mine [N]',
    );
  }
  for (const c of info.chains as SandboxChainInfo[]) {
    lines.push('', `  chain ${c.id} (${c.kind}) at ${c.rpc_url}`);
    for (const coin of c.coins) lines.push(`    ${coin.ticker.padEnd(6)} coin_id ${coin.coin_id}${coin.contract ? `  contract ${coin.contract}` : ''}`);
  }
  for (const g of (info.gas_stations ?? []) as Array<{ chain_id: string; address: string }>)
    lines.push(`  gas station of ${g.chain_id}: ${g.address} (funded by the sandbox)`);
  lines.push('', `Payment page of a demo invoice (USD 25, the payer picks the coin): ${info.checkout_url}`);
  lines.push('', 'Pay an invoice from the sandbox wallet: coinkeep dev pay INVOICE_ID [--amount X] [--coin COIN_ID] [--network NAME]');
  // A family with two sandbox chains (ethereum and base): an invoice's address there is the same on both.
  const byKind = new Map<string, string[]>();
  for (const c of info.chains as SandboxChainInfo[]) byKind.set(c.kind, [...(byKind.get(c.kind) ?? []), c.id]);
  for (const ids of byKind.values()) {
    if (ids.length < 2) continue;
    lines.push(
      `Pay on the wrong network (an invoice's address on ${ids.join(' or ')} is the same on the other): coinkeep dev pay INVOICE_ID --network ${ids[1]}`,
      '  the payment is a stray: recorded, not credited to the invoice, for the merchant to credit or refund.',
    );
  }
  lines.push('', `  public catalogue: curl -s ${info.base_url}/v1/currencies`);
  return lines.join('\n');
}
