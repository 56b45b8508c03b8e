import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { coinId } from '../../src/catalog/coins';
import { parseConfig } from '../../src/config/schema';
import { anvilChainEntry } from '../../src/dev/anvil';
import { bcoinChainEntry } from '../../src/dev/bcoin';
import { tronChainEntry } from '../../src/dev/tron';
import { TronNode } from '../../src/dev/tron-node';
import { Amount } from '../../src/shared/amount';
import { killAllAnvils, startAnvil } from '../helpers/anvil';
import { killAllBcoins, startBcoin } from '../helpers/bcoin';
import { FakeCoreWait } from '../helpers/fake-core-wait';
import { waitWatched } from '../helpers/chain-scan';
import { FIXED_RATES, merchantWithKey, startTestDaemon, type TestDaemon } from '../helpers/daemon';
import { ApiClient, startInvoiceFixture } from '../helpers/invoice-fixture';
import { fmt, percentile } from './lib';

/**
 * Issue 35 §1: the time from the node producing the block that gives a payment its last needed
 * confirmation to (a) the `invoice.paid` webhook received by a local receiver and (b) the payment
 * page's status showing `paid` to a client that watches it as the page's script does (polling
 * /pay/{id}/status every 4 s; with its event stream where the daemon serves one). The receiver and
 * the page clients run in a process of their own (latency-client.ts).
 *
 * Per chain (BENCH_LATENCY_CHAINS=anvil,bcoin,tron), BENCH_LATENCY_PAYMENTS payments (50), in
 * blocks of PER_BLOCK: the payments' block is mined, then after a random pause within the poll
 * interval (so the block falls anywhere in the daemon's poll cycle) the block that confirms them
 * (2 confirmations); t0 is taken just before that block is asked for. Rounds overlap: the next
 * round's payments go out while the last round's pages are still waiting.
 */
const PAYMENTS = Number(process.env.BENCH_LATENCY_PAYMENTS ?? 50);
const PER_BLOCK = Number(process.env.BENCH_LATENCY_PER_BLOCK ?? 5);
const CHAINS = (process.env.BENCH_LATENCY_CHAINS ?? 'anvil,bcoin,tron').split(',').filter(Boolean);
/** The sandbox chains' poll interval (src/dev): what `coinkeep dev` runs with. */
const POLL_MS = Number(process.env.BENCH_LATENCY_POLL_MS ?? 1000);
const CONFIRMATIONS = 2;
/** The Tron stand-in's block time when it makes its own blocks (mainnet's). */
const TRON_BLOCK_MS = 3000;
const DONE_WITHIN_MS = 60_000;
/** Issue 35 §3: open payment pages on an idle daemon (0: that part is skipped), and the seconds its CPU is measured (above the pages' 30 s poll). */
const IDLE_PAGES = Number(process.env.BENCH_LATENCY_IDLE_PAGES ?? 1000);
const IDLE_SECONDS = Number(process.env.BENCH_LATENCY_IDLE_SECONDS ?? 35);

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Driver {
  name: string;
  ticker: string;
  decimals: number;
  entry(variant: Variant): Record<string, unknown>;
  /** Pays `amount` (coin units) to `address`; the payment is then in the node's pool or in a block. */
  pay(address: string, amount: string): Promise<void>;
  /** Mines a block; or, on a node that makes its own at its slots, waits for the next and gives the time it was made (t0). */
  mine(): Promise<number | void>;
  /** The variants this chain runs in, push (or its block-time alignment) off first. */
  variants: Variant[];
  stop(): Promise<void>;
}

interface Variant {
  name: string;
  /** EVM: the node's WebSocket endpoint as ws_url; Bitcoin: waitfornewblock; Tron: polls aligned to block times. */
  push: boolean;
}

interface Client {
  port: number;
  watch(id: string, base: string, ip: string, stay?: boolean, sse?: boolean): void;
  arrivals: Map<string, { webhook?: number; page?: number; via?: string }>;
  stop(): void;
}

