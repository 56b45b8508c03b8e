import type { EntityManager } from 'typeorm';
import { coinId, NATIVE_ASSET, type Catalog } from '../../../catalog/coins';
import { erc20TransferData } from '../erc20';
import type { ChainConfig } from '../../../config/schema';
import type { Sealer } from '../../../db/seal';
import { cells } from '../../../db/sealed-values';
import { placeholder, rawQuery } from '../../../db/raw';
import { minedOwnSpends } from '../../own-spends';
import type { Store } from '../../../db/store';
import { iso, type Clock } from '../../../shared/clock';
import { newTimeOrderedId } from '../../../shared/ids';
import type { Logger } from '../../../shared/logger';
import type { EvmSpend } from '../../../wallet/spend';
import type { RemoteSigner } from '../../../wallet/signer-client';
import type { SignPurpose } from '../../../wallet/signer-protocol';
import { NodeUnavailable, type SentTransaction } from '../../types';
import type { ChainTransferRow } from '../../../db/entities/chain';
import type { EvmReceipt } from '../evm-adapter';
import type { FeeCeiling } from '../../../payouts/fee-ceiling';
import { undelivered } from '../../../payouts/token-delivery';
import { addressDigits } from '../address-text';
import { evmNonceTaken } from '../refusal';
import type { EvmFees, EvmNode } from './evm-node';
import { evmQuote, fillerFees, lastCosts, newFees, replacementFees } from './fee-policy';
import { NATIVE_TRANSFER_GAS } from '../gas';
import { maxCost, nativeGas } from '../fee-model';
import { insertSend, nextNonce, normalise, sendsById, sendsWithStatus, updateSend, type EvmSendKind, type EvmSendRow } from './send-store';

/** What the owner of a kind of send (the sweeper, the payout rail) does when its sends move. */
export interface EvmSendOwner {
  /** Handed to the node. */
  onBroadcast?(em: EntityManager, row: EvmSendRow): Promise<void>;
  /** Mined with the chain's confirmations (`row.succeeded` 0: reverted, its fee taken all the same). */
  onFinal(em: EntityManager, row: EvmSendRow): Promise<void>;
  /** Will never be mined: refused before it spread, or its nonce taken by another transaction. */
  onDropped(em: EntityManager, row: EvmSendRow, reason: string): Promise<void>;
  /** Its block was dropped by a reorganisation before it was final: it is watched (and rebroadcast) again. */
  onUnmined?(em: EntityManager, row: EvmSendRow): Promise<void>;
  /** Stuck, and its sender lacks `wei` of the gas its replacement at `fees` would need: the replacement waits until it holds them. */
  onShort?(row: EvmSendRow, wei: bigint, fees: EvmFees, signal?: AbortSignal): Promise<void>;
}

/** A transaction to sign and store: from one of the wallet's keys, moving `amount` of `coinId` to `to`. */
export interface SendRequest {
  kind: EvmSendKind;
  from: { address: string; path: string };
  /** The payee (a token's recipient, not its contract). */
  to: string;
  coinId: string;
  /** Base units. */
  amount: bigint;
  gasLimit: bigint;
  fees: EvmFees;
  accountId?: string | null;
  withdrawalId?: string | null;
  /** A send that must be mined (and have succeeded) before this one is broadcast. */
  afterId?: string | null;
}

/** Requests side by side that hand ready sends to the node (each sender's in one of them). */
const BROADCAST_LANES = 4;

/** How often the node is asked about a broadcast send it has no receipt of (in its mempool? lost? displaced?). */
const STATE_CHECK_MS = 2000;

/** How many blocks before a send's broadcast the search for its nonce's transaction starts (within a pruned node's recent state). */
const NONCE_LOOKBACK = 16;

/** Node error texts that refuse a transaction for its fee only: it may be taken later, or replaced. */
const FEE_TOO_LOW = /base fee|underpriced|fee too low|feecap|max fee per gas less/i;

/** Node error texts that say nothing about the transaction: the node was not reached or not answering. */
const UNREACHED = /unreachable|timed out|HTTP \d+|no answer|not JSON|without a result/;

/**
 * The wallet's own EVM transactions on one chain, from signing to final (PRODUCT §8a): each is
 * given the next nonce of its sender and stored with its signed bytes in the caller's
 * transaction, before anything is broadcast; the stored bytes are what is broadcast, and broadcast
 * again whenever the node does not know them (a restart, a node that lost its mempool, a
 * reorganisation). A transaction is never signed twice. Sends that are ready go to the node
 * side by side. What a send means is its owner's (EvmSendOwner, by kind).
 */
export class EvmSendQueue {
  private readonly owners = new Map<EvmSendKind, EvmSendOwner>();
  /** When the node was last asked about a broadcast send without a receipt (ms), by send id. */
  private readonly checkedAt = new Map<string, number>();

