import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import { insertRowIfAbsent, placeholder, rawQuery, rawRun } from '../db/raw';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { Amount } from '../shared/amount';

/** A deposit address's credited, not yet swept balance of one coin (EVM and Tron sweeps). */
export interface SweepGroup {
  accountId: string;
  addressId: string;
  address: string;
  path: string;
  coinId: string;
  transferIds: string[];
  /** Base units credited. */
  credited: bigint;
}

/**
 * The credited incoming transfers to deposit addresses of an account chain that no sweep has
 * taken yet (credited strays too: their coins sit at a wallet address on this chain, PRODUCT §17), by address and coin, for addresses with none of the wallet's own sends from or to
 * them on the way; one coin an address a pass, at or over its minimum (`minOf`, base units).
 */
async function dueSweepGroups(
  em: EntityManager,
  chainId: string,
  catalog: Catalog,
  minOf: (accountId: string, coinId: string) => bigint,
): Promise<SweepGroup[]> {
  const p = (i: number) => placeholder(em, i);
  const rows = await rawQuery<{
    id: string;
    account_id: string;
    address_id: string;
    address: string;
    coin_id: string;
    amount: string;
    derivation_path: string;
  }>(
    em,
    `SELECT t.id, t.account_id, t.address_id, t.address, t.coin_id, t.amount, a.derivation_path FROM chain_transfers t ` +
      `JOIN addresses a ON a.id = t.address_id ` +
      `WHERE t.chain_id = ${p(1)} AND t.direction = 'incoming' AND t.status = 'confirmed' AND t.purpose IN ('invoice', 'static', 'stray') ` +
      `AND EXISTS (SELECT 1 FROM transactions x WHERE x.chain_transfer_id = t.id AND x.status = 'confirmed' AND x.reverses_id IS NULL) ` +
      `AND NOT EXISTS (SELECT 1 FROM evm_swept_transfers s WHERE s.transfer_id = t.id) ` +
      `AND NOT EXISTS (SELECT 1 FROM account_sends e WHERE e.chain_id = t.chain_id AND (e.from_address = t.address OR e.to_address = t.address) AND e.status IN ('signed', 'broadcast')) ` +
      `ORDER BY t.address, t.coin_id`,
    [chainId],
  );
  const groups = new Map<string, SweepGroup>();
  for (const r of rows) {
    const coin = catalog.coin(r.coin_id);
    if (!coin) continue;
    const key = `${r.address}\u0000${r.coin_id}`;
    let g = groups.get(key);
    if (!g)
      groups.set(
        key,
        (g = {
          accountId: r.account_id,
          addressId: r.address_id,
          address: r.address,
          path: r.derivation_path,
          coinId: r.coin_id,
          transferIds: [],
          credited: 0n,
        }),
      );
    g.transferIds.push(r.id);
    g.credited += Amount.of(r.amount).toBaseUnits(coin.decimals);
  }
  const seen = new Set<string>();
  return [...groups.values()].filter((g) => {
    if (g.credited === 0n || g.credited < minOf(g.accountId, g.coinId) || seen.has(g.address)) return false;
    seen.add(g.address);
    return true;
  });
}

/**
 * An account's credited deposits of one coin at its deposit addresses that no sweep has taken yet,
 * summed per address (base units): what sweeps may still bring to its treasury.
 */
