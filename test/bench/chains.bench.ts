import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import { spawn } from 'node:child_process';
import { getAddress, id, Interface } from 'ethers';
import { EvmAdapter } from '../../src/chains/evm/evm-adapter';
import { tronFromHex } from '../../src/chains/tron/derive';
import { TronAdapter } from '../../src/chains/tron/tron-adapter';
import type { BlockHeader, BlockRef, ChainReader, NormalisedBlock } from '../../src/chains/types';
import { WatchedAddresses } from '../../src/chains/watched-addresses';
import { coinId } from '../../src/catalog/coins';
import { ChainTransferEntity } from '../../src/db/entities/chain';
import { parseConfig } from '../../src/config/schema';
import { loadMasterKey } from '../../src/db/seal';
import { startDaemon, type Daemon } from '../../src/daemon/main';
import { rawQuery } from '../../src/db/raw';
import { anvilChainEntry } from '../../src/dev/anvil';
import { silentLogger } from '../../src/shared/logger';
import { newId } from '../../src/shared/ids';
import { prepareSeed } from '../../src/wallet/signer-process/main';
import { killAllAnvils, startAnvil } from '../helpers/anvil';
import { merchantWithKey, testConfig, TEST_MNEMONIC } from '../helpers/daemon';
import { signRequest } from '../helpers/signer';
import { IdleChain } from '../helpers/idle-chain';
import { TronNode } from '../helpers/tron-node';
import { fmt, report } from './lib';

const TRANSFERS_PER_BLOCK = Number(process.env.BENCH_BLOCK_TRANSFERS ?? 1000);
const WATCHED = Number(process.env.BENCH_WATCHED ?? 1_000_000);
/**
 * A first block with payments warms the core's payment path up (statements prepared, code
 * compiled; its time is printed, not counted); then half the measured blocks pay nobody we
 * watch, and in the other half HITS_PER_BLOCK transfers pay invoices.
 */
const WARMUP_BLOCKS = 1;
const HIT_BLOCKS = Number(process.env.BENCH_HIT_BLOCKS ?? 5);
const BLOCKS = WARMUP_BLOCKS + 2 * HIT_BLOCKS;
const HITS_PER_BLOCK = 10;
const FETCH_ROUNDS = 3;
/** The parts run (BENCH_CHAINS=tron,memory: some of them); all by default. */
const PARTS = new Set((process.env.BENCH_CHAINS ?? 'evm,tron,memory').split(','));
/**
 * EVM chains configured in the EVM run (issue 32: every EVM chain watches every EVM address): the
 * measured one and, beside it, idle ones with their own chain ids, sharing its watched set.
 */
const EVM_CHAINS = Number(process.env.BENCH_EVM_CHAINS ?? 3);
/** A directory: the core's part of each chain run is CPU-profiled there (a .cpuprofile per chain, for Chrome DevTools). */
const PROFILE_DIR = process.env.BENCH_CPU_PROF;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * The chain core per block, on EVM and on Tron: blocks of 1,000 token transfers on a real anvil node
 * and on the Tron node stand-in, fetched by the real adapter (the baseline: node fetch time), then
 * processed by the real daemon's chain core with 1,000,000 watched addresses (goal: processing ≤
 * 0.1 × fetch); and the memory of the watched set at 1,000,000 addresses.
 */
export async function run(): Promise<void> {
  if (PARTS.has('evm'))
    try {
      await evmChainCore();
    } finally {
      await killAllAnvils();
    }
  if (PARTS.has('tron')) await tronChainCore();
  if (PARTS.has('memory')) await watchedSetMemory();
}

