/**
 * The EVM fee models (chains[].fee_model): the pure arithmetic of reserves and receipts, and what
 * the adapter asks of a node in memory for each model.
 */
import test from 'ava';
import { Interface, Transaction } from 'ethers';
import { EvmAdapter } from '../../../../src/chains/evm/evm-adapter';
import {
  GAS_PRICE_ORACLE,
  getL1FeeData,
  l1FeeProbe,
  maxCost,
  nativeGas,
  padArbitrumGas,
  receiptFee,
  tokenGas,
  withdrawalReserve,
} from '../../../../src/chains/evm/fee-model';
import { evmFamily } from '../../../../src/chains/evm/family';
import { evmProbe } from '../../../../src/chains/evm/doctor-probe';
import type { RpcCall } from '../../../../src/chains/evm/json-rpc';
import { ConfigError, parseConfig } from '../../../../src/config/schema';

const GWEI = 1_000_000_000n;
const word = (n: bigint) => '0x' + n.toString(16).padStart(64, '0');
const hex = (n: bigint) => '0x' + n.toString(16);

const chainOf = (extra: Record<string, unknown> = {}) =>
  parseConfig({ chains: [{ id: 'ethereum', kind: 'evm', chain_id: 10, rpc_url: 'http://127.0.0.1:9', ...extra }] }).chains[0]!;

/** A node in memory answering the calls a fee quote and a receipt read make; `calls` records them. */
class FeeNode {
  calls: RpcCall[] = [];
  baseFee: bigint | null = 10n * GWEI;
  constructor(private readonly answers: Record<string, unknown> = {}) {}
  async call<T>(method: string, params: unknown[]): Promise<T> {
    this.calls.push({ method, params });
    if (method in this.answers) return this.answers[method] as T;
    if (method === 'eth_feeHistory')
      return { baseFeePerGas: this.baseFee === null ? undefined : [hex(this.baseFee)], reward: [[hex(GWEI)], [hex(2n * GWEI)], [hex(3n * GWEI)]] } as T;
    if (method === 'eth_gasPrice') return hex(7n * GWEI) as T;
    throw new Error(`no answer for ${method}`);
  }
  async batch<T>(calls: RpcCall[]): Promise<T[]> {
    return Promise.all(calls.map((c) => this.call<T>(c.method, c.params)));
  }
}

test('fee_model is read for evm chains (default eip1559), one of four, and refused elsewhere', (t) => {
  t.is(chainOf().evm!.fee_model, 'eip1559');
  for (const m of ['legacy', 'op-stack', 'arbitrum', 'eip1559'] as const) t.is(chainOf({ fee_model: m }).evm!.fee_model, m);
  const bad = t.throws(() => chainOf({ fee_model: 'london' }), { instanceOf: ConfigError });
  t.regex(bad!.message, /fee_model.*one of eip1559, legacy, op-stack, arbitrum/);
  t.throws(() => parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:9', fee_model: 'legacy' }] }), {
    message: /fee_model.*evm chains only/,
  });
});

test('the arithmetic: a receipt fee adds the L1 data fee; reserves add it per transaction; Arbitrum gas is padded and token gas grows with its L1 part', (t) => {
  t.is(receiptFee(21_000n, 3n * GWEI, null), 63_000n * GWEI);
  t.is(receiptFee(21_000n, 3n * GWEI, 12_345n), 63_000n * GWEI + 12_345n);
  t.is(nativeGas({}), 21_000n);
  t.is(tokenGas({}), 100_000n);
  t.is(maxCost({}, 21_000n, 2n), 42_000n);
  t.is(maxCost({ l1Fee: 5n }, 21_000n, 2n), 42_005n);
  t.is(padArbitrumGas(40_000n), 50_000n);
  t.is(padArbitrumGas(100n), 21_000n, 'never under a plain transfer');
  t.is(nativeGas({ transferGas: 50_000n }), 50_000n);
  t.is(tokenGas({ transferGas: 50_000n }), 100_000n + 2n * 29_000n);
  const q = { maxFeePerGas: 10n };
  t.is(withdrawalReserve(q, false), 210_000n);
  t.is(withdrawalReserve(q, true), 1_210_000n, 'a token payout and the top-up of its treasury');
  t.is(withdrawalReserve({ ...q, l1Fee: 7n }, false), 210_007n);
  t.is(withdrawalReserve({ ...q, l1Fee: 7n }, true), 1_210_014n, 'two transactions, two L1 data fees');
  t.is(withdrawalReserve({ ...q, transferGas: 50_000n }, false), 500_000n);
  t.is(evmFamily.networkFeeReserve({ kind: 'evm', baseFeePerGas: 4n, maxPriorityFeePerGas: 2n, maxFeePerGas: 10n, l1Fee: 7n }, false), 210_007n);
});

test('getL1Fee call data is the ABI encoding of the probe transaction, a signed ERC-20 transfer of type 2', (t) => {
  const raw = l1FeeProbe(10);
  const tx = Transaction.from(raw);
  t.is(tx.type, 2);
  t.is(tx.chainId, 10n);
  t.is(tx.data.slice(0, 10), '0xa9059cbb');
  const abi = new Interface(['function getL1Fee(bytes) view returns (uint256)']);
  t.is(getL1FeeData(raw), abi.encodeFunctionData('getL1Fee', [raw]));
});

