import type { EvmCall, EvmReceipt } from '../evm-adapter';
import type { BlockRef, FeeQuote, SentStatus, SentTransaction } from '../../types';

/** What the EVM sweeps and payouts need of their chain's node (EvmAdapter; tests may give another). */
export interface EvmNode {
  tip(signal?: AbortSignal): Promise<BlockRef>;
  feeQuote(signal?: AbortSignal): Promise<FeeQuote>;
  nonce(address: string, signal?: AbortSignal): Promise<{ latest: number; pending: number }>;
  pendingNonces(addresses: readonly string[], signal?: AbortSignal): Promise<number[]>;
  balances(addresses: readonly string[], asset: string, tag?: string, signal?: AbortSignal): Promise<bigint[]>;
  estimateGas(call: EvmCall, signal?: AbortSignal): Promise<bigint>;
  estimateGasAll(calls: readonly EvmCall[], signal?: AbortSignal): Promise<Array<{ gas: bigint } | { error: string }>>;
  succeedWithGas(calls: ReadonlyArray<EvmCall & { gas: bigint }>, signal?: AbortSignal): Promise<Array<string | null>>;
  broadcast(rawHex: string, signal?: AbortSignal): Promise<string>;
  broadcastAll(raws: readonly string[], signal?: AbortSignal): Promise<Array<{ txid: string } | { error: string }>>;
  sentStatus(sent: SentTransaction, signal?: AbortSignal): Promise<SentStatus>;
  sendStates(sends: ReadonlyArray<{ txid: string; from: string; nonce: number }>, signal?: AbortSignal): Promise<Array<'mempool' | 'conflicted' | 'unknown'>>;
  receipts(txids: readonly string[], signal?: AbortSignal): Promise<Array<EvmReceipt | null>>;
  /**
   * The transaction of `from` with `nonce` in a block of [low, high], read from the block bodies (not
   * from lookups by hash): null when the nonce is not used by `high`; txid null when it was used
   * before `low` (or the block does not show it).
   */
  nonceHolder(from: string, nonce: number, low: number, high: number, signal?: AbortSignal): Promise<{ txid: string | null; height: number } | null>;
}

/**
 * EIP-1559 fee fields of a transaction. `legacy`: the chain has no EIP-1559, the transaction is
 * type 0 and pays `maxFeePerGas` as its gas price (its tip is the same: all of it goes to the miner).
 */
export interface EvmFees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  legacy?: boolean;
}

/**
 * The gas of each call, where calls of one `alike` (token transfers of one contract to one
 * treasury, say) likely need the same: the first of each is estimated, the others are run once
 * each at that gas (eth_call; an estimate is a search of a dozen runs, and a pass of sweeps has
 * hundreds of alike transfers), and one that does not run to its end there is estimated on its
 * own. Per call its gas or the node's refusal, as estimateGasAll; in batched requests.
 */
export async function estimateAlike(
  node: Pick<EvmNode, 'estimateGasAll' | 'succeedWithGas'>,
  items: ReadonlyArray<{ call: EvmCall; alike: string }>,
  signal?: AbortSignal,
): Promise<Array<{ gas: bigint } | { error: string }>> {
  const first = new Map<string, number>();
  items.forEach((x, i) => first.has(x.alike) || first.set(x.alike, i));
  const out: Array<{ gas: bigint } | { error: string } | undefined> = items.map(() => undefined);
  const firsts = [...first.values()];
  (
    await node.estimateGasAll(
      firsts.map((i) => items[i]!.call),
      signal,
    )
  ).forEach((e, k) => (out[firsts[k]!] = e));
  const tried = items.flatMap((x, i) => {
    const theirs = out[first.get(x.alike)!]!;
    return out[i] === undefined && 'gas' in theirs ? [{ i, call: { ...x.call, gas: theirs.gas } }] : [];
  });
  (
    await node.succeedWithGas(
      tried.map((t) => t.call),
      signal,
    )
  ).forEach((refusal, k) => refusal === null && (out[tried[k]!.i] = { gas: tried[k]!.call.gas }));
  const rest = items.flatMap((_, i) => (out[i] === undefined ? [i] : []));
  (
    await node.estimateGasAll(
      rest.map((i) => items[i]!.call),
      signal,
    )
  ).forEach((e, k) => (out[rest[k]!] = e));
  return out as Array<{ gas: bigint } | { error: string }>;
}