async function evmChainCore(): Promise<void> {
  const { node, usdt } = await startAnvil();
  await node.rpc('evm_setBlockGasLimit', ['0x' + (200_000_000).toString(16)]);
  await node.rpc('evm_setAutomine', [false]);
  const [, payer] = await node.rpc<string[]>('eth_accounts');
  const token = new Interface(['function transfer(address to, uint256 amount)']);
  const heights: number[] = [];
  let nonce = Number(await node.rpc<string>('eth_getTransactionCount', [payer, 'pending']));
  for (let b = 0; b < BLOCKS; b++) {
    const calls = Array.from({ length: TRANSFERS_PER_BLOCK }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'eth_sendTransaction',
      params: [
        {
          from: payer,
          to: usdt,
          gas: '0x186a0',
          nonce: '0x' + (nonce++).toString(16),
          data: token.encodeFunctionData('transfer', [getAddress('0x' + randomBytes(20).toString('hex')), 1n]),
        },
      ],
    }));
    for (let i = 0; i < calls.length; i += 200) {
      const res = (await (
        await fetch(node.rpcUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(calls.slice(i, i + 200)) })
      ).json()) as Array<{ error?: { message: string } }>;
      const failed = res.find((r) => r.error);
      if (failed) throw new Error(`eth_sendTransaction: ${failed.error!.message}`);
    }
    await node.mine(1);
    heights.push(await node.blockNumber());
  }

  const chainEntry = anvilChainEntry(node.rpcUrl, usdt, { options: { poll_interval_ms: 3_600_000, stall_seconds: 0 } });
  const adapter = new EvmAdapter(parseConfig({ chains: [chainEntry] }).chains[0]!);
  const { fetched, fetchMs, rawMs } = await timeFetches(
    heights,
    (h) => adapter.blocks(h, h),
    (h) => rawFetch(node.rpcUrl, h, usdt),
  );
  const others = Array.from({ length: EVM_CHAINS - 1 }, (_, i) => ({ ...chainEntry, id: `evm-idle-${i + 1}`, chain_id: 1_000_001 + i }));
  await coreRatio({
    title: `EVM chain core per block: ${TRANSFERS_PER_BLOCK} ERC-20 transfers a block, ${EVM_CHAINS} EVM chain(s) configured`,
    chainEntry,
    others,
    fetched,
    fetchMs,
    rawMs,
    token: usdt,
    rates: { ETH: { USD: '3400' }, USDT: { USD: '1' } },
    randomAddress: () => getAddress('0x' + randomBytes(20).toString('hex')),
    watchKey: (address) => adapter.watchKey(address),
  });
}

/** The same on the Tron node stand-in: 1,000 TRC-20 transfers a block, read by the Tron adapter. */
async function tronChainCore(): Promise<void> {
  const node = await TronNode.start();
  try {
    const randomAddress = () => tronFromHex('0x' + randomBytes(20).toString('hex'));
    const heights: number[] = [];
    for (let b = 0; b < BLOCKS; b++) {
      for (let i = 0; i < TRANSFERS_PER_BLOCK; i++) node.pay(randomAddress(), node.usdt, 1n);
      node.mine();
      heights.push(node.height);
    }
    const chainEntry = {
      id: 'tron',
      kind: 'tron',
      full_node_url: node.url,
      confirmations: 19,
      tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }],
      options: { poll_interval_ms: 3_600_000, stall_seconds: 0, genesis_block_id: node.genesisId },
    };
    const adapter = new TronAdapter(parseConfig({ chains: [chainEntry] }).chains[0]!);
    const post = async (endpoint: string, body: unknown) =>
      (await fetch(`${node.url}/wallet/${endpoint}`, { method: 'POST', body: JSON.stringify(body) })).text();
    const { fetched, fetchMs, rawMs } = await timeFetches(
      heights,
      (h) => adapter.blocks(h, h),
      async (h) => {
        await post('getblockbylimitnext', { startNum: h, endNum: h + 1 });
        await post('gettransactioninfobyblocknum', { num: h });
      },
    );
    await coreRatio({
      title: `Tron chain core per block: ${TRANSFERS_PER_BLOCK} TRC-20 transfers a block (node stand-in)`,
      chainEntry,
      fetched,
      fetchMs,
      rawMs,
      token: node.usdt,
      rates: { TRX: { USD: '0.25' }, USDT: { USD: '1' } },
      randomAddress,
    });
  } finally {
    await node.stop();
  }
}

