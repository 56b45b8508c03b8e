import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import { familyOf } from '../chains/families';
import { StateUnavailable, type HoldingsReader } from '../chains/types';
import { placeholder, rawQuery } from '../db/raw';
import type { Store } from '../db/store';
import { Amount } from '../shared/amount';
import { EXTERNAL_BOOK } from './ledger';

/**
 * One coin of `coinkeep ledger reconcile`. `difference` = `node` − (`books` + `uncredited_in`):
 * zero when the chain shows exactly what the books say the wallet holds.
 */
export interface ReconcileLine {
  coin_id: string;
  ticker: string;
  chain_id: string;
  /** What the ledger says is on chain: every book but `external` (accounts' available and hold, fees, network), posted. */
  books: string;
  /** Payments the node shows in a block that the books credit only at the coin's confirmations. */
  uncredited_in: string;
  /**
   * What may have left the wallet without the books saying so yet: `total_debit` of withdrawals
   * whose transaction may be out (processing, broadcast), still held in the books, and the most the
   * chain can take for the wallet's own account-chain sends not yet booked (their `max_cost`).
   */
  in_flight_out: string;
  /** What may have reached the wallet without the books saying so yet: gas top-ups from a gas station (outside the books) not yet booked. */
  in_flight_in: string;
  /** What the node shows at the wallet's outputs (Bitcoin) or addresses (EVM, Tron); null when it could not be asked. */
  node: string | null;
  difference: string | null;
  /**
   * `ok`; `in_flight` (the chain shows less by no more than `in_flight_out`, or more by no more than
   * `in_flight_in`: run it again once they are booked); `difference`; `unavailable` (the node could
   * not be asked).
   */
  status: 'ok' | 'in_flight' | 'difference' | 'unavailable';
  error: string | null;
}

export interface ReconcileReport {
  ok: boolean;
  coins: ReconcileLine[];
}

export interface ReconcileDeps {
  store: Store;
  catalog: Catalog;
  /** The node side of a chain; null for a chain nobody watches. */
  holdingsOf: (chainId: string) => HoldingsReader | null;
}

/** Address purposes whose confirmed payments the books credit (invoice payments, static deposits). */
const CREDITED_PURPOSES = "('invoice', 'static')";

interface ChainSide {
  outputs: Array<{ txid: string; index: number }>;
  addresses: string[];
  height: number | null;
}

/**
 * Per coin, what the books say the wallet holds against what the node shows (PRODUCT §8a). The
 * database is read on one snapshot (books, scanned heights, stored outputs and addresses, payments
 * not yet credited, withdrawals in flight); the nodes are asked after it, outside the write lock,
 * EVM at the height the books were scanned to. Rule in docs/decisions.md ("ledger reconcile").
 */
