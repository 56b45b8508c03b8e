import type { DoctorNote, FamilyProbe } from '../doctor';
import type { BitcoinRpc } from './rpc';

interface ChainInfo {
  blocks?: number;
  headers?: number;
  initialblockdownload?: boolean;
  verificationprogress?: number;
  pruned?: boolean;
  pruneheight?: number;
}

/**
 * `coinkeep doctor` on one Bitcoin endpoint: still in its initial block download or not, pruning
 * (supported while the scanner stays above the prune height) and the transaction index (not
 * needed: Bitcoin Core runs without one by default).
 */
export function btcProbe(rpc: Pick<BitcoinRpc, 'call'>): FamilyProbe {
  return async (_tip, signal) => {
    const notes: DoctorNote[] = [];
    const info = await rpc.call<ChainInfo>('getblockchaininfo', [], signal);
    if (info.initialblockdownload === true)
      notes.push({
        found: `still syncing (initial block download, ${Math.floor((info.verificationprogress ?? 0) * 100)} % verified)`,
        blocking: true,
        change: 'wait until the node has synced',
      });
    else if (typeof info.headers === 'number' && typeof info.blocks === 'number' && info.headers > info.blocks + 1)
      notes.push({ found: `behind its headers: block ${info.blocks} of ${info.headers}` });
    else notes.push({ found: 'synced' });
    if (info.pruned === true)
      notes.push({
        found: `pruned: blocks below height ${info.pruneheight ?? '?'} are gone; supported while the scanner stays above it`,
        change: 'keep the prune target large enough to cover a long outage (a catch-up or a reorganisation below it stops with "pruned data")',
      });
    else notes.push({ found: 'pruning: off' });
    try {
      const indexes = await rpc.call<{ txindex?: { synced?: boolean } }>('getindexinfo', [], signal);
      notes.push({ found: indexes.txindex ? 'transaction index: on (not needed)' : "transaction index: off (Bitcoin Core's default; not needed)" });
    } catch {
      notes.push({ found: 'transaction index: not reported (getindexinfo not offered); not needed' });
    }
    return notes;
  };
}
