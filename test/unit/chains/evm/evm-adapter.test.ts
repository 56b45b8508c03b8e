/**
 * The EVM adapter's reading of a node's answers, against a node in memory: native value and ERC-20
 * `Transfer` logs of the configured tokens become normalised transfers; lookalikes do not; a range
 * that changes branch while it is read is read again.
 */
import test from 'ava';
import { getAddress, id } from 'ethers';
import { EvmAdapter } from '../../../../src/chains/evm/evm-adapter';
import { NodeFault } from '../../../../src/chains/types';
import type { RpcCall } from '../../../../src/chains/evm/json-rpc';
import { parseConfig } from '../../../../src/config/schema';

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const OTHER_TOKEN = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';
const TRANSFER = id('Transfer(address,address,uint256)');
const ALICE = '0x9858effd232b4033e47d90003d41ec34ecaeda94';
const word = (hex: string) => '0x' + hex.replace(/^0x/, '').padStart(64, '0');
const hex = (n: number | bigint) => '0x' + n.toString(16);

const chain = parseConfig({
  chains: [{ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:9', tokens: [{ ticker: 'USDT', contract: TOKEN, decimals: 6 }] }],
}).chains[0]!;

interface Block {
  number: string;
  hash: string;
  parentHash: string;
  transactions: Array<{ hash: string; from: string; nonce: string; to: string | null; value: unknown }>;
}

/** Answers eth_getBlockByNumber from `blocks` and eth_getLogs from `logs()` (called at each read). */
class MemoryNode {
  reads = 0;
  constructor(
    public blocks: Block[],
    public logs: () => unknown[],
  ) {}

  chainId = '0x1';

  async call<T>(method: string, params: unknown[]): Promise<T> {
    if (method === 'eth_chainId') return this.chainId as T;
    if (method === 'eth_getLogs') {
      this.reads++;
      return this.logs() as T;
    }
    const tag = params[0] as string;
    const b = tag === 'latest' ? this.blocks[this.blocks.length - 1] : this.blocks.find((x) => x.number === tag);
    return (b ?? null) as T;
  }

  async batch<T>(calls: RpcCall[]): Promise<T[]> {
    return Promise.all(calls.map((c) => this.call<T>(c.method, c.params)));
  }
}

const block = (n: number, transactions: Block['transactions'] = [], tag = 'a'): Block => ({
  number: hex(n),
  hash: word(`${tag}${n}`),
  parentHash: word(`${tag}${n - 1}`),
  transactions,
});

const BOB = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
/** A transaction of BOB's with nonce `nonce`. */
const tx = (n: string, to: string | null, value: unknown, nonce = 0) => ({ hash: word(n), from: BOB, nonce: hex(nonce), to, value });

const log = (over: Record<string, unknown>) => ({
  address: TOKEN.toLowerCase(),
  topics: [TRANSFER, word('01'), word(ALICE.slice(2))],
  data: word(hex(2_500_000n)),
  blockNumber: hex(5),
  blockHash: word('a5'),
  transactionHash: word('t1'),
  logIndex: '0x3',
  ...over,
});

test('native value to an address and token Transfer logs become transfers, addresses EIP-55', async (t) => {
  const node = new MemoryNode([block(4), block(5, [tx('t0', ALICE, hex(10n ** 18n)), tx('t1', TOKEN.toLowerCase(), '0x0'), tx('t2', null, hex(5))])], () => [
    log({}),
  ]);
  const adapter = new EvmAdapter(chain, node);
  t.deepEqual(await adapter.tip(), { height: 5, hash: word('a5') });
  t.deepEqual(await adapter.header(4), { height: 4, hash: word('a4'), parentHash: word('a3') });
  const [b] = await adapter.blocks(5, 5);
  t.deepEqual(
    { ...b, spends: undefined },
    {
      spends: undefined,
      height: 5,
      hash: word('a5'),
      parentHash: word('a4'),
      transfers: [
        { asset: 'native', to: getAddress(ALICE), amount: 10n ** 18n, txid: word('t0'), index: 0 },
        { asset: TOKEN, to: getAddress(ALICE), amount: 2_500_000n, txid: word('t1'), index: 3 },
      ],
    },
  );
});

test('lookalike logs are not token transfers: other contracts, ERC-721 (4 topics), odd data, a non-address topic', async (t) => {
  const node = new MemoryNode([block(4), block(5)], () => [
    log({ address: OTHER_TOKEN }),
    log({ topics: [TRANSFER, word('01'), word(ALICE.slice(2)), word('07')] }),
    log({ data: '0x' }),
    log({ topics: [TRANSFER, word('01'), word('ff' + ALICE.slice(2))] }),
    log({ topics: [id('Approval(address,address,uint256)'), word('01'), word(ALICE.slice(2))] }),
  ]);
  const [b] = await new EvmAdapter(chain, node).blocks(5, 5);
  t.deepEqual(b!.transfers, []);
});

test('a log of another branch than the block read at its height makes the range be read again', async (t) => {
  let first = true;
  const node = new MemoryNode([block(4), block(5)], () => {
    const stale = first;
    first = false;
    return [log({ blockHash: stale ? word('b5') : word('a5') })];
  });
  const [b] = await new EvmAdapter(chain, node).blocks(5, 5);
  t.is(node.reads, 2);
  t.is(b!.transfers.length, 1);
});

test('a range that keeps changing, or a block the node does not have, fails the read', async (t) => {
  const switching = new MemoryNode([block(4), block(5)], () => [log({ blockHash: word('b5') })]);
  await t.throwsAsync(new EvmAdapter(chain, switching).blocks(5, 5), { message: /blocks 5\.\.5 changed while they were read/ });
  t.is(switching.reads, 3);
  const short = new MemoryNode([block(4), block(5)], () => []);
  await t.throwsAsync(new EvmAdapter(chain, short).blocks(5, 6), { message: 'evm node has no block 6' });
  await t.throwsAsync(new EvmAdapter(chain, short).header(9), { message: 'evm node has no block 9' });
});

test('a node on another chain id than the config is refused, with both ids in the error', async (t) => {
  const node = new MemoryNode([block(4)], () => []);
  node.chainId = '0x89';
  await t.throwsAsync(new EvmAdapter(chain, node).tip(), { message: 'evm node is on chain id 137, the config says 1' });
});

test('every transaction of a block is a spend of its sender (EIP-55) at its nonce', async (t) => {
  const node = new MemoryNode([block(4), block(5, [tx('t0', ALICE, '0x1', 7), tx('t1', null, '0x0', 8)])], () => []);
  const adapter = new EvmAdapter(chain, node);
  const spends = (await adapter.blocks(5, 5))[0]!.spends!.map((s) => ({ txid: s.txid, from: s.from, nonce: s.nonce }));
  t.deepEqual(spends, [
    { txid: word('t0'), from: getAddress(BOB), nonce: 7 },
    { txid: word('t1'), from: getAddress(BOB), nonce: 8 },
  ]);
});

test('a negative, fractional, decimal or impossibly large value from the node is a node fault, not a transfer', async (t) => {
  for (const value of ['-0x1', '0x1.8', 1.5, '1000', '0x' + (2n ** 128n + 1n).toString(16)]) {
    const node = new MemoryNode([block(4), block(5, [tx('t0', ALICE, value)])], () => []);
    await t.throwsAsync(new EvmAdapter(chain, node).blocks(5, 5), { instanceOf: NodeFault }, String(value));
  }
  const huge = new MemoryNode([block(4), block(5)], () => [log({ data: word((2n ** 128n + 1n).toString(16)) })]);
  await t.throwsAsync(new EvmAdapter(chain, huge).blocks(5, 5), { instanceOf: NodeFault, message: /impossible value/ });
  const most = new MemoryNode([block(4), block(5, [tx('t0', ALICE, '0x' + (2n ** 128n).toString(16))])], () => []);
  t.is((await new EvmAdapter(chain, most).blocks(5, 5))[0]!.transfers[0]!.amount, 2n ** 128n);
});

test('the chain id is checked at every tip read, not once: a node swapped for another network is refused', async (t) => {
  const node = new MemoryNode([block(4)], () => []);
  const adapter = new EvmAdapter(chain, node);
  t.is((await adapter.tip()).height, 4);
  node.chainId = '0x7a69';
  await t.throwsAsync(adapter.tip(), { instanceOf: NodeFault, message: 'evm node is on chain id 31337, the config says 1' });
});
