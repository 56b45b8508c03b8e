import type { EntityManager } from 'typeorm';
import { NATIVE_ASSET, type Catalog } from '../../../catalog/coins';
import { trc20TransferData, tronHexAddress, type TronContract, type TronRefBlock } from '../transaction';
import type { RemoteSigner } from '../../../wallet/signer-client';
import type { ChainConfig } from '../../../config/schema';
import type { Sealer } from '../../../db/seal';
import { cells } from '../../../db/sealed-values';
import type { Store } from '../../../db/store';
import { iso, type Clock } from '../../../shared/clock';
import { newTimeOrderedId } from '../../../shared/ids';
import type { Logger } from '../../../shared/logger';
import type { EvmSendOwner } from '../../evm/payouts/send-queue';
import { undelivered } from '../../../payouts/token-delivery';
import { tronDigits } from '../derive';
import { insertSend, nextNonce, sendById, sendsWithStatus, updateSend, type EvmSendKind, type EvmSendRow } from '../../evm/payouts/send-store';
import type { TronNodeApi } from './tron-node-api';

/** A Tron transaction of the wallet's to sign and store. */
export interface TronSendRequest {
  kind: EvmSendKind;
  from: { address: string; path: string };
  /** The payee (a token's recipient, not its contract), or the address energy is delegated to or taken back from. */
  to: string;
  /** The coin moved (TRX for a top-up, stake or delegation: `amount` is then the TRX staked or delegated). */
  coinId: string;
  /** Base units. */
  amount: bigint;
  /** The most the chain may burn for it from a wallet address (sun): what `ledger reconcile` counts as in flight. 0 for the gas station's own. */
  maxBurn: bigint;
  /** A token call's fee_limit (sun). */
  feeLimit?: bigint;
  accountId?: string | null;
  /** A send this one belongs to (an undelegation names its delegation). */
  afterId?: string | null;
}

/**
 * The wallet's own Tron transactions on one chain (sweeps, the gas station's activations, top-ups,
 * stakes and energy delegations), from signing to final, in the account chains' send store
 * (`account_sends`): each is signed offline on the head block and stored with its bytes in the caller's
 * transaction before anything is broadcast; the stored bytes are what is broadcast, again whenever
 * the node does not know them. A Tron transaction has no nonce: one not mined once a block at the
 * chain's confirmations is past its expiration can never be mined, and is dropped (its owner plans
 * again). Owners (EvmSendOwner, by kind) say what a send means.
 */
export class TronSendQueue {
  private readonly owners = new Map<EvmSendKind, EvmSendOwner>();

  constructor(
    private readonly deps: {
      chain: ChainConfig;
      node: TronNodeApi;
      store: Store;
      catalog: Catalog;
      signer: Pick<RemoteSigner, 'signTron'>;
      sealer: Sealer;
      clock: Clock;
      logger: Logger;
    },
  ) {}

  own(kind: EvmSendKind, owner: EvmSendOwner): this {
    this.owners.set(kind, owner);
    return this;
  }

  /** Signs `req` on `ref` and stores it (`signed`) in the caller's transaction; the next pass broadcasts it. */
  async sign(em: EntityManager, req: TronSendRequest, ref: TronRefBlock): Promise<EvmSendRow> {
    // The signer builds the transaction from these fields itself and signs it once it matches what the send is for.
    const signed = await this.deps.signer.signTron(
      this.deps.chain.id,
      { path: req.from.path, contract: this.contractOf(req), ref, expiresInMs: this.deps.chain.tron!.expiration_ms, feeLimit: req.feeLimit },
      { kind: req.kind, account_id: req.accountId ?? null, withdrawal_ids: [] },
    );
    const now = this.deps.clock.now();
    const row: EvmSendRow = {
      id: newTimeOrderedId(now.getTime()),
      chain_id: this.deps.chain.id,
      kind: req.kind,
      from_address: req.from.address,
      from_path: req.from.path,
      nonce: await nextNonce(em, this.deps.chain.id, req.from.address, 0),
      to_address: req.to,
      coin_id: req.coinId,
      amount: req.amount.toString(),
      account_id: req.accountId ?? null,
      withdrawal_id: null,
      after_id: req.afterId ?? null,
      txid: signed.txid,
      raw: signed.raw,
      candidate_txids: JSON.stringify([signed.txid]),
      gas_limit: req.maxBurn.toString(),
      max_fee_per_gas: '1',
      max_priority_fee_per_gas: '0',
      status: 'signed',
      sent_height: null,
      block_height: null,
      block_hash: null,
      fee_paid: null,
      succeeded: null,
      booked_at: null,
      expiration: String(signed.expiration),
      created_at: iso(now),
      updated_at: iso(now),
    };
    await insertSend(em, { ...row, raw: this.deps.sealer.seal(row.raw, cells.evmSend(row.id)) });
    this.deps.logger.info('tron transaction signed', { chain: this.deps.chain.id, kind: req.kind, txid: signed.txid });
    return row;
  }