  constructor(
    private readonly deps: {
      chain: ChainConfig;
      node: EvmNode;
      store: Store;
      catalog: Catalog;
      signer: Pick<RemoteSigner, 'signEvm'>;
      /** Seals the signed bytes at rest (they hold a signature, and are not public before their broadcast). */
      sealer: Sealer;
      /** A send waiting in the mempool this many blocks after it was sent is replaced with higher fees (the chain's payouts.replace_after_blocks). */
      replaceAfterBlocks: number;
      /** The chain's `payouts.max_fee`: no replacement or filler is signed above it. */
      ceiling: FeeCeiling;
      clock: Clock;
      logger: Logger;
    },
  ) {}

  get chainId(): string {
    return this.deps.chain.id;
  }

  own(kind: EvmSendKind, owner: EvmSendOwner): this {
    this.owners.set(kind, owner);
    return this;
  }

  /**
   * Signs `req` with the next nonce of its sender (`nodePending`: the node's count, mempool
   * included, read before the transaction) and stores it as `signed`. NonceTaken when another
   * daemon took that nonce meanwhile: the caller's transaction rolls back.
   */
  async sign(em: EntityManager, req: SendRequest, nodePending: number): Promise<EvmSendRow> {
    return this.store(em, req, nodePending, 'signed');
  }

  /**
   * `sign` for several requests in order (each with its sender's node count in `nodePending`), the
   * seed opened once for all of them, without storing them: `storeAll` does, in the caller's
   * transaction, before any is broadcast (so the next batch can be signed while the node takes the
   * last). The nonces follow what `em` reads as stored; one taken meanwhile fails `storeAll`.
   */
  async signBatch(em: EntityManager, reqs: readonly SendRequest[], nodePending: (address: string) => number): Promise<EvmSendRow[]> {
    const next = new Map<string, number>();
    const nonces: number[] = [];
    for (const req of reqs) {
      const a = req.from.address;
      const n = next.get(a) ?? (await nextNonce(em, this.chainId, a, nodePending(a)));
      nonces.push(n);
      next.set(a, n + 1);
    }
    const signed = await this.signAll(reqs.map((req, i) => ({ spend: this.spend(req, nonces[i]!), purpose: purposeOf(req) })));
    return reqs.map((req, i) => this.rowOf(req, nonces[i]!, signed[i]!, 'signed'));
  }

  /** Stores rows of `signBatch` (their bytes sealed); NonceTaken when a live row holds one's nonce (the transaction rolls back). */
  async storeAll(em: EntityManager, rows: readonly EvmSendRow[]): Promise<void> {
    for (const row of rows) await insertSend(em, { ...row, raw: this.deps.sealer.seal(row.raw, cells.evmSend(row.id)) });
  }

  /** Signed by the signer process, which checks each against the rows it names (PRODUCT §18). */
  private signAll(items: Array<{ spend: EvmSpend; purpose: SignPurpose }>): Promise<SentTransaction[]> {
    return this.deps.signer.signEvm(this.chainId, items);
  }

  private async signOne(spend: EvmSpend, purpose: SignPurpose): Promise<SentTransaction> {
    return (await this.signAll([{ spend, purpose }]))[0]!;
  }

  private spend(req: SendRequest, nonce: number): EvmSpend {
    return {
      ...this.spendOf(req.coinId, req.to, req.amount),
      chainId: this.deps.chain.chain_id!,
      path: req.from.path,
      nonce,
      gasLimit: req.gasLimit,
      ...req.fees,
    };
  }

  /**
   * Signs a payout with the next nonce of its treasury and stores it as `reserved`: the nonce is
   * taken (the payouts of one pass get consecutive ones) but the payout worker sends and follows it.
   */
  reserve(em: EntityManager, req: SendRequest, nodePending: number): Promise<EvmSendRow> {
    return this.store(em, req, nodePending, 'reserved');
  }

  /**
   * A replacement: the same nonce and payment (or `amount`, a native sweep paying its higher gas)
   * at `fees`, its row rewritten in its status (a payout's stays reserved; a queued send's wait
   * before another replacement starts at `sentHeight`). Every earlier candidate is kept.
   */
  async resign(em: EntityManager, row: EvmSendRow, fees: EvmFees, opts: { amount?: bigint; sentHeight?: number } = {}): Promise<EvmSendRow> {
    const amount = opts.amount ?? BigInt(row.amount);
    const signed = await this.signOne(
      {
        ...this.spendOf(row.coin_id, row.to_address, amount),
        chainId: this.deps.chain.chain_id!,
        path: row.from_path,
        nonce: row.nonce,
        gasLimit: BigInt(row.gas_limit),
        ...fees,
      },
      rowPurpose(row),
    );
    const patch: Partial<EvmSendRow> = {
      txid: signed.txid,
      raw: this.deps.sealer.seal(signed.raw, cells.evmSend(row.id)),
      candidate_txids: JSON.stringify([...candidatesOf(row), signed.txid]),
      amount: amount.toString(),
      max_fee_per_gas: fees.maxFeePerGas.toString(),
      max_priority_fee_per_gas: fees.maxPriorityFeePerGas.toString(),
      updated_at: iso(this.deps.clock.now()),
    };
    if (opts.sentHeight !== undefined) patch.sent_height = opts.sentHeight;
    if (!(await updateSend(em, row, patch))) throw new Error(`evm send ${row.id} changed meanwhile`);
    return { ...row, ...patch, raw: signed.raw };
  }