export async function reconcile(deps: ReconcileDeps, signal?: AbortSignal): Promise<ReconcileReport> {
  const coins = deps.catalog.coins();
  const chainIds = [...new Set(coins.map((c) => c.chain_id))];
  const db = await deps.store.snapshot(async (em) => {
    const books = sumBy(
      await rawQuery<{ coin_id: string; credits_posted: string; debits_posted: string }>(
        em,
        `SELECT coin_id, credits_posted, debits_posted FROM ledger_balances WHERE book <> '${EXTERNAL_BOOK}'`,
      ),
      (r) => Amount.of(r.credits_posted).minus(Amount.of(r.debits_posted)),
    );
    const heights = new Map<string, number>();
    for (const r of await rawQuery<{ chain_id: string; height: number }>(em, 'SELECT chain_id, height FROM chain_cursors'))
      heights.set(r.chain_id, Number(r.height));
    const uncredited = await rawQuery<{ coin_id: string; chain_id: string; amount: string; block_height: number }>(
      em,
      `SELECT coin_id, chain_id, amount, block_height FROM chain_transfers
       WHERE direction = 'incoming' AND status = 'seen' AND block_height IS NOT NULL AND purpose IN ${CREDITED_PURPOSES}`,
    );
    // Stray payments not credited (PRODUCT §17): their coins are at a wallet address, outside the books until the merchant credits them.
    uncredited.push(
      ...(await rawQuery<{ coin_id: string; chain_id: string; amount: string; block_height: number }>(
        em,
        `SELECT t.coin_id, t.chain_id, t.amount, t.block_height FROM strays s JOIN chain_transfers t ON t.id = s.transfer_id
         WHERE s.status = 'open' AND t.status <> 'reverted' AND t.block_height IS NOT NULL`,
      )),
    );
    const inFlight = sumBy(
      await rawQuery<{ coin_id: string; total_debit: string }>(em, "SELECT coin_id, total_debit FROM withdrawals WHERE status IN ('processing', 'broadcast')"),
      (r) => Amount.of(r.total_debit),
    );
    const arriving = new Map<string, Amount>();
    // The wallet's own EVM and Tron sends not yet booked (a sweep, a top-up, a payout on its way): the chain
    // may already show their fee taken and a top-up arrived. An EVM payout's row stays `reserved` (its
    // nonce; the payout worker sends it) until its fee is booked once the withdrawal is final: a token
    // payout mined before that has taken its gas in the native coin, which no withdrawal of that coin covers.
    for (const r of await rawQuery<{ chain_id: string; kind: string; amount: string; max_cost: string }>(
      em,
      "SELECT chain_id, kind, amount, max_cost FROM account_sends WHERE booked_at IS NULL AND (status IN ('signed', 'broadcast', 'mined') OR (kind = 'payout' AND status = 'reserved'))",
    )) {
      const native = coins.find((c) => c.chain_id === r.chain_id && c.asset === 'native');
      if (!native) continue;
      const fee = Amount.fromBaseUnits(BigInt(r.max_cost), native.decimals);
      addTo(inFlight, native.id, fee);
      if (r.kind === 'topup') addTo(arriving, native.id, Amount.fromBaseUnits(BigInt(r.amount), native.decimals));
    }
    // A payout of a token on its way whose chain takes its fee in the native coin (a Tron token payout's
    // burn) and that no account send reserves (EVM's are counted above): the most its candidates may
    // take, until the withdrawal is final and its fee booked.
    const payoutFees = new Map<string, { coinId: string; fee: Amount }>();
    for (const r of await rawQuery<{ payout_id: string; coin_id: string; fee: string }>(
      em,
      `SELECT p.id AS payout_id, w.coin_id, c.fee FROM chain_payouts p JOIN chain_payout_candidates c ON c.payout_id = p.id
       JOIN chain_payout_legs l ON l.payout_id = p.id JOIN withdrawals w ON w.id = l.withdrawal_id
       WHERE p.fee_booked IS NULL AND w.status IN ('processing', 'broadcast')
       AND NOT EXISTS (SELECT 1 FROM account_sends e WHERE e.withdrawal_id = w.id AND e.kind = 'payout')`,
    )) {
      const coin = coins.find((c) => c.id === r.coin_id);
      const native = coin && coins.find((c) => c.chain_id === coin.chain_id && c.asset === 'native');
      if (!native || native.id === coin.id) continue;
      const fee = Amount.fromBaseUnits(BigInt(r.fee), native.decimals);
      const most = payoutFees.get(r.payout_id);
      if (!most || fee.gt(most.fee)) payoutFees.set(r.payout_id, { coinId: native.id, fee });
    }
    for (const { coinId, fee } of payoutFees.values()) addTo(inFlight, coinId, fee);
    const sides = new Map<string, ChainSide>();
    for (const chainId of chainIds) {
      const { holdings } = familyOf(coins.find((c) => c.chain_id === chainId)!.family);
      const h = heights.get(chainId);
      sides.set(chainId, {
        outputs: holdings.by === 'outputs' ? await storedOutputs(em, chainId) : [],
        addresses: holdings.by === 'addresses' ? await walletAddresses(em, chainId) : [],
        // A node that answers for a past block is asked at the height the books were scanned to; the others at their tip.
        height: holdings.pastHeight && h !== undefined && h >= 0 ? h : null,
      });
    }
    return { books, uncredited, inFlight, arriving, sides };
  });

  const node = new Map<string, { held: Map<string, bigint> } | { error: string }>();
  await Promise.all(
    chainIds.map(async (chainId) => {
      const reader = deps.holdingsOf(chainId);
      if (!reader) return void node.set(chainId, { error: `chain ${chainId} is not watched by this daemon` });
      const side = db.sides.get(chainId)!;
      const assets = coins.filter((c) => c.chain_id === chainId).map((c) => c.asset);
      try {
        node.set(chainId, { held: await reader.holdings({ ...side, assets }, signal) });
      } catch (err) {
        // The books are compared at the scanned height only, never with balances of another block
        // (docs/decisions.md "reconcile without archive state"): a later run, the scanner near the tip, compares.
        const hint =
          err instanceof StateUnavailable ? `; run it again once the chain's scanner is within the node's recent blocks (or use an archive node)` : '';
        node.set(chainId, { error: err instanceof Error ? `${err.message.slice(0, 300)}${hint}` : 'the node could not be asked' });
      }
    }),
  );

  const lines = coins.map((coin): ReconcileLine => {
    const books = db.books.get(coin.id) ?? Amount.zero();
    const side = db.sides.get(coin.chain_id)!;
    const uncredited = db.uncredited
      .filter((u) => u.coin_id === coin.id && (side.height === null || Number(u.block_height) <= side.height))
      .reduce((a, u) => a.plus(Amount.of(u.amount)), Amount.zero());
    const inFlight = db.inFlight.get(coin.id) ?? Amount.zero();
    const arriving = db.arriving.get(coin.id) ?? Amount.zero();
    const base = {
      coin_id: coin.id,
      ticker: coin.ticker,
      chain_id: coin.chain_id,
      books: books.toString(),
      uncredited_in: uncredited.toString(),
      in_flight_out: inFlight.toString(),
      in_flight_in: arriving.toString(),
    };
    const got = node.get(coin.chain_id)!;
    if ('error' in got) return { ...base, node: null, difference: null, status: 'unavailable', error: got.error };
    const held = Amount.fromBaseUnits(got.held.get(coin.asset) ?? 0n, coin.decimals);
    const difference = held.minus(books).minus(uncredited);
    return { ...base, node: held.toString(), difference: difference.toString(), status: statusOf(difference, inFlight, arriving), error: null };
  });
  return { ok: lines.every((l) => l.status === 'ok' || l.status === 'in_flight'), coins: lines };
}