  /** One pass: the sends out there are followed, then the stored ones go to the node. */
  async pass(signal?: AbortSignal): Promise<void> {
    await this.track(signal);
    await this.broadcastReady(signal);
  }

  /** Hands every stored `signed` send to the node; one it refuses as expired (or for good) is dropped. */
  async broadcastReady(signal?: AbortSignal): Promise<void> {
    const { store, node } = this.deps;
    const rows = (await sendsWithStatus(store.read, this.deps.chain.id, ['signed'])).map((r) => this.opened(r));
    if (rows.length === 0) return;
    const head = await node.head(signal);
    for (const row of rows) {
      let got: Awaited<ReturnType<TronNodeApi['send']>>;
      try {
        got = await node.send(row.raw, signal);
      } catch (err) {
        if (signal?.aborted) throw err;
        this.deps.logger.warn('tron send not handed to the node', { chain: this.deps.chain.id, txid: row.txid, error: String(err) });
        continue;
      }
      if (got.answer === 'known' || (await node.transactionInfo(row.txid, signal)) !== null || (await node.pending(row.txid, signal))) {
        await store.write((em) => updateSend(em, row, { status: 'broadcast', sent_height: head.height, updated_at: iso(this.deps.clock.now()) }));
        continue;
      }
      // A busy node, or a check that may pass later, proves nothing until the transaction's expiration is final.
      if (got.answer === 'unsure' && !(await expiredForGood(node, this.deps.chain.confirmations, head.height, Number(row.expiration), signal))) continue;
      // Refused before it spread, or expired: it can never be mined; its owner plans again.
      this.deps.logger.warn('tron send refused', { chain: this.deps.chain.id, kind: row.kind, txid: row.txid, code: got.code, reason: got.message });
      await store.write((em) => this.drop(em, row, `the node refused the transaction: ${got.code} ${got.message}`.trim()));
    }
  }

  /**
   * Follows the broadcast sends: mined (final at the chain's confirmations, handed to its owner);
   * back from a dropped block (watched again); unknown to the node (broadcast again), or expired
   * for good (dropped). Returns the senders of the sends that became final in this pass.
   */
  async track(signal?: AbortSignal): Promise<Set<string>> {
    const { store, node, chain } = this.deps;
    const finalFrom = new Set<string>();
    const out = (await sendsWithStatus(store.read, chain.id, ['broadcast'])).map((r) => this.opened(r));
    if (out.length === 0) return finalFrom;
    const head = await node.head(signal);
    for (const row of out) {
      const info = await node.transactionInfo(row.txid, signal);
      const now = iso(this.deps.clock.now());
      if (info) {
        const final = head.height - info.height + 1 >= Math.max(1, chain.confirmations);
        // A token send that did not deliver (a token that returns false, or takes a fee) failed, as a reverted one did.
        const short = info.succeeded ? undelivered(this.deps.catalog, row, info.transfers, tronDigits) : null;
        if (short && final)
          this.deps.logger.warn('tron send mined without delivering', { chain: chain.id, kind: row.kind, txid: row.txid, reason: short.reason });
        const patch: Partial<EvmSendRow> = {
          block_height: info.height,
          succeeded: info.succeeded && !short ? 1 : 0,
          fee_paid: info.fee.toString(),
          updated_at: now,
        };
        await store.write(async (em) => {
          if (!(await updateSend(em, row, final ? { ...patch, status: 'mined' } : patch))) return;
          if (!final) return;
          await this.owner(row).onFinal(em, { ...row, ...patch, status: 'mined' });
          finalFrom.add(row.from_address);
        });
        continue;
      }
      if (row.block_height !== null) await store.write((em) => updateSend(em, row, { block_height: null, succeeded: null, fee_paid: null, updated_at: now }));
      if (await node.pending(row.txid, signal)) continue;
      if (await expiredForGood(node, chain.confirmations, head.height, Number(row.expiration), signal)) {
        await store.write((em) => this.drop(em, row, 'the transaction expired before it was mined'));
        continue;
      }
      await node
        .send(row.raw, signal)
        .catch((err: unknown) => this.deps.logger.warn('tron rebroadcast refused', { chain: chain.id, txid: row.txid, error: String(err) }));
    }
    return finalFrom;
  }