function startClient(): Promise<Client> {
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'latency-client.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const arrivals = new Map<string, { webhook?: number; page?: number; via?: string }>();
  return new Promise((resolve, reject) => {
    let buf = '';
    child.once('exit', (code) => reject(new Error(`the latency client exited with ${code}`)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (c: string) => {
      buf += c;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, i)) as { port?: number; kind?: 'webhook' | 'page'; id?: string; at?: number; via?: string };
        buf = buf.slice(i + 1);
        if (msg.port !== undefined)
          resolve({
            port: msg.port,
            arrivals,
            watch: (id, base, ip, stay, sse = true) => child.stdin!.write(JSON.stringify({ watch: id, base, ip, sse, stay }) + '\n'),
            stop: () => child.stdin!.end(),
          });
        else if (msg.id) {
          const a = arrivals.get(msg.id) ?? {};
          if (msg.kind === 'webhook') a.webhook ??= msg.at;
          else {
            a.page ??= msg.at;
            a.via ??= msg.via;
          }
          arrivals.set(msg.id, a);
        }
      }
    });
  });
}

async function anvilDriver(): Promise<Driver> {
  const { node, usdt } = await startAnvil();
  const accounts = await node.rpc<string[]>('eth_accounts');
  const payer = accounts[7]!;
  // Payments wait in the pool for the block the driver mines: with a block per transaction, a
  // round's later payments would confirm its earlier ones before t0.
  await node.rpc('evm_setAutomine', [false]);
  return {
    name: 'anvil',
    ticker: 'ETH',
    decimals: 18,
    entry: (v) =>
      anvilChainEntry(node.rpcUrl, usdt, {
        confirmations: CONFIRMATIONS,
        options: { poll_interval_ms: POLL_MS, stall_seconds: 0 },
        sweep: { min: { ETH: '1000000', USDT: '1000000000' } },
        ...(v.push ? { ws_url: node.rpcUrl.replace(/^http/, 'ws') } : {}),
      }),
    variants: [
      { name: 'polling', push: false },
      { name: 'ws_url push', push: true },
    ],
    pay: async (to, amount) => {
      await node.rpc('eth_sendTransaction', [{ from: payer, to, value: '0x' + Amount.of(amount).toBaseUnits(18).toString(16) }]);
    },
    mine: async () => {
      await node.mine(1);
    },
    stop: () => killAllAnvils(),
  };
}

/**
 * bcoin has no waitfornewblock (it answers method not found, and is then polled only): the push
 * variant runs through the fake Core front of the tests (test/helpers/fake-core-wait.ts), which
 * answers the daemon's waitfornewblock as Core does, the moment the driver has mined a block.
 */
async function bcoinDriver(): Promise<Driver> {
  const node = await startBcoin();
  const front = await FakeCoreWait.start(node.rpcUrl);
  const frontUrl = new URL(node.rpcUrl);
  frontUrl.port = String(front.port);
  return {
    name: 'bcoin',
    ticker: 'BTC',
    decimals: 8,
    entry: (v) =>
      bcoinChainEntry(v.push ? frontUrl.toString() : node.rpcUrl, {
        confirmations: CONFIRMATIONS,
        options: { poll_interval_ms: POLL_MS, stall_seconds: 0, wait_for_blocks: v.push },
      }),
    pay: async (address, amount) => {
      await node.pay([{ address, value: Amount.of(amount).toBaseUnits(8) }]);
    },
    mine: async () => {
      await node.mine(1);
      await front.announce();
    },
    variants: [
      { name: 'polling', push: false },
      { name: 'waitfornewblock (fake Core front)', push: true },
    ],
    stop: async () => {
      await front.stop();
      await killAllBcoins();
    },
  };
}

/**
 * The Tron stand-in making its own blocks at 3 s wall-clock slots, as a live network (TronNode.produce):
 * polled every POLL_MS (block_time_ms 0, as before), then aligned to the block timestamps.
 */