export async function unsweptCredited(em: EntityManager, chainId: string, accountId: string, coin: { id: string; decimals: number }): Promise<bigint[]> {
  const p = (i: number) => placeholder(em, i);
  const rows = await rawQuery<{ address: string; amount: string }>(
    em,
    `SELECT t.address, t.amount FROM chain_transfers t WHERE t.chain_id = ${p(1)} AND t.account_id = ${p(2)} AND t.coin_id = ${p(3)} ` +
      `AND t.direction = 'incoming' AND t.status = 'confirmed' AND t.purpose IN ('invoice', 'static', 'stray') ` +
      `AND EXISTS (SELECT 1 FROM transactions x WHERE x.chain_transfer_id = t.id AND x.status = 'confirmed' AND x.reverses_id IS NULL) ` +
      `AND NOT EXISTS (SELECT 1 FROM evm_swept_transfers s WHERE s.transfer_id = t.id) ORDER BY t.address`,
    [chainId, accountId, coin.id],
  );
  const byAddress = new Map<string, bigint>();
  for (const r of rows) byAddress.set(r.address, (byAddress.get(r.address) ?? 0n) + Amount.of(r.amount).toBaseUnits(coin.decimals));
  return [...byAddress.values()];
}

/**
 * A payout of `accountId` waits for its `coinId` at the treasury: that coin's deposits are swept at
 * the next pass whatever their minimum. Written in the caller's transaction, read by whichever
 * daemon holds the chain's sweeps.
 */
export async function requestSweep(em: EntityManager, clock: Clock, req: { chainId: string; accountId: string; coinId: string }): Promise<void> {
  await insertRowIfAbsent(em, 'sweep_requests', { chain_id: req.chainId, account_id: req.accountId, coin_id: req.coinId, created_at: iso(clock.now()) });
}

/**
 * This pass's due sweep groups (dueSweepGroups), the coins payouts asked for (requestSweep) due
 * whatever their minimum (`minimum`, base units, otherwise). The requests read are taken: a payout
 * that still waits asks again at its next run.
 */
export async function takeDueSweepGroups(store: Store, chainId: string, catalog: Catalog, minimum: (coinId: string) => bigint): Promise<SweepGroup[]> {
  const requests = await rawQuery<{ account_id: string; coin_id: string }>(
    store.read,
    `SELECT account_id, coin_id FROM sweep_requests WHERE chain_id = ${placeholder(store.read, 1)}`,
    [chainId],
  );
  const asked = new Set(requests.map((r) => `${r.account_id}\u0000${r.coin_id}`));
  const groups = await dueSweepGroups(store.read, chainId, catalog, (accountId, coinId) => (asked.has(`${accountId}\u0000${coinId}`) ? 0n : minimum(coinId)));
  if (requests.length > 0) {
    await store.write(async (em) => {
      const p = (i: number) => placeholder(em, i);
      for (const r of requests)
        await rawRun(em, `DELETE FROM sweep_requests WHERE chain_id = ${p(1)} AND account_id = ${p(2)} AND coin_id = ${p(3)}`, [
          chainId,
          r.account_id,
          r.coin_id,
        ]);
    });
  }
  return groups;
}

/**
 * Names the deposit transfers each sweep moves, in multi-row inserts (each transfer once: one already
 * named by another sweep fails the caller's transaction).
 */
export async function markSwept(em: EntityManager, clock: Clock, swept: ReadonlyArray<{ sendId: string; transferIds: readonly string[] }>): Promise<void> {
  const now = iso(clock.now());
  const rows = swept.flatMap((s) => s.transferIds.map((id) => [id, s.sendId, now]));
  for (let i = 0; i < rows.length; i += 300) {
    const chunk = rows.slice(i, i + 300);
    const values = chunk.map((_, j) => `(${placeholder(em, 3 * j + 1)}, ${placeholder(em, 3 * j + 2)}, ${placeholder(em, 3 * j + 3)})`).join(', ');
    const n = await rawRun(em, `INSERT INTO evm_swept_transfers (transfer_id, send_id, created_at) VALUES ${values} ON CONFLICT DO NOTHING`, chunk.flat());
    if (n !== chunk.length) throw new Error('a deposit transfer is being swept already');
  }
}

/** A sweep that can no longer move its transfers gives them back (the next pass sweeps them again). */
export async function releaseSwept(em: EntityManager, sendId: string): Promise<void> {
  await rawRun(em, `DELETE FROM evm_swept_transfers WHERE send_id = ${placeholder(em, 1)}`, [sendId]);
}