test('eip1559: the fee history quotes type 2; a node answering no base fee (or 0) is an error naming fee_model legacy, not a silent switch', async (t) => {
  const node = new FeeNode();
  const adapter = new EvmAdapter(chainOf(), node);
  t.deepEqual(await adapter.feeQuote(), { kind: 'evm', baseFeePerGas: 10n * GWEI, maxPriorityFeePerGas: 2n * GWEI, maxFeePerGas: 22n * GWEI });
  node.baseFee = 0n;
  await t.throwsAsync(() => adapter.feeQuote(), { message: /no EIP-1559 base fee.*fee_model: legacy/ });
  node.baseFee = null;
  await t.throwsAsync(() => adapter.feeQuote(), { message: /no EIP-1559 base fee/ });
  t.false(
    node.calls.some((c) => c.method === 'eth_gasPrice'),
    'never quoted the legacy way',
  );
});

test('legacy: eth_gasPrice as both caps, type 0, whatever base fee the node answers (fee history not asked)', async (t) => {
  const node = new FeeNode();
  const adapter = new EvmAdapter(chainOf({ fee_model: 'legacy' }), node);
  t.deepEqual(await adapter.feeQuote(), { kind: 'evm', baseFeePerGas: 0n, maxPriorityFeePerGas: 7n * GWEI, maxFeePerGas: 7n * GWEI, legacy: true });
  t.deepEqual(
    node.calls.map((c) => c.method),
    ['eth_gasPrice'],
  );
});

test('op-stack: the quote reserves twice the GasPriceOracle price of the probe transaction; a node without the oracle is an error', async (t) => {
  const node = new FeeNode({ eth_call: word(1_000_000n) });
  const adapter = new EvmAdapter(chainOf({ fee_model: 'op-stack' }), node);
  const q = await adapter.feeQuote();
  t.like(q, { kind: 'evm', maxFeePerGas: 22n * GWEI, l1Fee: 2_000_000n });
  const call = node.calls.find((c) => c.method === 'eth_call')!;
  t.deepEqual(call.params, [{ to: GAS_PRICE_ORACLE, data: getL1FeeData(l1FeeProbe(10)) }, 'latest']);
  const none = new EvmAdapter(chainOf({ fee_model: 'op-stack' }), new FeeNode({ eth_call: '0x' }));
  await t.throwsAsync(() => none.feeQuote(), { message: /GasPriceOracle.*answers no L1 fee/ });
});

test('arbitrum: a native transfer gas is estimated (padded a quarter) into the quote', async (t) => {
  const node = new FeeNode({ eth_estimateGas: hex(40_000n) });
  const q = await new EvmAdapter(chainOf({ fee_model: 'arbitrum' }), node).feeQuote();
  t.like(q, { kind: 'evm', transferGas: 50_000n });
  const est = node.calls.find((c) => c.method === 'eth_estimateGas')!;
  t.like((est.params as Array<Record<string, string>>)[0], { value: '0x0' });
  t.false('data' in (est.params as Array<Record<string, string>>)[0]!, 'a plain transfer');
});

test('a receipt with an l1Fee books it beside gas used × effective gas price', async (t) => {
  const receipt = (l1Fee?: string) => ({
    blockNumber: '0x5',
    blockHash: '0x' + 'ab'.repeat(32),
    status: '0x1',
    gasUsed: hex(21_000n),
    effectiveGasPrice: hex(3n * GWEI),
    ...(l1Fee ? { l1Fee } : {}),
    logs: [],
  });
  const node = new FeeNode();
  node.batch = async <T>(calls: RpcCall[]) => calls.map((c) => (c.params[0] === '0x01' ? receipt(hex(123_456_789n)) : receipt())) as T[];
  const [op, plain] = await new EvmAdapter(chainOf(), node).receipts(['0x01', '0x02']);
  t.is(op!.fee, 63_000n * GWEI + 123_456_789n);
  t.is(plain!.fee, 63_000n * GWEI);
});

test('the doctor names the fee model: a node an eip1559 chain cannot quote is blocking with the setting to change; a quote is shown', async (t) => {
  const probeNode = { call: async <T>() => false as T, batch: async <T>(calls: RpcCall[]) => calls.map(() => '0x1' as T) };
  const run = (chain: ReturnType<typeof chainOf>, node: FeeNode) =>
    evmProbe(chain, probeNode, () => new EvmAdapter(chain, node).feeQuote())({ height: 10, hash: 'h' }, new AbortController().signal);
  const noBase = new FeeNode();
  noBase.baseFee = 0n;
  const bad = (await run(chainOf(), noBase)).find((n) => n.found.startsWith('fee model'))!;
  t.true(bad.blocking);
  t.regex(bad.found, /^fee model eip1559: .*no EIP-1559 base fee/);
  t.regex(bad.change!, /fee_model.*legacy/);
  const good = (await run(chainOf({ fee_model: 'op-stack' }), new FeeNode({ eth_call: word(5n) }))).find((n) => n.found.startsWith('fee model'))!;
  t.deepEqual(good, { found: `fee model op-stack: fee cap ${22n * GWEI} wei per gas, L1 data fee reserved 10 wei` });
});
