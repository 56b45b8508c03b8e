import type { ChainConfig } from '../../config/schema';
import type { DoctorNote, FamilyProbe } from '../doctor';
import { TRANSFER_TOPIC } from '../token-transfer';
import type { EvmRpc } from './json-rpc';
import type { FeeQuote } from '../types';
import { feeModelOf } from './fee-model';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** How far back a balance is asked to tell an archive node: past the 128 blocks a full node keeps. */
const ARCHIVE_DEPTH = 1000;
const hex = (n: number): string => `0x${n.toString(16)}`;

/**
 * `coinkeep doctor` on one EVM endpoint: synced or not, archive state or not (both work: reads
 * stay at recent heights), and whether it takes a batch of `max_batch` calls and an `eth_getLogs`
 * over `logs_range` blocks, or else the largest it takes (the daemon learns smaller ones from
 * refusals too; a lower bound starts it there).
 */
export function evmProbe(chain: ChainConfig, rpc: Pick<EvmRpc, 'call' | 'batch'>, feeQuote?: () => Promise<FeeQuote>): FamilyProbe {
  return async (tip, signal) => {
    const notes: DoctorNote[] = [];
    const syncing = await rpc.call<false | { currentBlock?: string; highestBlock?: string }>('eth_syncing', [], signal);
    if (syncing)
      notes.push({
        found: `still syncing: block ${Number(syncing.currentBlock ?? 0)} of ${Number(syncing.highestBlock ?? 0)}`,
        blocking: true,
        change: 'wait until the node has synced',
      });
    else notes.push({ found: 'synced' });
    if (feeQuote) notes.push(await feeModelNote(chain, feeQuote));

    const past = Math.max(0, tip.height - ARCHIVE_DEPTH);
    const archive = await refused(() => rpc.call('eth_getBalance', [ZERO_ADDRESS, hex(past)], signal));
    notes.push({
      found:
        archive === null
          ? `archive state: yes (a balance at block ${past} answered)`
          : `archive state: no (a balance at block ${past}: ${archive}); supported: balances are read at recent heights`,
    });

    const batch = chain.nodes.max_batch;
    notes.push(
      await largestAccepted(
        batch,
        (n) =>
          rpc.batch(
            Array.from({ length: n }, () => ({ method: 'eth_blockNumber', params: [] })),
            signal,
          ),
        (n) => `a batch of ${n} calls`,
        'max_batch',
      ),
    );

    const tokens = chain.tokens.map((t) => t.contract);
    const logs = (n: number) => ({
      fromBlock: hex(Math.max(0, tip.height - n + 1)),
      toBlock: hex(tip.height),
      address: tokens.length > 0 ? tokens : [ZERO_ADDRESS],
      topics: [TRANSFER_TOPIC],
    });
    notes.push(
      await largestAccepted(
        chain.nodes.logs_range,
        (n) => rpc.call('eth_getLogs', [logs(n)], signal),
        (n) => `eth_getLogs over ${n} blocks`,
        'logs_range',
      ),
    );
    return notes;
  };
}

/** Whether the node can be quoted by the chain's fee model (a chain without EIP-1559 needs `fee_model: legacy`). */
async function feeModelNote(chain: ChainConfig, feeQuote: () => Promise<FeeQuote>): Promise<DoctorNote> {
  const model = feeModelOf(chain);
  try {
    const q = await feeQuote();
    if (q.kind !== 'evm') return { found: `fee model ${model}` };
    const extra = [
      q.transferGas !== undefined ? `native transfer gas ${q.transferGas}` : '',
      q.l1Fee !== undefined ? `L1 data fee reserved ${q.l1Fee} wei` : '',
    ]
      .filter(Boolean)
      .join(', ');
    return { found: `fee model ${model}: fee cap ${q.maxFeePerGas} wei per gas${extra ? `, ${extra}` : ''}` };
  } catch (err) {
    return {
      found: `fee model ${model}: ${err instanceof Error ? err.message : String(err)}`,
      blocking: true,
      change: model === 'legacy' ? 'check the node answers eth_gasPrice' : "set chains[].fee_model to the chain's model (legacy for a chain without EIP-1559)",
    };
  }
}

/**
 * Whether the endpoint takes `bound` (a batch size, a log range); when it refuses, the largest
 * smaller one it takes (halving down to one it takes, then a binary search up to the last refused),
 * as the setting to write.
 */
async function largestAccepted(bound: number, run: (n: number) => Promise<unknown>, what: (n: number) => string, setting: string): Promise<DoctorNote> {
  const refusal = await refused(() => run(bound));
  if (refusal === null) return { found: `${what(bound)} (${setting}): accepted` };
  let high = bound;
  let low = Math.floor(bound / 2);
  while (low >= 1 && (await refused(() => run(low))) !== null) [high, low] = [low, Math.floor(low / 2)];
  if (low < 1)
    return {
      found: `${what(bound)} (${setting}) refused: ${refusal}; not even 1 accepted`,
      blocking: true,
      change: 'use an endpoint that answers these calls',
    };
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if ((await refused(() => run(mid))) === null) low = mid;
    else high = mid;
  }
  return {
    found: `${what(bound)} (${setting}) refused: ${refusal}; ${what(low)} accepted`,
    change: `set ${setting}: ${low} (the daemon also shrinks what it sees refused, from the bound down)`,
  };
}

async function refused(run: () => Promise<unknown>): Promise<string | null> {
  try {
    await run();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
