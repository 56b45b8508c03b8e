import { randomBytes } from 'node:crypto';
import { TronWeb } from 'tronweb';
import { coinId } from '../../src/catalog/coins';
import { startTestDaemon } from '../helpers/daemon';
import { merchantSide } from '../helpers/merchant-side';
import { TronNode } from '../helpers/tron-node';
import { fmt, report } from './lib';

/** Tron makes a block every 3 s; the run is that chain sped up SCALE times (blocks and polls alike). */
const BLOCK_MS = 3000;
const SCALE = Number(process.env.BENCH_TRON_SCALE ?? 10);
const BLOCKS = Number(process.env.BENCH_TRON_BLOCKS ?? 200);
/** TronGrid's documented quota per key. */
const DAY_BUDGET = 100_000;
const BLOCKS_PER_DAY = 86_400_000 / BLOCK_MS;

/**
 * Requests an idle daemon makes watching a Tron chain (issue 30 §5): the stand-in makes a block
 * every 3 s (scaled), the daemon polls at the default 3 s (scaled); one run with empty blocks, one
 * where every block holds a contract call to no watched address (mainnet: USDT moves in every
 * block, so every block's transaction infos are read). Printed per block, per hour and per day
 * against a 100,000-a-day quota; a payment in the block after the run is credited (nothing missed).
 */
export async function run(): Promise<void> {
  for (const busy of [false, true]) await measure(busy, false);
  // The same mainnet-like chain with the endpoint's requests_per_day set to the quota (scaled like the chain's time).
  await measure(true, true);
}

async function measure(contractCallEveryBlock: boolean, paced: boolean): Promise<void> {
  const node = await TronNode.start();
  const interval = Math.round(BLOCK_MS / SCALE);
  const chain = {
    id: 'tron',
    kind: 'tron',
    ...(paced ? { full_node_urls: [{ url: node.url, requests_per_day: DAY_BUDGET * SCALE }] } : { full_node_url: node.url }),
    confirmations: 1,
    tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }],
    options: { poll_interval_ms: interval, stall_seconds: 0, genesis_block_id: node.genesisId },
  };
  const rates = { sources: [{ kind: 'fixed', rates: { TRX: { USD: '0.25' }, USDT: { USD: '1' } } }] };
  const td = await startTestDaemon({ chains: [chain], rates });
  try {
    const side = await merchantSide(td);
    const invoice = await side.createInvoice({ amount: '5', currency: 'USDT', coin_id: coinId('tron', node.usdt) });
    await until(() => td.daemon.chains.status()[0]!.scanned_height === node.height);
    const stranger = () => TronWeb.address.fromHex('41' + randomBytes(20).toString('hex')) as string;
    const before = node.requests.length;
    const started = Date.now();
    for (let i = 0; i < BLOCKS; i++) {
      if (contractCallEveryBlock) node.pay(stranger(), node.usdt, 1n);
      node.mine();
      await sleepUntil(started + (i + 1) * interval);
    }
    await until(() => td.daemon.chains.status()[0]!.scanned_height === node.height);
    const requests = node.requests.slice(before);
    // Then a payment in the next block: the scan kept up (what it costs after, the sweep of it, is not idle).
    node.pay(invoice.address, node.usdt, 5_000_000n);
    node.mine();
    let paid = '';
    for (const deadline = Date.now() + 10_000; paid !== 'paid' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50)))
      paid = (await side.invoice(invoice.id)).status;
    const perBlock = requests.length / BLOCKS;
    const perDay = perBlock * BLOCKS_PER_DAY;
    const byPath = new Map<string, number>();
    for (const r of requests) byPath.set(r.path, (byPath.get(r.path) ?? 0) + 1);
    report(
      `tron-idle: idle daemon on a 3 s Tron chain, ${contractCallEveryBlock ? 'a contract call in every block (mainnet-like)' : 'empty blocks'}${paced ? ', requests_per_day 100,000' : ''} (${BLOCKS} blocks, ${SCALE}x speed)`,
      [
        ['requests', String(requests.length)],
        ...[...byPath].map(([path, n]): [string, string] => [`  ${path}`, `${n} (${fmt(n / BLOCKS, 2)} a block)`]),
        ['requests a block', fmt(perBlock, 2)],
        ['requests an hour (3 s blocks)', fmt(perBlock * 1200, 0)],
        ['requests a day (3 s blocks)', fmt(perDay, 0)],
        ['blocks scanned / made', `${td.daemon.chains.status()[0]!.scanned_height} / ${node.height}`],
        ['payment in the block after', paid],
      ],
      {
        name: 'a day against the 100,000 quota',
        value: perDay / DAY_BUDGET,
        goal: paced ? '<= 1 (paced)' : '<= 1 (unpaced)',
        ok: perDay <= DAY_BUDGET && paid === 'paid',
      },
    );
  } finally {
    await td.stop();
    await node.stop();
  }
}

async function until(ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('tron-idle: the daemon did not catch up');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleepUntil = (at: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
