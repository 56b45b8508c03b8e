import type { Store } from '../db/store';
import { placeholder, rawQuery } from '../db/raw';
import { KeyFilter, mix } from './key-filter';
import type { NormalisedSpend } from './types';
import type { WatchedAddresses } from './watched-addresses';

/** Rows per page when the outputs are loaded at start. */
const LOAD_PAGE = 10_000;

/** A spend and its position among its transaction's spends (the input index on Bitcoin). */
export interface IndexedSpend {
  spend: NormalisedSpend;
  index: number;
  /** A spend from a watched address (`from`): that address row's id. */
  addressId?: string;
}

/**
 * The spends of `spends` that `keep` accepts (true, or the id of the watched address row it
 * spends from), each with its position in its transaction. An adapter lists a transaction's
 * spends together and in input order (one per input on Bitcoin, one per transaction on EVM and
 * Tron), so the position is a count within each run of one txid.
 */
export function indexSpends(spends: readonly NormalisedSpend[], keep: (s: NormalisedSpend) => boolean | string = () => true): IndexedSpend[] {
  const out: IndexedSpend[] = [];
  let txid: string | undefined;
  let index = 0;
  for (const spend of spends) {
    index = spend.txid === txid ? index + 1 : 0;
    txid = spend.txid;
    const kept = keep(spend);
    if (kept === true) out.push({ spend, index });
    else if (kept !== false) out.push({ spend, index, addressId: kept });
  }
  return out;
}

/**
 * A 32-bit hash of an outpoint from the last 8 hex digits of its txid (uniformly random already)
 * and its index: no string is built or decoded for the thousands of inputs of a block.
 */
function outpointHash(txid: string, index: number): number {
  let h = 0;
  for (let i = txid.length - 8; i < txid.length; i++) {
    const c = txid.charCodeAt(i);
    h = (h << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  return mix(Math.imul(h ^ index, 0x9e3779b1) ^ index);
}

/**
 * What a spend of the wallet's coins looks like to the chain core, in memory: the outputs the
 * wallet received (Bitcoin; a filter of their outpoints per chain, loaded at start and added to as
 * the TransferRecorder records them) and the watched addresses (EVM and Tron senders). An input of
 * a block costs a hash and a probe, no I/O; a hit is only "maybe", which the recorder confirms
 * against the received output's row. Nothing is removed: an output spent once is spent again only
 * on another branch after a reorganisation, which is exactly when its spend must be matched again.
 */
export class WalletCoins {
  private readonly outputs = new Map<string, KeyFilter>();

  constructor(private readonly watched: WatchedAddresses) {}

  /** An output the wallet received. */
  received(chainId: string, txid: string, index: number): void {
    let filter = this.outputs.get(chainId);
    if (!filter) this.outputs.set(chainId, (filter = new KeyFilter()));
    filter.addHash(outpointHash(txid, index));
  }

  /** The spends (with their positions, and the address row of a spend from a watched address) that may spend this chain's wallet coins. */
  maySpend(chainId: string, spends: readonly NormalisedSpend[]): IndexedSpend[] {
    const filter = this.outputs.get(chainId);
    return indexSpends(spends, (s) => {
      if (s.outpoint !== undefined) return filter !== undefined && filter.mayHaveHash(outpointHash(s.outpoint.txid, s.outpoint.index));
      // The key first: an adapter may build `from` only when it is read (EVM: a keccak hash).
      if (s.watchKey !== undefined && !this.watched.mayHaveKey(chainId, s.watchKey)) return false;
      const from = s.from;
      if (from === undefined || (s.watchKey === undefined && !this.watched.mayHaveText(chainId, from))) return false;
      return this.watched.lookup(chainId, from) ?? false;
    });
  }

  /**
   * Fills the filters from every output the wallet received (at start); returns how many. Reverted
   * ones too: one included again later is only updated, never recorded anew.
   */
  async load(store: Store): Promise<number> {
    const em = store.read;
    let last = '';
    let n = 0;
    for (;;) {
      const rows = await rawQuery<{ id: string; chain_id: string; txid: string; output_index: number }>(
        em,
        `SELECT id, chain_id, txid, output_index FROM chain_transfers WHERE id > ${placeholder(em, 1)} AND direction = 'incoming' ORDER BY id LIMIT ${LOAD_PAGE}`,
        [last],
      );
      for (const r of rows) this.received(r.chain_id, r.txid, r.output_index);
      n += rows.length;
      if (rows.length < LOAD_PAGE) return n;
      last = rows[rows.length - 1]!.id;
    }
  }
}