async function tronDriver(): Promise<Driver> {
  const node = await TronNode.start();
  let made: Array<(at: number) => void> = [];
  // Payments wait in the pool until the driver asks for a block (a round's payments in one block, as on anvil).
  node.holdPending(true);
  node.produce(TRON_BLOCK_MS, () => {
    // When the block was made: t0. The next ones hold payments again until asked for.
    node.holdPending(true);
    const at = now();
    const waiting = made;
    made = [];
    for (const w of waiting) w(at);
  });
  // A first block at the wall clock's time: the stand-in's earlier blocks carry 2023 timestamps,
  // and a payment made on them would expire in the first block made now.
  await new Promise<number>((resolve) => made.push(resolve));
  return {
    name: 'tron (stand-in)',
    ticker: 'TRX',
    decimals: 6,
    entry: (v) =>
      tronChainEntry(node, {
        confirmations: CONFIRMATIONS,
        options: { poll_interval_ms: POLL_MS, stall_seconds: 0, block_time_ms: v.push ? TRON_BLOCK_MS : 0 },
      }),
    pay: async (address, amount) => {
      node.pay(address, 'native', Amount.of(amount).toBaseUnits(6));
    },
    mine: () =>
      new Promise<number>((resolve) => {
        node.holdPending(false);
        made.push(resolve);
      }),
    variants: [
      { name: `polling every ${POLL_MS} ms`, push: false },
      { name: `aligned to the ${TRON_BLOCK_MS} ms block time`, push: true },
    ],
    stop: () => node.stop(),
  };
}