/** Each block fetched FETCH_ROUNDS times, raw (the node answering) and through the adapter. */
async function timeFetches(
  heights: number[],
  viaAdapter: (h: number) => Promise<NormalisedBlock[]>,
  raw: (h: number) => Promise<void>,
): Promise<{ fetched: NormalisedBlock[]; fetchMs: number[]; rawMs: number[] }> {
  const fetchMs: number[] = [];
  const rawMs: number[] = [];
  let fetched: NormalisedBlock[] = [];
  for (let round = 0; round < FETCH_ROUNDS; round++) {
    fetched = [];
    for (const h of heights) {
      let t0 = process.hrtime.bigint();
      await raw(h);
      rawMs.push(ms(t0));
      t0 = process.hrtime.bigint();
      fetched.push(...(await viaAdapter(h)));
      fetchMs.push(ms(t0));
    }
  }
  return { fetched, fetchMs, rawMs };
}

interface CoreRun {
  title: string;
  chainEntry: Record<string, unknown>;
  fetched: NormalisedBlock[];
  fetchMs: number[];
  rawMs: number[];
  /** The token contract the blocks' transfers move (the invoices' coin). */
  token: string;
  rates: Record<string, Record<string, string>>;
  randomAddress: () => string;
  /** The real adapter's watch keys, where its family has them (the core screens on them). */
  watchKey?: (address: string) => Uint8Array | null;
  /** Other chains configured beside it, on idle nodes. */
  others?: Record<string, unknown>[];
}