  /** Signed sends not yet final, to or from `address` (a deposit address or treasury with something on its way). */
  async busy(em: EntityManager, address: string): Promise<EvmSendRow[]> {
    return (await sendsWithStatus(em, this.deps.chain.id, ['signed', 'broadcast'])).filter((r) => r.from_address === address || r.to_address === address);
  }

  async byId(em: EntityManager, id: string): Promise<EvmSendRow | null> {
    return sendById(em, id);
  }

  private contractOf(req: TronSendRequest): TronContract {
    const owner_address = tronHexAddress(req.from.address);
    switch (req.kind) {
      case 'stake':
        return { type: 'FreezeBalanceV2Contract', value: { owner_address, frozen_balance: Number(req.amount), resource: 'ENERGY' } };
      case 'delegate':
        return {
          type: 'DelegateResourceContract',
          value: { owner_address, receiver_address: tronHexAddress(req.to), balance: Number(req.amount), resource: 'ENERGY' },
        };
      case 'undelegate':
        return {
          type: 'UnDelegateResourceContract',
          value: { owner_address, receiver_address: tronHexAddress(req.to), balance: Number(req.amount), resource: 'ENERGY' },
        };
      default: {
        const coin = this.deps.catalog.coin(req.coinId);
        if (!coin || coin.chain_id !== this.deps.chain.id) throw new Error(`coin ${req.coinId} is not of ${this.deps.chain.id}`);
        if (coin.asset === NATIVE_ASSET)
          return { type: 'TransferContract', value: { owner_address, to_address: tronHexAddress(req.to), amount: Number(req.amount) } };
        return {
          type: 'TriggerSmartContract',
          value: { owner_address, contract_address: tronHexAddress(coin.asset), data: trc20TransferData(req.to, req.amount) },
        };
      }
    }
  }

  private opened(row: EvmSendRow): EvmSendRow {
    return { ...row, raw: this.deps.sealer.open(row.raw, cells.evmSend(row.id)) };
  }

  private async drop(em: EntityManager, row: EvmSendRow, reason: string): Promise<void> {
    if (await updateSend(em, row, { status: 'dropped', updated_at: iso(this.deps.clock.now()) }))
      await this.owner(row).onDropped(em, { ...row, status: 'dropped' }, reason);
  }

  private owner(row: EvmSendRow): EvmSendOwner {
    const owner = this.owners.get(row.kind);
    if (!owner) throw new Error(`no owner of tron ${row.kind} sends`);
    return owner;
  }
}

/**
 * Whether a transaction expiring at `expiration` (ms) can never be mined: a block at the chain's
 * confirmations (one no reorganisation is expected to take back) is at or past that time, so no
 * block after it, on any branch that keeps it, may include the transaction.
 */
export async function expiredForGood(
  node: Pick<TronNodeApi, 'blockTime'>,
  confirmations: number,
  tip: number,
  expiration: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deep = tip - Math.max(1, confirmations) + 1;
  if (deep < 0) return false;
  return (await node.blockTime(deep, signal)) >= expiration;
}