function statusOf(difference: Amount, out: Amount, arriving: Amount): ReconcileLine['status'] {
  if (difference.isZero()) return 'ok';
  // Within what may be on its way out (the chain shows less) and what may have arrived (more).
  const low = Amount.zero().minus(out);
  return difference.cmp(low) >= 0 && difference.lte(arriving) ? 'in_flight' : 'difference';
}

function sumBy<T extends { coin_id: string }>(rows: T[], value: (r: T) => Amount): Map<string, Amount> {
  const out = new Map<string, Amount>();
  for (const r of rows) addTo(out, r.coin_id, value(r));
  return out;
}

/** Every output the wallet received on the chain and has not seen taken back (the node says which are unspent). */
async function storedOutputs(em: EntityManager, chainId: string): Promise<Array<{ txid: string; index: number }>> {
  const rows = await rawQuery<{ txid: string; output_index: number }>(
    em,
    `SELECT txid, output_index FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND direction = 'incoming' AND status <> 'reverted' ORDER BY id`,
    [chainId],
  );
  return rows.map((r) => ({ txid: r.txid, index: Number(r.output_index) }));
}

/**
 * Every address the wallet issued on the chain, whatever it is for and archived ones too: coins may
 * still be there; and the addresses of other chains that strays reached on this one (PRODUCT §17).
 */
async function walletAddresses(em: EntityManager, chainId: string): Promise<string[]> {
  const p = (i: number) => placeholder(em, i);
  const rows = await rawQuery<{ address: string }>(
    em,
    `SELECT address FROM addresses WHERE chain_id = ${p(1)} UNION SELECT to_address AS address FROM strays WHERE chain_id = ${p(2)} ORDER BY address`,
    [chainId, chainId],
  );
  return rows.map((r) => r.address);
}

/** Adds `amount` to the sum kept under `key`. */
function addTo(sums: Map<string, Amount>, key: string, amount: Amount): void {
  sums.set(key, (sums.get(key) ?? Amount.zero()).plus(amount));
}
