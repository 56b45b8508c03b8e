import type { DoctorNote, FamilyProbe } from '../doctor';
import type { TronFullNode } from './full-node';

const LITE_CHANGE = "set node.openHistoryQueryWhenLiteFN = true in the node's config and restart it, or use a full node";

/**
 * `coinkeep doctor` on one Tron endpoint: the history queries the scanner needs
 * (`getblockbynum`, `gettransactioninfobyblocknum`), which a java-tron Lite FullNode closes
 * (answering plain text) unless `node.openHistoryQueryWhenLiteFN = true`: not supported closed.
 */
export function tronProbe(node: Pick<TronFullNode, 'post'>): FamilyProbe {
  return async (tip, signal) => {
    const notes: DoctorNote[] = [];
    const height = Math.max(0, tip.height - 1);
    for (const endpoint of ['getblockbynum', 'gettransactioninfobyblocknum']) {
      try {
        await node.post(endpoint, { num: height }, signal);
      } catch (err) {
        const lite = liteNote(err);
        if (lite) return [lite];
        throw err;
      }
    }
    notes.push({ found: 'history queries open (getblockbynum, gettransactioninfobyblocknum answered)' });
    return notes;
  };
}

/** A Lite FullNode's closed history query, from its error; null for any other error. */
export function liteNote(err: unknown): DoctorNote | null {
  if (
    !(err instanceof Error) ||
    !/^tron node (getblockbynum|getblockbylimitnext|gettransactioninfobyblocknum|gettransactioninfobyid): the answer is not JSON/.test(err.message)
  )
    return null;
  return { found: `a Lite FullNode with history queries closed (${err.message})`, blocking: true, change: LITE_CHANGE };
}
