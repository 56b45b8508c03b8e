import http from 'node:http';
import { EvmAdapter } from '../../src/chains/evm/evm-adapter';
import { parseConfig } from '../../src/config/schema';
import { anvilChainEntry } from '../../src/dev/anvil';
import { killAllAnvils, startAnvil } from '../helpers/anvil';
import { erc20TransferData } from '../../src/chains/evm/erc20';
import { EvmProvider, HOSTED, type ProviderRules } from '../helpers/evm-provider';
import { fmt, report } from './lib';

const BLOCKS = Number(process.env.BENCH_CATCHUP_BLOCKS ?? 10_000);
const PAYMENTS = Number(process.env.BENCH_CATCHUP_PAYMENTS ?? 100);
/** Blocks a catch-up round asks the adapter for (the chain's watch.batch_size default). */
const ROUND = 100;
const ROUNDS = Number(process.env.BENCH_CATCHUP_ROUNDS ?? 3);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Catch-up of 10,000 anvil blocks with payments (ETH and USDT) spread in them, by the EVM adapter
 * (what the chain core asks of the node while it catches up: blocks with transactions and the
 * token's Transfer logs, in rounds of batch_size blocks), through the provider emulator: with a
 * hosted endpoint's limits (5-block eth_getLogs, 20-call batches, 1 MB answers: learned from the
 * endpoint's refusals, from the default max_batch 100 and logs_range 100) against a bare script that
 * knows the limits and fetches the same blocks and logs within them (goal ≤ 1.3×); and without limits
 * against a bare fetch of the same (goal ≤ 1.2×).
 */
export async function run(): Promise<void> {
  const { node, usdt } = await startAnvil();
  try {
    const payee = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
    const start = await node.blockNumber();
    const gap = Math.floor(BLOCKS / PAYMENTS);
    // The payer is one of anvil's own accounts (it signs for them): each payment mines a block of its own.
    const [, payer] = await node.rpc<string[]>('eth_accounts');
    for (let i = 0; i < PAYMENTS; i++) {
      await node.rpc('anvil_mine', [`0x${(gap - 1).toString(16)}`]);
      await node.rpc('eth_sendTransaction', [
        i % 2 === 0 ? { from: payer, to: payee, value: '0x38d7ea4c68000' } : { from: payer, to: usdt, data: erc20TransferData(payee, 1_000_000n) },
      ]);
    }
    const tip = await node.blockNumber();
    const from = start + 1;
    console.log(`\nevm-catchup: ${tip - start} anvil blocks, ${PAYMENTS} payments among them`);
    for (const [name, rules, bare] of [
      ['hosted limits (5-block logs, 20-call batches, 1 MB answers)', HOSTED, { batch: 20, logs: 5 }],
      ['no limits', {}, { batch: 100, logs: 100 }],
    ] as Array<[string, Partial<ProviderRules>, { batch: number; logs: number }]>) {
      const provider = await EvmProvider.start(node.rpcUrl, rules);
      try {
        const chain = parseConfig({ chains: [anvilChainEntry(provider.url, usdt, { options: { rpc_timeout_ms: 60_000 } })] }).chains[0]!;
        const ours: number[] = [];
        const theirs: number[] = [];
        let transfers = 0;
        let bareLogs = 0;
        for (let r = 0; r < ROUNDS; r++) {
          // A fresh adapter each round: its limits learned anew from the endpoint's refusals.
          const adapter = new EvmAdapter(chain);
          let t0 = performance.now();
          transfers = 0;
          for (let a = from; a <= tip; a += ROUND)
            transfers += (await adapter.blocks(a, Math.min(tip, a + ROUND - 1))).reduce((n, b) => n + b.transfers.length, 0);
          ours.push(performance.now() - t0);
          t0 = performance.now();
          bareLogs = await bareFetch(provider.url, usdt, from, tip, bare);
          theirs.push(performance.now() - t0);
        }
        const ratio = median(ours) / median(theirs);
        const goal = Object.keys(rules).length > 0 ? 1.3 : 1.2;
        report(
          `evm-catchup, ${name}`,
          [
            [`Coinkeep adapter, median of ${ROUNDS}`, `${fmt(median(ours) / 1000, 2)} s (${transfers} transfers found)`],
            ['bare script within the same limits', `${fmt(median(theirs) / 1000, 2)} s (${bareLogs} logs)`],
            [
              'endpoint refusals met (batches, log ranges, too large)',
              `${provider.counts.batchesRefused}, ${provider.counts.logsRefused}, ${provider.counts.tooLarge}`,
            ],
          ],
          { name: 'adapter / bare', value: ratio, goal: `≤ ${goal}`, ok: ratio <= goal },
        );
      } finally {
        await provider.stop();
      }
    }
  } finally {
    await killAllAnvils();
  }
}

/**
 * The bare script: blocks `from`..`to` with their transactions and the token's Transfer logs,
 * fetched as a script that knows the endpoint's limits would: rounds of 100 blocks, each as
 * batches of `batch` eth_getBlockByNumber calls and `logs`-block eth_getLogs calls batched the same,
 * four requests in flight; the answers parsed, nothing more. The number of logs.
 */
async function bareFetch(url: string, token: string, from: number, to: number, limits: { batch: number; logs: number }): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const target = new URL(url);
  const post = (body: unknown): Promise<Array<{ result: unknown }>> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: target.hostname, port: target.port, path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, agent },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(parts).toString('utf8')) as Array<{ result: unknown }>));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  const hex = (n: number) => `0x${n.toString(16)}`;
  let logs = 0;
  try {
    for (let a = from; a <= to; a += ROUND) {
      const b = Math.min(to, a + ROUND - 1);
      const calls: unknown[] = [];
      for (let h = a; h <= b; h++) calls.push({ method: 'eth_getBlockByNumber', params: [hex(h), true] });
      for (let h = a; h <= b; h += limits.logs)
        calls.push({ method: 'eth_getLogs', params: [{ fromBlock: hex(h), toBlock: hex(Math.min(b, h + limits.logs - 1)), address: [token] }] });
      const requests: unknown[][] = [];
      for (let i = 0; i < calls.length; i += limits.batch)
        requests.push(calls.slice(i, i + limits.batch).map((c, id) => ({ jsonrpc: '2.0', id, ...(c as object) })));
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < requests.length) {
            const answers = await post(requests[next++]);
            for (const x of answers)
              if (Array.isArray(x.result) && (x.result as unknown[]).length > 0 && typeof (x.result as Array<{ logIndex?: string }>)[0]!.logIndex === 'string')
                logs += (x.result as unknown[]).length;
          }
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return logs;
}