/** The real daemon's chain core over the fetched blocks (a replay node), with WATCHED addresses: its time per block against the fetch time. */
async function coreRatio({ title, chainEntry, fetched, fetchMs, rawMs, token, rates, randomAddress, watchKey, others = [] }: CoreRun): Promise<void> {
  const transfers = fetched[0]!.transfers.length;
  if (transfers !== TRANSFERS_PER_BLOCK) throw new Error(`a block holds ${transfers} transfers, not ${TRANSFERS_PER_BLOCK}`);
  const chain = parseConfig({ chains: [chainEntry] }).chains[0]!;

  // The real daemon with a replay node serving the fetched blocks, one more at each poll.
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-bench-'));
  const replay = new ReplayAdapter(chain.id, fetched, watchKey);
  const config = testConfig(dataDir, { chains: [chainEntry, ...others], rates: { sources: [{ kind: 'fixed', rates }] } });
  loadMasterKey(dataDir, { create: true });
  await prepareSeed(config, TEST_MNEMONIC);
  const daemon = await startDaemon(config, { logger: silentLogger, adapterFor: (c) => (c.id === chain.id ? replay : new IdleChain(c.id)) });
  try {
    const watcher = daemon.chains.watchers.find((w) => w.status().chain_id === chain.id)!;
    const signal = new AbortController().signal;
    // The daemon's first poll (at start) creates the cursor below the first block; invoices are
    // taken once the chain is watched.
    const ready = Date.now() + 10_000;
    while (watcher.status().scanned_height !== fetched[0]!.height - 1) {
      if (Date.now() > ready) throw new Error(`the cursor was not created: ${JSON.stringify(watcher.status())}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const m = await merchantWithKey(daemon, { rateLimit: 100_000 });
    const invoiceAddresses: string[] = [];
    for (let i = 0; i < HITS_PER_BLOCK * (WARMUP_BLOCKS + HIT_BLOCKS); i++) {
      const body = JSON.stringify({ amount: '0.000005', currency: 'USDT', coin_id: coinId(chain.id, token), order_id: `bench-${i}` });
      const res = await fetch(`${daemon.apiUrl}/v1/invoices`, {
        method: 'POST',
        headers: { ...signRequest({ keyId: m.keyId, secret: m.secret, method: 'POST', target: '/v1/invoices', body }), 'Content-Type': 'application/json' },
        body,
      });
      if (res.status !== 201) throw new Error(`POST /v1/invoices: ${res.status} ${await res.text()}`);
      invoiceAddresses.push(((await res.json()) as { address: string }).address);
    }
    [...fetched.slice(0, WARMUP_BLOCKS), ...fetched.slice(BLOCKS - HIT_BLOCKS)].forEach((block, b) => {
      for (let i = 0; i < HITS_PER_BLOCK; i++)
        block.transfers[i * Math.floor(TRANSFERS_PER_BLOCK / HITS_PER_BLOCK)]!.to = invoiceAddresses[b * HITS_PER_BLOCK + i]!;
    });
    await watchMany(daemon, chain.id, m.accountId, coinId(chain.id, token), randomAddress);
    const processMs: number[] = [];
    const profiler = PROFILE_DIR === undefined ? undefined : await startProfile();
    for (let b = 0; b < BLOCKS; b++) {
      replay.reveal(b);
      const t0 = process.hrtime.bigint();
      await watcher.poll(signal);
      processMs.push(ms(t0));
      if (watcher.status().scanned_height !== fetched[b]!.height)
        throw new Error(`block ${fetched[b]!.height} not scanned: ${JSON.stringify(watcher.status())}`);
    }
    if (profiler) await profiler.stop(path.join(PROFILE_DIR!, `${chain.id}-core.cpuprofile`));
    const seen = await daemon.store.read.count(ChainTransferEntity);

    const fetchMedian = median(fetchMs);
    const rawMedian = median(rawMs);
    const missMedian = median(processMs.slice(WARMUP_BLOCKS, BLOCKS - HIT_BLOCKS));
    const processMedian = median(processMs.slice(BLOCKS - HIT_BLOCKS));
    const ratio = processMedian / fetchMedian;
    report(
      `${title}, ${daemon.watched.size(chain.id).toLocaleString('en')} watched addresses, ${BLOCKS - WARMUP_BLOCKS} blocks after ${WARMUP_BLOCKS} of warm-up`,
      [
        ['node fetch ms per block via the adapter, median (baseline)', fmt(fetchMedian, 2)],
        ['  of which the node answering (raw requests), median', fmt(rawMedian, 2)],
        ['node fetch ms per block via the adapter, all', fetchMs.map((x) => fmt(x, 1)).join(' ')],
        ['core ms per block paying nobody we watch, median', fmt(missMedian, 2)],
        [`core ms per block with ${HITS_PER_BLOCK} invoice payments, median`, fmt(processMedian, 2)],
        ['core ms per block, all (warm-up, misses, then hits)', processMs.map((x) => fmt(x, 2)).join(' ')],
        ['transfers to invoices recorded', String(seen)],
      ],
      { name: 'ratio processing (with payments) / fetch', value: ratio, goal: '<= 0.1', ok: ratio <= 0.1 },
    );
    console.log(`  ${'ratio processing (no payments) / fetch'.padEnd(44)} ${(missMedian / fetchMedian).toFixed(3)}`);
    console.log(`  ${'ratio processing (with payments) / raw requests'.padEnd(44)} ${(processMedian / rawMedian).toFixed(3)}`);
  } finally {
    await daemon.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Address rows per INSERT while the watched addresses are stored. */
const INSERT_ROWS = 500;

/**
 * Watches WATCHED addresses on the chain, as a daemon that issued them does: each is a row of the
 * addresses table too, so every read the core makes of that table runs against a million rows (with
 * the addresses in memory only, a read by address text scanning the chain's rows looked free).
 */
async function watchMany(daemon: Daemon, chainId: string, accountId: string, coin: string, randomAddress: () => string): Promise<void> {
  const now = new Date().toISOString();
  let rows: unknown[][] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    const values = rows.map(() => `(?, ?, ?, ?, ?, ?, ?, 'invoice', NULL, 'active', ?, ?)`).join(', ');
    const batch = rows;
    rows = [];
    await daemon.store.write((em) =>
      rawQuery(
        em,
        `INSERT INTO addresses (id, account_id, chain_id, coin_id, address, derivation_path, derivation_index, purpose, invoice_id, status, created_at, updated_at) VALUES ${values}`,
        batch.flat(),
      ),
    );
  };
  for (let i = daemon.watched.size(chainId); i < WATCHED; i++) {
    const id = newId();
    const address = randomAddress();
    daemon.watched.add(chainId, address, id);
    // Paths of a branch the wallet never derives from: the rows are the bench's alone.
    rows.push([id, accountId, chainId, coin, address, `m/bench/${i}`, i, now, now]);
    if (rows.length === INSERT_ROWS) await flush();
  }
  await flush();
  // Into the database file, as a daemon running for a while has them: a write-ahead log of a
  // million fresh rows makes every commit after it slower (the daemon checkpoints in the background).
  await daemon.store.read.query('PRAGMA wal_checkpoint(TRUNCATE)');
}

/** A CPU profile of this process from now (50 µs samples: a block's core part is a few ms); `stop` writes it. */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      console.log(`  (CPU profile of the core part: ${file})`);
    },
  };
}

/** The two requests the adapter makes for a block, timed to the last byte without parsing. */
async function rawFetch(rpcUrl: string, height: number, token: string): Promise<void> {
  const tag = '0x' + height.toString(16);
  const post = async (method: string, params: unknown[]) =>
    (
      await fetch(rpcUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
    ).text();
  await Promise.all([
    post('eth_getBlockByNumber', [tag, true]),
    post('eth_getLogs', [{ fromBlock: tag, toBlock: tag, address: [token.toLowerCase()], topics: [id('Transfer(address,address,uint256)')] }]),
  ]);
}

/**
 * The watched set's memory, measured in a process of its own started with --expose-gc: in this
 * one, the daemons of the runs above leave garbage that a collection during the measurement frees
 * (the heap then "grew" by a negative amount).
 */
async function watchedSetMemory(): Promise<void> {
  const child = spawn(process.execPath, ['--expose-gc', __filename], {
    env: { ...process.env, BENCH_WATCHED_SET_CHILD: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve, reject) => child.on('error', reject).on('exit', resolve));
  if (code !== 0) throw new Error(`the watched set's measurement exited with ${code}`);
}

/** The heap's used bytes after full collections (nothing left to free), and the bytes held off it (typed arrays). */
function settled(gc: () => void): { heap: number; offHeap: number } {
  for (let i = 0; i < 3; i++) gc();
  return { heap: v8.getHeapStatistics().used_heap_size, offHeap: process.memoryUsage().arrayBuffers };
}

/** In the child process of watchedSetMemory. */
function measureWatchedSet(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  // Random bytes off the heap, so the heap growth measured is the set with its strings alone.
  const raw = randomBytes(20 * WATCHED);
  const addressAt = (i: number) => getAddress('0x' + raw.toString('hex', i * 20, i * 20 + 20));
  // Flat strings, as the database driver hands them over (a string built by concatenation is a rope).
  const flat = (s: string) => Buffer.from(s, 'latin1').toString('latin1');
  const before = settled(gc);
  const watched = new WatchedAddresses();
  for (let i = 0; i < WATCHED; i++) watched.add('ethereum', flat(addressAt(i)), flat(newId()));
  const after = settled(gc);
  const setBytes = after.heap - before.heap;
  const filterBytes = after.offHeap - before.offHeap;
  const probes = Array.from({ length: 1000 }, (_, i) => (i % 2 ? addressAt(i * 7) : getAddress('0x' + randomBytes(20).toString('hex'))));
  let t0 = process.hrtime.bigint();
  let hits = 0;
  for (let i = 0; i < 1_000_000; i++) if (watched.lookup('ethereum', probes[i % probes.length]!) !== undefined) hits++;
  const lookupNs = (ms(t0) * 1e6) / 1_000_000;
  // The screen a block's transfers pass first (of 1,000 transfers, half to watched addresses here).
  const transfers = probes.map((to) => ({ to }));
  t0 = process.hrtime.bigint();
  let passed = 0;
  for (let i = 0; i < 1000; i++) passed += watched.mayWatch('ethereum', transfers).length;
  const screenNs = (ms(t0) * 1e6) / 1_000_000;
  const charBytes = WATCHED * (42 + 36);
  report(`watched set: ${watched.size().toLocaleString('en')} EVM addresses (address and row id strings included; own process, after forced GCs)`, [
    ['address + id characters MiB (baseline)', fmt(charBytes / 1024 / 1024)],
    ['heap MiB of the set', fmt(setBytes / 1024 / 1024)],
    ['off-heap MiB of the set (its text filter)', fmt(filterBytes / 1024 / 1024)],
    ['bytes per address (heap)', fmt(setBytes / watched.size(), 0)],
    ['lookup ns (half hits)', fmt(lookupNs, 0)],
    ['screen ns per transfer (mayWatch, half hits)', fmt(screenNs, 0)],
    ['ratio heap / characters', fmt(setBytes / charBytes, 2)],
    ['hits of 1,000,000 lookups', String(hits)],
    ['passed of 1,000,000 screened', String(passed)],
  ]);

  // Issue 32 §4: 3 EVM chains, every one watching every EVM address, through one shared set (the
  // addresses issued round the chains), against the one chain's set above.
  const addresses = Array.from({ length: WATCHED }, (_, i) => flat(addressAt(i)));
  const ids = Array.from({ length: WATCHED }, () => flat(newId()));
  const chains = ['ethereum', 'base', 'polygon'];
  // The one chain's set stays alive through this measurement (a collection freeing it would count against the shared set).
  kept.push(watched);
  const beforeShared = settled(gc);
  const shared = new WatchedAddresses(new Map(chains.map((c) => [c, 'family:evm'])));
  for (let i = 0; i < WATCHED; i++) shared.add(chains[i % 3]!, addresses[i]!, ids[i]!);
  const afterShared = settled(gc);
  const sharedBytes = afterShared.heap - beforeShared.heap + (afterShared.offHeap - beforeShared.offHeap);
  const oneBytes = setBytes + filterBytes;
  let everywhere = 0;
  for (const c of chains) everywhere += shared.lookup(c, addresses[WATCHED - 1]!) === ids[WATCHED - 1] ? 1 : 0;
  report(`watched set shared by 3 EVM chains: ${WATCHED.toLocaleString('en')} EVM addresses, each watched on every chain (goal ≤ 1.1× one chain's)`, [
    ["one chain's set MiB (heap + filter)", fmt(oneBytes / 1024 / 1024)],
    ['shared set MiB (heap + filter; the strings are the same as above)', fmt(sharedBytes / 1024 / 1024)],
    ["ratio shared / one chain's", fmt(sharedBytes / oneBytes, 2)],
    ['chains an address is watched on (of 3)', String(everywhere)],
  ]);
}

/** What a measurement keeps alive on purpose. */
const kept: unknown[] = [];

if (process.env.BENCH_WATCHED_SET_CHILD === '1' && require.main === module) {
  try {
    measureWatchedSet();
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}

/**
 * A node that serves the blocks fetched, revealing one more at each step; below them, an empty block
 * with the first one's parent hash (where the daemon's cursor starts) on a chain of empty headers.
 */
class ReplayAdapter implements ChainReader {
  private revealed = -1;
  private readonly chain: NormalisedBlock[];

  constructor(
    readonly chainId: string,
    blocks: NormalisedBlock[],
    readonly watchKey?: (address: string) => Uint8Array | null,
  ) {
    const first = blocks[0]!;
    this.chain = [{ height: first.height - 1, hash: first.parentHash, parentHash: prefixHash(first.height - 2), transfers: [] }, ...blocks];
  }

  reveal(index: number): void {
    this.revealed = index;
  }

  async tip(): Promise<BlockRef> {
    const t = this.chain[this.revealed + 1]!;
    return { height: t.height, hash: t.hash };
  }

  async header(height: number): Promise<BlockHeader> {
    const b = this.chain.find((x) => x.height === height);
    if (b) return b;
    if (height >= 0 && height < this.chain[0]!.height) return { height, hash: prefixHash(height), parentHash: prefixHash(height - 1) };
    throw new Error(`no header ${height}`);
  }

  async blocks(from: number, to: number): Promise<NormalisedBlock[]> {
    return this.chain.filter((b) => b.height >= from && b.height <= to);
  }
}

const prefixHash = (height: number): string => `0xbench-prefix-${height}`;