  /**
   * `coinkeep payouts cancel` (PRODUCT §14): the send's nonce signed anew as a 0-value transfer from
   * its sender to itself, at `fees`: whichever of its candidates is mined uses the nonce, and this
   * one pays nobody. The row keeps what it was sent for; its txid is the cancel's.
   */
  async cancel(em: EntityManager, row: EvmSendRow, fees: EvmFees, gasLimit = NATIVE_TRANSFER_GAS): Promise<EvmSendRow> {
    const signed = await this.signOne(
      { to: row.from_address, value: 0n, chainId: this.deps.chain.chain_id!, path: row.from_path, nonce: row.nonce, gasLimit, ...fees },
      { ...rowPurpose(row), kind: 'cancel' },
    );
    const patch: Partial<EvmSendRow> = {
      txid: signed.txid,
      raw: this.deps.sealer.seal(signed.raw, cells.evmSend(row.id)),
      candidate_txids: JSON.stringify([...candidatesOf(row), signed.txid]),
      max_fee_per_gas: fees.maxFeePerGas.toString(),
      max_priority_fee_per_gas: fees.maxPriorityFeePerGas.toString(),
      updated_at: iso(this.deps.clock.now()),
    };
    if (!(await updateSend(em, row, patch))) throw new Error(`evm send ${row.id} changed meanwhile`);
    return { ...row, ...patch, raw: signed.raw };
  }

  private async store(em: EntityManager, req: SendRequest, nodePending: number, status: 'signed' | 'reserved'): Promise<EvmSendRow> {
    const nonce = await nextNonce(em, this.chainId, req.from.address, nodePending);
    const row = this.rowOf(req, nonce, await this.signOne(this.spend(req, nonce), purposeOf(req)), status);
    await insertSend(em, { ...row, raw: this.deps.sealer.seal(row.raw, cells.evmSend(row.id)) });
    return row;
  }