/** One chain, one variant: the payments, and the latencies of each to the webhook and to the page. */
async function measure(driver: Driver, variant: Variant, client: Client): Promise<void> {
  const entry = driver.entry(variant);
  const chainId = String(entry.id);
  const td: TestDaemon = await startTestDaemon({ chains: [entry], trust_proxy: 1, rates: { sources: [{ kind: 'fixed', rates: FIXED_RATES }] } });
  try {
    await waitWatched(td);
    const m = await merchantWithKey(td.daemon, { rateLimit: 100_000 });
    const api = new ApiClient(td.url, m.keyId, m.secret);
    const ep = await api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:${client.port}/hooks`, event_types: ['invoice.paid'] });
    if (ep.status !== 201) throw new Error(`endpoint: ${ep.status} ${JSON.stringify(ep.body)}`);
    const coin = coinId(chainId, 'native');
    const t0 = new Map<string, number>();
    let n = 0;
    for (let round = 0; n < PAYMENTS; round++) {
      const ids: string[] = [];
      for (let i = 0; i < PER_BLOCK && n < PAYMENTS; i++, n++) {
        const res = await api.post('/v1/invoices', { amount: '0.01', currency: driver.ticker, coin_id: coin, order_id: `lat-${variant.name}-${n}` });
        if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
        const inv = res.body as { id: string; address: string; payer_amount: string };
        client.watch(inv.id, `${td.url}/pay/${inv.id}`, `10.35.${(n >> 8) & 255}.${n & 255}`);
        await driver.pay(inv.address, inv.payer_amount);
        ids.push(inv.id);
      }
      await driver.mine();
      // Anywhere in the poll cycle.
      await sleep(50 + Math.random() * POLL_MS);
      const asked = now();
      const made = await driver.mine();
      const at = typeof made === 'number' ? made : asked;
      for (const id of ids) t0.set(id, at);
      await sleep(50 + Math.random() * 200);
    }
    const deadline = Date.now() + DONE_WITHIN_MS;
    const complete = () => [...t0.keys()].every((id) => client.arrivals.get(id)?.webhook !== undefined && client.arrivals.get(id)?.page !== undefined);
    while (!complete() && Date.now() < deadline) await sleep(50);
    const webhook: number[] = [];
    const page: number[] = [];
    let viaSse = 0;
    for (const [id, at] of t0) {
      const a = client.arrivals.get(id);
      if (a?.webhook !== undefined) webhook.push(a.webhook - at);
      if (a?.page !== undefined) page.push(a.page - at);
      if (a?.via === 'sse') viaSse++;
    }
    webhook.sort((a, b) => a - b);
    page.sort((a, b) => a - b);
    const row = (xs: number[]) =>
      xs.length === 0 ? 'none arrived' : `p50 ${fmt(percentile(xs, 50), 0)}  p99 ${fmt(percentile(xs, 99), 0)}  max ${fmt(xs[xs.length - 1]!, 0)} ms`;
    const cfg = parseConfig({ chains: [entry] }).chains[0]!;
    console.log(
      `\n== latency, ${driver.name}, ${variant.name}: ${t0.size} payments, ${CONFIRMATIONS} confirmations, poll interval ${cfg.watch.poll_interval_ms} ms${cfg.watch.block_time_ms ? `, block time ${cfg.watch.block_time_ms} ms` : ''}`,
    );
    console.log(`  ${'block → invoice.paid webhook received'.padEnd(44)} ${row(webhook)}  (${webhook.length}/${t0.size})`);
    console.log(`  ${'block → page shows paid'.padEnd(44)} ${row(page)}  (${page.length}/${t0.size}; ${viaSse} by event stream, page poll 4000 ms)`);
  } finally {
    await td.stop();
  }
}

/**
 * The daemon's CPU while idle (no chain moving: idle nodes), over IDLE_SECONDS, without open pages
 * and then with IDLE_PAGES payment pages open on as many invoices (each with its event stream where
 * served, and its status poll), as a share of one core. Goal: the pages add ≤ 5 %.
 */
async function idlePages(client: Client): Promise<void> {
  const f = await startInvoiceFixture({ overrides: { trust_proxy: 1 }, rateLimit: 100_000 });
  try {
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < IDLE_PAGES) {
          // Bodies differ: the client signs a repeated request a second later each time.
          const res = await f.api.post('/v1/invoices', { amount: '5', currency: 'USD', order_id: `idle-${next++}` });
          if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
          ids.push((res.body as { id: string }).id);
        }
      }),
    );
    const cpuShare = async (): Promise<number> => {
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      await sleep(IDLE_SECONDS * 1000);
      const d = process.cpuUsage(cpu);
      return (d.user + d.system) / 1000 / (performance.now() - t0);
    };
    await sleep(1000);
    const idle = await cpuShare();
    // As before the event stream: each page polls its status every 4 s (pages in a client of their own, stopped after).
    const pollers = await startClient();
    ids.forEach((id, i) => pollers.watch(id, `${f.td.url}/pay/${id}`, `10.37.${(i >> 8) & 255}.${i & 255}`, true, false));
    await sleep(5000);
    const polled = await cpuShare();
    pollers.stop();
    await sleep(2000);
    ids.forEach((id, i) => client.watch(id, `${f.td.url}/pay/${id}`, `10.36.${(i >> 8) & 255}.${i & 255}`, true));
    // Let them connect (and each first poll come) before measuring.
    await sleep(5000);
    const open = await cpuShare();
    console.log(`\n== idle daemon with ${IDLE_PAGES} payment pages open, ${IDLE_SECONDS} s each`);
    console.log(`  ${'daemon CPU, no page open (baseline)'.padEnd(44)} ${fmt(idle * 100, 2)} % of a core`);
    console.log(`  ${`daemon CPU, ${IDLE_PAGES} pages polling every 4 s (no stream)`.padEnd(44)} ${fmt(polled * 100, 2)} % of a core`);
    console.log(`  ${`daemon CPU, ${IDLE_PAGES} pages with event streams`.padEnd(44)} ${fmt(open * 100, 2)} % of a core  (poll every 30 s once events arrive)`);
    const added = (open - idle) * 100;
    console.log(`  ${'added by the pages with streams'.padEnd(44)} ${fmt(added, 2)} % of a core  (goal ≤ 5: ${added <= 5 ? 'met' : 'NOT met'})`);
    console.log(`  ${'ratio, streams open / none open'.padEnd(44)} ${fmt(open / idle, 2)}  (CPU time over the same ${IDLE_SECONDS} s window)`);
  } finally {
    await f.stop();
  }
}

export async function run(): Promise<void> {
  const client = await startClient();
  try {
    for (const name of CHAINS) {
      const make = { anvil: anvilDriver, bcoin: bcoinDriver, tron: tronDriver }[name];
      if (!make) throw new Error(`no latency driver for chain ${name}`);
      const driver = await make();
      try {
        for (const v of driver.variants) await measure(driver, v, client);
      } finally {
        await driver.stop();
      }
    }
    if (IDLE_PAGES > 0) await idlePages(client);
  } finally {
    client.stop();
  }
}
