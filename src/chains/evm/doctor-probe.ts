import type { ChainConfig } from '../../config/schema';
import type { DoctorNote, FamilyProbe } from '../doctor';
import { TRANSFER_TOPIC } from '../token-transfer';
import type { EvmRpc } from './json-rpc';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** How far back a balance is asked to tell an archive node: past the 128 blocks a full node keeps. */
const ARCHIVE_DEPTH = 1000;
const hex = (n: number): string => `0x${n.toString(16)}`;

/**
 * `coinkeep doctor` on one EVM endpoint: synced or not, archive state or not (both work: reads
 * stay at recent heights), and whether it takes a batch of `max_batch` calls and an `eth_getLogs`
 * over `logs_range` blocks (the daemon learns smaller ones from refusals; lower bounds start it there).
 */
export function evmProbe(chain: ChainConfig, rpc: Pick<EvmRpc, 'call' | 'batch'>): FamilyProbe {
  return async (tip, signal) => {
    const notes: DoctorNote[] = [];
    const syncing = await rpc.call<false | { currentBlock?: string; highestBlock?: string }>('eth_syncing', [], signal);
    if (syncing) notes.push({ found: `still syncing: block ${Number(syncing.currentBlock ?? 0)} of ${Number(syncing.highestBlock ?? 0)}`, blocking: true, change: 'wait until the node has synced' });
    else notes.push({ found: 'synced' });

    const past = Math.max(0, tip.height - ARCHIVE_DEPTH);
    notes.push(
      await attempt(
        () => rpc.call('eth_getBalance', [ZERO_ADDRESS, hex(past)], signal),
        () => ({ found: `archive state: yes (a balance at block ${past} answered)` }),
        (why) => ({ found: `archive state: no (a balance at block ${past}: ${why}); supported: balances are read at recent heights` }),
      ),
    );

    const batch = chain.nodes.max_batch;
    notes.push(
      await attempt(
        () => rpc.batch(Array.from({ length: batch }, () => ({ method: 'eth_blockNumber', params: [] })), signal),
        () => ({ found: `a batch of ${batch} calls (max_batch): accepted` }),
        (why) => ({ found: `a batch of ${batch} calls (max_batch) refused: ${why}`, change: 'set max_batch to what the provider allows (the daemon also shrinks batches it sees refused)' }),
      ),
    );

    const range = chain.nodes.logs_range;
    const tokens = chain.tokens.map((t) => t.contract);
    const filter = { fromBlock: hex(Math.max(0, tip.height - range + 1)), toBlock: hex(tip.height), address: tokens.length > 0 ? tokens : [ZERO_ADDRESS], topics: [TRANSFER_TOPIC] };
    notes.push(
      await attempt(
        () => rpc.call('eth_getLogs', [filter], signal),
        () => ({ found: `eth_getLogs over ${range} blocks (logs_range): accepted` }),
        (why) => ({ found: `eth_getLogs over ${range} blocks (logs_range) refused: ${why}`, change: 'set logs_range to what the provider allows (the daemon also shrinks ranges it sees refused)' }),
      ),
    );
    return notes;
  };
}

async function attempt(run: () => Promise<unknown>, ok: () => DoctorNote, refused: (why: string) => DoctorNote): Promise<DoctorNote> {
  try {
    await run();
    return ok();
  } catch (err) {
    return refused(err instanceof Error ? err.message : String(err));
  }
}