  private rowOf(req: SendRequest, nonce: number, signed: SentTransaction, status: 'signed' | 'reserved'): EvmSendRow {
    const now = this.deps.clock.now();
    return {
      id: newTimeOrderedId(now.getTime()),
      chain_id: this.chainId,
      kind: req.kind,
      from_address: req.from.address,
      from_path: req.from.path,
      nonce,
      to_address: req.to,
      coin_id: req.coinId,
      amount: req.amount.toString(),
      account_id: req.accountId ?? null,
      withdrawal_id: req.withdrawalId ?? null,
      after_id: req.afterId ?? null,
      txid: signed.txid,
      raw: signed.raw,
      candidate_txids: JSON.stringify([signed.txid]),
      gas_limit: req.gasLimit.toString(),
      max_fee_per_gas: req.fees.maxFeePerGas.toString(),
      max_priority_fee_per_gas: req.fees.maxPriorityFeePerGas.toString(),
      status,
      sent_height: null,
      block_height: null,
      block_hash: null,
      fee_paid: null,
      succeeded: null,
      booked_at: null,
      expiration: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
  }

  /** One pass: the stored sends that are ready go to the node together; the ones out there are followed. */
  async pass(signal?: AbortSignal): Promise<void> {
    await this.track(signal);
    await this.broadcastReady(signal);
  }

  /**
   * Hands every stored `signed` send whose predecessor (a top-up) is mined and succeeded to the
   * node, all at once. A refusal that says the nonce is used: the send is dropped, unless one of its
   * own candidates is what used it (a restart after the broadcast). A node that was not reached:
   * tried again next pass.
   */
  async broadcastReady(signal?: AbortSignal): Promise<number> {
    const { store, node } = this.deps;
    const signed = (await sendsWithStatus(store.read, this.chainId, ['signed'])).map((r) => this.opened(r));
    const afterIds = [...new Set(signed.flatMap((r) => (r.after_id === null ? [] : [r.after_id])))];
    const befores = new Map((await sendsById(store.read, afterIds)).map((r) => [r.id, r]));
    // A predecessor sent but not yet seen mined (the pass follows it after this): the node is asked.
    const unseen = [...befores.values()].filter((r) => r.status === 'broadcast' && r.block_height === null);
    const unseenReceipts = await this.receiptsOf(unseen, signal);
    const seen = new Set(unseen.filter((_, i) => unseenReceipts[i]!.some((c) => c.receipt?.succeeded)).map((r) => r.id));
    const ready: EvmSendRow[] = [];
    const dropped: EvmSendRow[] = [];
    for (const row of signed) {
      if (row.after_id === null) {
        ready.push(row);
        continue;
      }
      const after = befores.get(row.after_id);
      if (!after || after.status === 'dropped' || (after.block_height !== null && after.succeeded === 0)) dropped.push(row);
      else if ((after.block_height !== null && after.succeeded === 1) || seen.has(after.id)) ready.push(row);
    }
    if (dropped.length > 0)
      await store.write(async (em) => {
        for (const row of dropped) await this.drop(em, row, 'the gas top-up before it failed', true);
      });
    if (ready.length === 0) return 0;
    // Top-ups first: the sends that wait for them go out as soon as they are mined. (Each sender's nonces stay in order.)
    ready.sort((a, b) => Number(b.kind === 'topup') - Number(a.kind === 'topup'));
    const tip = await node.tip(signal);
    const results = await this.broadcastInLanes(ready, signal);
    let sent = 0;
    // What the node took, marked in one transaction.
    const accepted = ready.filter((_, i) => 'txid' in results[i]!);
    if (accepted.length > 0) {
      await store.write(async (em) => {
        const now = iso(this.deps.clock.now());
        for (const row of accepted) {
          const moved = { ...row, status: 'broadcast' as const, sent_height: tip.height, updated_at: now };
          if (await updateSend(em, row, { status: moved.status, sent_height: moved.sent_height, updated_at: moved.updated_at })) {
            sent++;
            await this.owner(row).onBroadcast?.(em, moved);
          }
        }
      });
    }
    for (const [i, row] of ready.entries()) {
      const result = results[i]!;
      if ('txid' in result) continue;
      if (UNREACHED.test(result.error)) continue;
      // Ours already? (broadcast before a restart, and mined or waiting since)
      const mined = (await node.receipts(candidatesOf(row), signal)).some((r) => r !== null) || (await this.seenMined([row])).has(row.id);
      const status = mined ? null : await node.sentStatus(row, signal);
      if (mined || status?.state === 'mempool') {
        await store.write((em) => updateSend(em, row, { status: 'broadcast', sent_height: tip.height, updated_at: iso(this.deps.clock.now()) }));
        continue;
      }
      const taken = evmNonceTaken(result.error);
      const reason = taken
        ? `nonce ${row.nonce} of ${row.from_address} was taken by another transaction`
        : `the node refused the transaction: ${result.error.replace(/^evm node [^:]*: /, '')}`;
      this.deps.logger.warn('evm send refused', { chain: this.chainId, kind: row.kind, txid: row.txid, reason });
      await store.write((em) => this.drop(em, row, reason, !taken));
    }
    return sent;
  }

  /** Per row, the receipt of each of its candidates (null: not mined on the node's chain), asked in one batched request. */
  private async receiptsOf(rows: readonly EvmSendRow[], signal?: AbortSignal): Promise<Array<Array<{ txid: string; receipt: EvmReceipt | null }>>> {
    if (rows.length === 0) return [];
    const candidates = rows.map(candidatesOf);
    const receipts = await this.deps.node.receipts(candidates.flat(), signal);
    let at = 0;
    return candidates.map((txids) => txids.map((txid) => ({ txid, receipt: receipts[at++] ?? null })));
  }

  /**
   * The node's answer to each of `rows`, handed over in up to BROADCAST_LANES requests side by side
   * (a node checks the transactions of parallel requests in parallel): each sender's transactions
   * in one lane, in the order given, so its nonces reach the node in turn.
   */
  private async broadcastInLanes(rows: readonly EvmSendRow[], signal?: AbortSignal): Promise<Array<{ txid: string } | { error: string }>> {
    const lanes: number[][] = Array.from({ length: BROADCAST_LANES }, () => []);
    const laneOf = new Map<string, number[]>();
    rows.forEach((row, i) => {
      let lane = laneOf.get(row.from_address);
      if (!lane) laneOf.set(row.from_address, (lane = lanes.reduce((a, b) => (b.length < a.length ? b : a))));
      lane.push(i);
    });
    const results: Array<{ txid: string } | { error: string }> = new Array(rows.length);
    await Promise.all(
      lanes
        .filter((lane) => lane.length > 0)
        .map(async (lane) => {
          const answers = await this.deps.node.broadcastAll(
            lane.map((i) => rows[i]!.raw),
            signal,
          );
          lane.forEach((i, k) => (results[i] = answers[k]!));
        }),
    );
    return results;
  }

  /**
   * Follows the broadcast sends: a receipt of any of a send's candidates marks it mined (final at
   * the chain's confirmations); a mined one whose receipt is gone was reorganised away and is
   * watched again; one the node does not know is broadcast again; one whose nonce another
   * transaction took is dropped; one waiting in the mempool `replaceAfterBlocks` after it was sent
   * is replaced (same nonce, fees bumped). What the node is asked goes in batched requests.
   */
  async track(signal?: AbortSignal): Promise<void> {
    const { store, node, chain } = this.deps;
    const out = (await sendsWithStatus(store.read, this.chainId, ['broadcast'])).map((r) => this.opened(r));
    if (out.length === 0) return;
    const tip = await node.tip(signal);
    const receipts = await this.receiptsOf(out, signal);
    const unmined: EvmSendRow[] = [];
    const mined: Array<{ row: EvmSendRow; patch: Partial<EvmSendRow>; final: boolean }> = [];
    const now = iso(this.deps.clock.now());
    for (const [i, row] of out.entries()) {
      const found = receipts[i]!.find((c) => c.receipt !== null);
      if (!found) {
        unmined.push(row);
        continue;
      }
      const r = found.receipt!;
      // A token send that did not deliver (a token that returns false, or takes a fee) failed, as a reverted one did.
      const short = r.succeeded ? undelivered(this.deps.catalog, row, r.transfers, addressDigits) : null;
      const final = tip.height - r.height + 1 >= Math.max(1, chain.confirmations);
      if (short && final)
        this.deps.logger.warn('evm send mined without delivering', { chain: this.chainId, kind: row.kind, txid: found.txid, reason: short.reason });
      const patch = {
        txid: found.txid,
        block_height: r.height,
        block_hash: r.blockHash,
        succeeded: r.succeeded && !short ? 1 : 0,
        fee_paid: r.fee.toString(),
        updated_at: now,
      };
      mined.push({ row, patch, final });
    }
    // Every mined send of the pass in one transaction, each final one handed to its owner there.
    if (mined.length > 0) {
      await store.write(async (em) => {
        for (const { row, patch, final } of mined) {
          if (!(await updateSend(em, row, final ? { ...patch, status: 'mined' } : patch))) continue;
          if (final) await this.owner(row).onFinal(em, { ...row, ...patch, status: 'mined' });
        }
      });
    }
    if (unmined.length === 0) return;
    // Reorganised away: watched again, the wait before a replacement from now.
    const back = unmined.filter((r) => r.block_height !== null);
    if (back.length > 0) {
      await store.write(async (em) => {
        for (const row of back) {
          const patch = { block_height: null, block_hash: null, succeeded: null, fee_paid: null, sent_height: tip.height, updated_at: now };
          if (await updateSend(em, row, patch)) {
            Object.assign(row, patch);
            await this.owner(row).onUnmined?.(em, { ...row });
          }
        }
      });
    }
    // What the node knows of the rest, each at most every STATE_CHECK_MS (a busy pool holds many for a while).
    const clockNow = this.deps.clock.now().getTime();
    const waiting = new Set(unmined.map((r) => r.id));
    for (const id of this.checkedAt.keys()) if (!waiting.has(id)) this.checkedAt.delete(id);
    const asked = unmined.filter((r) => back.includes(r) || clockNow - (this.checkedAt.get(r.id) ?? Date.parse(r.updated_at)) >= STATE_CHECK_MS);
    if (asked.length === 0) return;
    for (const r of asked) this.checkedAt.set(r.id, clockNow);
    await this.follow(asked, tip.height, signal);
  }

  /** The node's knowledge of broadcast sends without a receipt: rebroadcast the lost, drop the displaced, replace the stuck. */
  private async follow(unmined: EvmSendRow[], tip: number, signal?: AbortSignal): Promise<void> {
    const { store, node } = this.deps;
    const states = await node.sendStates(
      unmined.map((r) => ({ txid: r.txid, from: r.from_address, nonce: r.nonce })),
      signal,
    );
    const lost = unmined.filter((_, i) => states[i] === 'unknown');
    if (lost.length > 0) {
      const results = await node.broadcastAll(
        lost.map((r) => r.raw),
        signal,
      );
      for (const [i, r] of results.entries()) {
        if (!('error' in r)) continue;
        const row = lost[i]!;
        this.deps.logger.warn('evm rebroadcast refused', { chain: this.chainId, txid: row.txid, error: r.error });
        // Waiting for a lower base fee (replaced if it waits long), the node not reached, or its nonce
        // used meanwhile (the next pass looks again): kept. Otherwise it can never be mined as it is
        // (what it spends is gone: a reorganisation took the deposit away).
        if (UNREACHED.test(r.error) || FEE_TOO_LOW.test(r.error) || evmNonceTaken(r.error)) continue;
        await store.write((em) => this.drop(em, row, `the node refused it again: ${r.error.replace(/^evm node [^:]*: /, '')}`, true));
      }
    }
    const conflicted = unmined.filter((_, i) => states[i] === 'conflicted');
    if (conflicted.length > 0) {
      // Mined since the receipts were read (an earlier candidate, say): the next pass sees it.
      const late = await this.receiptsOf(conflicted, signal);
      const scanned = await this.seenMined(conflicted);
      for (const [i, row] of conflicted.entries()) {
        if (late[i]!.some((c) => c.receipt !== null)) continue;
        // The chain core saw one of its candidates in a block: the nonce is its own, and the node's
        // lookups by hash do not know it (a provider's backend behind, its index lost). Kept.
        if (scanned.has(row.id)) continue;
        const taken = await this.nonceTakenBy(row, tip, signal);
        if (taken === 'kept') continue;
        if (taken !== 'unused') {
          await store.write((em) => this.drop(em, row, `nonce ${row.nonce} of ${row.from_address} was taken by ${taken.txid} in block ${taken.height}`, false));
          continue;
        }
        // Not used in a block: by an earlier candidate of ours still waiting in the pool (a
        // replacement stored, then a restart before it was sent), which the latest replaces, or by
        // another transaction. A node that cannot answer now (rate limited, busy, unreachable) said
        // nothing of it; one that says the nonce is used now had it mined since: the next pass reads the block.
        const again = await node.broadcast(row.raw, signal).then(
          () => null,
          (err: unknown) => (err instanceof NodeUnavailable ? null : String(err)),
        );
        if (again !== null && !UNREACHED.test(again) && !evmNonceTaken(again))
          await store.write((em) => this.drop(em, row, `nonce ${row.nonce} of ${row.from_address} was taken by another transaction`, false));
      }
    }
    // Waiting, or put out of the mempool (a node drops what pays less than the base fee): replaced once its fees are too low.
    const waited = unmined.filter((r, i) => states[i] !== 'conflicted' && r.sent_height !== null && tip - r.sent_height >= this.deps.replaceAfterBlocks);
    if (waited.length > 0) await this.replaceStuck(waited, tip, signal);
  }

  /**
   * Replaces sends not mined too long after they were sent, once the node asks more than they
   * offer: the same nonce and payment at the quote (replacementFees: both caps bumped by the
   * replacement rule, never above the ceiling), stored before it is broadcast, every earlier
   * candidate kept. A native sweep moves its whole balance, so the higher gas comes out of what it
   * moves; a token sweep's address must hold the higher gas first (its owner asks the gas station:
   * the replacement waits for the next passes); a top-up's gas station pays it.
   */
  private async replaceStuck(waited: EvmSendRow[], tip: number, signal?: AbortSignal): Promise<void> {
    const { store, node, ceiling } = this.deps;
    const quote = await evmQuote(node, signal);
    // One that offers what the chain asks waits its turn (a busy mempool): a higher fee would not buy it a place sooner.
    const stuck = waited.flatMap((row) => {
      const fees = replacementFees(ceiling, { maxFeePerGas: BigInt(row.max_fee_per_gas), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas) }, quote);
      return fees ? [{ row, fees }] : [];
    });
    if (stuck.length === 0) return;
    const balances = await node.balances(
      stuck.map((s) => s.row.from_address),
      'native',
      'latest',
      signal,
    );
    const short: Array<{ row: EvmSendRow; wei: bigint }> = [];
    const replaced = await store.write(async (em) => {
      short.length = 0;
      const out: EvmSendRow[] = [];
      for (const [i, { row, fees }] of stuck.entries()) {
        const old = { maxFeePerGas: BigInt(row.max_fee_per_gas), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas) };
        const gas = BigInt(row.gas_limit);
        const extra = gas * (fees.maxFeePerGas - old.maxFeePerGas);
        let amount = BigInt(row.amount);
        const native = this.deps.catalog.coin(row.coin_id)?.asset === 'native';
        if (row.kind === 'sweep' && native) {
          amount -= extra;
          // Not worth it any more: it waits at its fee.
          if (amount <= extra) continue;
        } else if (row.kind === 'sweep') {
          // What the address holds beyond the replaced send's most (its L1 data fee reserve too, on OP-stack chains).
          const spare = balances[i]! - maxCost(quote, gas, old.maxFeePerGas);
          if (spare < extra) {
            short.push({ row, wei: extra - spare });
            continue;
          }
        }
        out.push(await this.resign(em, row, fees, { amount, sentHeight: tip }));
      }
      return out;
    });
    const topUpFees = short.length > 0 ? newFees(ceiling, 'sweeps', quote) : null;
    if (topUpFees) for (const { row, wei } of short) await this.owner(row).onShort?.(row, wei, topUpFees, signal);
    if (replaced.length === 0) return;
    const results = await node.broadcastAll(
      replaced.map((r) => r.raw),
      signal,
    );
    replaced.forEach((row, i) => {
      const r = results[i]!;
      if ('error' in r) this.deps.logger.warn('evm replacement refused', { chain: this.chainId, kind: row.kind, txid: row.txid, error: r.error });
      else this.deps.logger.info('evm send replaced with a higher fee', { chain: this.chainId, kind: row.kind, nonce: row.nonce, txid: row.txid });
    });
  }

  /**
   * The chain core's word on the wallet's own spends (TransferHandler of outgoing transfers): a
   * final send whose transaction was reorganised away is followed again (back to `broadcast`, its
   * owner told, so what was booked of it is taken back): mined again, it is final again; lost for
   * good (what it spent left the chain with it), the node refuses it and it is dropped.
   */
  async onTransfer(em: EntityManager, transfer: ChainTransferRow): Promise<void> {
    if (transfer.chain_id !== this.chainId || transfer.direction !== 'outgoing' || transfer.status !== 'reverted') return;
    const [found] = await rawQuery<EvmSendRow>(
      em,
      `SELECT * FROM account_sends WHERE chain_id = ${placeholder(em, 1)} AND txid = ${placeholder(em, 2)} AND status = 'mined'`,
      [this.chainId, transfer.txid],
    );
    if (!found) return;
    const row = normalise(found);
    const patch = {
      status: 'broadcast' as const,
      block_height: null,
      block_hash: null,
      succeeded: null,
      sent_height: row.block_height,
      updated_at: iso(this.deps.clock.now()),
    };
    if (!(await updateSend(em, row, patch))) return;
    await this.owner(row).onUnmined?.(em, { ...row, ...patch, succeeded: row.succeeded });
    this.deps.logger.warn('a final evm send left the chain (reorganisation): followed again', { chain: this.chainId, kind: row.kind, txid: row.txid });
  }

  /**
   * Whose transaction used the nonce of `row` (the node's count passed it, no receipt), read from
   * the block bodies: the chain core may be behind the node, and does not watch the gas station.
   * Another's in a final block: that transaction (proof: the send is dropped). Its own there, or
   * the node cannot say (used before the blocks looked at, no state of them): `kept`. Not used in
   * a block yet (only in the pool): `unused`.
   */
  private async nonceTakenBy(row: EvmSendRow, tip: number, signal?: AbortSignal): Promise<{ txid: string; height: number } | 'kept' | 'unused'> {
    const holder = await this.deps.node
      .nonceHolder(row.from_address, row.nonce, Math.max(0, (row.sent_height ?? tip) - NONCE_LOOKBACK), tip, signal)
      .catch((err: unknown) => {
        signal?.throwIfAborted();
        this.deps.logger.warn('evm nonce holder not read', { chain: this.chainId, txid: row.txid, error: String(err) });
        return undefined;
      });
    if (holder === null) return 'unused';
    if (holder === undefined || holder.txid === null || candidatesOf(row).includes(holder.txid)) return 'kept';
    if (tip - holder.height + 1 < Math.max(1, this.deps.chain.confirmations)) return 'kept';
    return { txid: holder.txid, height: holder.height };
  }

  /** The ids of `rows` one of whose candidates the chain core saw mined (minedOwnSpends), whatever the node's lookups by hash answer. */
  private async seenMined(rows: readonly EvmSendRow[]): Promise<Set<string>> {
    const byTxid = new Map(rows.flatMap((r) => candidatesOf(r).map((txid) => [txid, r.id] as const)));
    const mined = await minedOwnSpends(this.deps.store.read, this.chainId, [...byTxid.keys()]);
    return new Set([...mined.keys()].flatMap((txid) => byTxid.get(txid) ?? []));
  }

  /** A stored row with its signed bytes opened. */
  private opened(row: EvmSendRow): EvmSendRow {
    return { ...row, raw: this.deps.sealer.open(row.raw, cells.evmSend(row.id)) };
  }

  /** The send will never be mined; `nonceFree`: nor did another transaction take its nonce (the gap is filled when later sends wait behind it). */
  private async drop(em: EntityManager, row: EvmSendRow, reason: string, nonceFree: boolean): Promise<void> {
    if (!(await updateSend(em, row, { status: 'dropped', updated_at: iso(this.deps.clock.now()) }))) return;
    await this.owner(row).onDropped(em, { ...row, status: 'dropped' }, reason);
    if (nonceFree) await this.fillGap(em, row);
  }

  /**
   * A nonce given back (its send will never be mined, and no other transaction took it) while
   * later sends of the same address are stored: those can never be mined until it is used, so a
   * filler takes it: a transfer of nothing from the address to itself, at the given-back send's
   * fees bumped, at most the ceiling (replaced like any send if it waits). Signed and stored here, sent by the next pass.
   * Whether one was.
   */
  async fillGap(
    em: EntityManager,
    row: Pick<EvmSendRow, 'id' | 'raw' | 'from_address' | 'from_path' | 'nonce' | 'max_fee_per_gas' | 'max_priority_fee_per_gas' | 'account_id'>,
  ): Promise<boolean> {
    const p = (i: number) => placeholder(em, i);
    const [later] = await rawQuery<{ live: number | string; here: number | string }>(
      em,
      `SELECT SUM(CASE WHEN nonce > ${p(1)} THEN 1 ELSE 0 END) AS live, SUM(CASE WHEN nonce = ${p(2)} THEN 1 ELSE 0 END) AS here ` +
        `FROM account_sends WHERE chain_id = ${p(3)} AND from_address = ${p(4)} AND status <> 'dropped'`,
      [row.nonce, row.nonce, this.chainId, row.from_address],
    );
    if (Number(later?.live ?? 0) === 0 || Number(later?.here ?? 0) > 0) return false;
    // Of the given-back send's type: a chain without EIP-1559 takes type 0 only.
    const raw = row.raw.startsWith('0x') ? row.raw : this.deps.sealer.open(row.raw, cells.evmSend(row.id));
    const old = { maxFeePerGas: BigInt(row.max_fee_per_gas), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas), legacy: !raw.startsWith('0x02') };
    const fees = fillerFees(old, this.deps.ceiling.max);
    const req: SendRequest = {
      kind: 'filler',
      from: { address: row.from_address, path: row.from_path },
      to: row.from_address,
      coinId: coinId(this.chainId, NATIVE_ASSET),
      amount: 0n,
      // A native transfer's gas by the chain's fee model (Arbitrum's estimate, from the last quote).
      gasLimit: nativeGas(lastCosts(this.deps.node)),
      fees,
      accountId: row.account_id,
    };
    const filler = this.rowOf(req, row.nonce, await this.signOne(this.spend(req, row.nonce), purposeOf(req)), 'signed');
    await insertSend(em, { ...filler, raw: this.deps.sealer.seal(filler.raw, cells.evmSend(filler.id)) });
    this.deps.logger.warn('a nonce given back with later sends waiting: a filler takes it', {
      chain: this.chainId,
      address: row.from_address,
      nonce: row.nonce,
    });
    return true;
  }

  private owner(row: EvmSendRow): EvmSendOwner {
    const owner = this.owners.get(row.kind);
    if (!owner) throw new Error(`no owner of ${row.kind} sends`);
    return owner;
  }

  /** `to`, `value` and `data` of a payment of `amount` base units of `coinId` to `payee`. */
  private spendOf(coinId: string, payee: string, amount: bigint): Pick<EvmSpend, 'to' | 'value' | 'data'> {
    const coin = this.deps.catalog.coin(coinId);
    if (!coin || coin.chain_id !== this.chainId) throw new Error(`coin ${coinId} is not of ${this.chainId}`);
    return coin.asset === 'native' ? { to: payee, value: amount } : { to: coin.asset, value: 0n, data: erc20TransferData(payee, amount) };
  }
}

