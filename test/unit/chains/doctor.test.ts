import test from 'ava';
import { checkChain, doctorLines, type DoctorEndpoint } from '../../../src/chains/doctor';
import { evmProbe } from '../../../src/chains/evm/doctor-probe';
import { liteNote } from '../../../src/chains/tron/doctor-probe';
import type { BlockRef, ChainReader } from '../../../src/chains/types';
import { parseConfig } from '../../../src/config/schema';
import { FakeClock } from '../../../src/shared/clock';

const clock = new FakeClock('2026-06-01T12:00:00.000Z');
const now = clock.now().getTime() / 1000;

const reader = (tip: () => Promise<BlockRef>): ChainReader => ({
  chainId: 'x',
  tip,
  header: async () => ({ height: 0, hash: '', parentHash: '' }),
  blocks: async () => [],
});
const endpoint = (url: string, tip: () => Promise<BlockRef>, extra: Partial<DoctorEndpoint> = {}): DoctorEndpoint => ({
  url,
  reader: reader(tip),
  probe: async () => [],
  ...extra,
});

const tronChain = (extra: Record<string, unknown> = {}) =>
  parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: 'https://api.trongrid.io', full_node_urls: ['https://tron.example/jsonrpc'], ...extra }] })
    .chains[0]!;

test('a Tron Lite FullNode with history queries closed is named, with the setting that opens them; the chain works on its other endpoint', async (t) => {
  const lite = endpoint(
    'https://api.trongrid.io',
    async () => {
      throw new Error('tron node getblockbynum: the answer is not JSON');
    },
    { explain: liteNote },
  );
  const full = endpoint('https://tron.example/jsonrpc', async () => ({ height: 70_000_000, hash: 'h', time: now - 6 }));
  const report = await checkChain(tronChain(), [lite, full], clock, new AbortController().signal);
  t.true(report.works);
  const lines = doctorLines([report]);
  t.deepEqual(lines.slice(0, 5), [
    'tron (tron): ok',
    '  endpoint 1 (api.trongrid.io): NOT USABLE',
    '    problem: a Lite FullNode with history queries closed (tron node getblockbynum: the answer is not JSON)',
    "      change: set node.openHistoryQueryWhenLiteFN = true in the node's config and restart it, or use a full node",
    '  endpoint 2 (tron.example): usable',
  ]);
  t.true(lines.includes('    newest block 6 s old'));
});

test('a node behind stale_after_seconds is not usable; with a quorum of 2 and one usable endpoint the chain cannot work', async (t) => {
  const fresh = endpoint('https://a.example', async () => ({ height: 10, hash: 'h', time: now - 30 }));
  const behind = endpoint('https://b.example', async () => ({ height: 9, hash: 'h', time: now - 14 * 60 }));
  const report = await checkChain(tronChain({ quorum: 2 }), [fresh, behind], clock, new AbortController().signal);
  t.false(report.works);
  const lines = doctorLines([report]);
  t.is(lines[0], 'tron (tron): CANNOT WORK: 1 usable endpoint(s) of 2, quorum 2');
  t.true(lines.includes('    problem: node behind: newest block 14 min old (stale_after_seconds 120)'));
});

test('an EVM endpoint refusing a batch of max_batch calls or eth_getLogs over logs_range: the doctor names the largest it takes as the setting to write', async (t) => {
  const chain = parseConfig({ chains: [{ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'https://quick.example/KEY' }] }).chains[0]!;
  const rpc = {
    call: async <T>(method: string, params: unknown[]): Promise<T> => {
      if (method === 'eth_syncing') return false as T;
      if (method === 'eth_getBalance') throw new Error('evm node eth_getBalance: missing trie node');
      const f = params[0] as { fromBlock: string; toBlock: string };
      if (Number(f.toBlock) - Number(f.fromBlock) + 1 > 5) throw new Error('evm node eth_getLogs: eth_getLogs is limited to a 5 range');
      return [] as T;
    },
    batch: async <T>(calls: unknown[]): Promise<T[]> => {
      if (calls.length > 20) throw new Error('evm node batch of 100 (eth_blockNumber...): HTTP 413');
      return calls.map(() => '0x1' as T);
    },
  };
  const notes = await evmProbe(chain, rpc)({ height: 1000, hash: 'h' }, new AbortController().signal);
  t.deepEqual(notes, [
    { found: 'synced' },
    { found: 'archive state: no (a balance at block 0: evm node eth_getBalance: missing trie node); supported: balances are read at recent heights' },
    {
      found: 'a batch of 100 calls (max_batch) refused: evm node batch of 100 (eth_blockNumber...): HTTP 413; a batch of 20 calls accepted',
      change: 'set max_batch: 20 (the daemon also shrinks what it sees refused, from the bound down)',
    },
    {
      found: 'eth_getLogs over 100 blocks (logs_range) refused: evm node eth_getLogs: eth_getLogs is limited to a 5 range; eth_getLogs over 5 blocks accepted',
      change: 'set logs_range: 5 (the daemon also shrinks what it sees refused, from the bound down)',
    },
  ]);
});