/**
 * Stores batches of signed sends one after another, each in a transaction of its own, and hands
 * each to the node (EvmSendQueue.broadcastReady) once stored, while the caller signs the next: a
 * batch is stored only after the node has answered for the one before.
 */
export class SendRelay {
  private sending: Promise<unknown> | null = null;

  constructor(
    private readonly queue: EvmSendQueue,
    private readonly store: Store,
    private readonly signal?: AbortSignal,
  ) {}

  /** Stores `rows` (and whatever `also` writes with them); `send`: hands them to the node. */
  async add(rows: readonly EvmSendRow[], also?: (em: EntityManager) => Promise<void>, send = true): Promise<void> {
    await this.settle();
    await this.store.write(async (em) => {
      await this.queue.storeAll(em, rows);
      await also?.(em);
    });
    if (!send) return;
    const sending = this.queue.broadcastReady(this.signal);
    // Its failure is the caller's at `settle` (never an unhandled rejection meanwhile).
    sending.catch(() => undefined);
    this.sending = sending;
  }

  /** Waits for the node's answer to the last batch handed to it. */
  async settle(): Promise<void> {
    const sending = this.sending;
    this.sending = null;
    await sending;
  }

  /** After a failure: waits for what was handed to the node, whatever its answer. */
  async abandon(): Promise<void> {
    await this.sending?.catch(() => undefined);
    this.sending = null;
  }
}

export const candidatesOf = (row: Pick<EvmSendRow, 'candidate_txids'>): string[] => JSON.parse(row.candidate_txids) as string[];

/** What a send is for, as the signer reads it: its kind, its account and (a payout) its withdrawal. */
const purposeOf = (req: SendRequest): SignPurpose => ({
  kind: req.kind,
  account_id: req.accountId ?? null,
  withdrawal_ids: req.withdrawalId ? [req.withdrawalId] : [],
});

const rowPurpose = (row: EvmSendRow): SignPurpose => ({
  kind: row.kind,
  account_id: row.account_id,
  withdrawal_ids: row.withdrawal_id ? [row.withdrawal_id] : [],
});
