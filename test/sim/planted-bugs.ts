/**
 * Known bugs the simulator must catch (issue 34 §2), planted one at a time through DaemonOptions
 * `parts` by the simulator's own daemon entry (sim-daemon.ts `--plant NAME`): nothing in src/ reads
 * them, so a production run cannot reach one. Each names the invariant that should catch it.
 */
import type { EntityManager } from 'typeorm';
import type { DaemonOptions } from '../../src/daemon/main';
import { LedgerBalanceEntity, LedgerEntryEntity } from '../../src/db/entities/money';
import { placeholder, rawQuery } from '../../src/db/raw';
import type { EmitInput } from '../../src/events/outbox';
import { Outbox } from '../../src/events/outbox';
import type { LedgerEntry } from '../../src/ledger/entries';
import { Ledger } from '../../src/ledger/ledger';
import { TransactionRefused } from '../../src/chains/types';
import type { PayoutCandidate, PayoutRail } from '../../src/payouts/rail';
import { feeOf, type FeeTerms } from '../../src/money/fee';
import { MoneyMovement, type Receipt } from '../../src/money/money-movement';
import { creditPostings } from '../../src/money/postings';
import { MAX_DECIMALS, Amount } from '../../src/shared/amount';
import { iso } from '../../src/shared/clock';
import { newTimeOrderedId } from '../../src/shared/ids';

export const PLANTS = {
  /** A confirmed payment credited twice: the second posting skips the guarded update that says it was credited already. */
  'unguarded-credit': 'reconcile',
  /** A withdrawal's hold released twice when it is cancelled (the second time on the cached balance). */
  'double-release': 'ledger-verify',
  /** The outbox row of `invoice.paid` never written: the invoice is paid, nobody hears of it. */
  'drop-outbox-row': 'events',
  /** A payout failed when its broadcast's answer is unknown (a gateway's timeout) although the node took the transaction. */
  'fail-on-unknown': 'failed-not-mined',
  /** A payout broadcast as soon as it is signed, before the transaction that stores it commits: a kill between the two loses it, and it is paid again. */
  'broadcast-before-store': 'paid-once',
  /** A stray payment (PRODUCT §17) taken as credited the moment it is seen: its status written without the merchant's request. */
  'stray-credited-on-sight': 'stray-credited-only-when-asked',
} as const;

export type PlantName = keyof typeof PLANTS;

export const isPlant = (name: string): name is PlantName => Object.hasOwn(PLANTS, name);

class UnguardedCredit extends MoneyMovement {
  constructor(private readonly parts: ConstructorParameters<typeof MoneyMovement>[0]) {
    super(parts);
  }

  override async credit(em: EntityManager, r: Receipt, terms: FeeTerms): Promise<boolean> {
    if (!(await super.credit(em, r, terms))) return false;
    const [row] = await rawQuery<{ id: string }>(
      em,
      `SELECT id FROM transactions WHERE chain_transfer_id = ${placeholder(em, 1)} AND type = ${placeholder(em, 2)} AND status = 'confirmed' AND reverses_id IS NULL`,
      [r.transfer.id, r.type],
    );
    const decimals = this.parts.catalog.coin(r.transfer.coin_id)?.decimals ?? MAX_DECIMALS;
    const { fee, net } = feeOf(Amount.of(r.transfer.amount), terms, decimals);
    await this.parts.ledger.post(em, creditPostings({ coinId: r.transfer.coin_id, accountId: r.accountId, code: r.type, fee, net, refId: row!.id }));
    return true;
  }
}

/**
 * A hold released twice: the journal refuses a second void_pending of one hold (ledger_entries has
 * one settlement per pending_id), so the planted second release lands where only a bug could put
 * it, on the cached balance: the book's held amount taken down once more.
 */
class ReleasesTwice extends Ledger {
  override async voidPending(em: EntityManager, pendingId: string): Promise<LedgerEntry> {
    const entry = await super.voidPending(em, pendingId);
    const pending = await em.findOneByOrFail(LedgerEntryEntity, { id: pendingId });
    const where = { book: pending.debit_book, coin_id: pending.coin_id };
    const row = await em.findOneByOrFail(LedgerBalanceEntity, where);
    await em.update(LedgerBalanceEntity, where, { debits_pending: Amount.of(row.debits_pending).minus(Amount.of(pending.amount)).toString() });
    return entry;
  }
}

class DropsInvoicePaid extends Outbox {
  override async emit(em: EntityManager, input: EmitInput): ReturnType<Outbox['emit']> {
    if (input.type !== 'invoice.paid') return super.emit(em, input);
    const id = newTimeOrderedId(input.at.getTime());
    const body = JSON.stringify({ event_id: id, type: input.type, created_at: iso(input.at), data: input.data });
    return {
      id,
      account_id: input.accountId,
      type: input.type,
      object_id: input.objectId ?? null,
      callback_url: input.callbackUrl ?? null,
      body,
      created_at: iso(input.at),
      dispatched_at: null,
    };
  }
}

/** `stray.detected` written, and the stray marked credited in the same transaction (nobody asked). */
class CreditsStrayOnSight extends Outbox {
  override async emit(em: EntityManager, input: EmitInput): ReturnType<Outbox['emit']> {
    const row = await super.emit(em, input);
    if (input.type === 'stray.detected' && input.objectId)
      await rawQuery(em, `UPDATE strays SET status = 'credited' WHERE id = ${placeholder(em, 1)}`, [input.objectId]);
    return row;
  }
}

/** Every answer of a broadcast but "sent" taken for a refusal: an unknown outcome fails the payout (PRODUCT §14 says it must not). */
function failOnUnknown(rail: PayoutRail): PayoutRail {
  return Object.assign(Object.create(rail) as PayoutRail, {
    async broadcast(candidate: PayoutCandidate, signal?: AbortSignal): Promise<void> {
      try {
        await rail.broadcast(candidate, signal);
      } catch (err) {
        if (err instanceof TransactionRefused || signal?.aborted) throw err;
        throw new TransactionRefused(`(planted) ${(err as Error).message}`);
      }
    },
  });
}

/** The signed payout handed to the node inside the transaction that claims its withdrawals and stores it, before that commits. */
function broadcastBeforeStore(rail: PayoutRail): PayoutRail {
  return Object.assign(Object.create(rail) as PayoutRail, {
    async build(em: EntityManager, req: Parameters<PayoutRail['build']>[1]): ReturnType<PayoutRail['build']> {
      const built = await rail.build(em, req);
      if (built.payout) await rail.broadcast(built.payout.candidate).catch(() => undefined);
      return built;
    },
  });
}

export function plantedParts(name: PlantName): NonNullable<DaemonOptions['parts']> {
  switch (name) {
    case 'unguarded-credit':
      return { money: (deps) => new UnguardedCredit(deps) };
    case 'double-release':
      return { ledger: (clock) => new ReleasesTwice(clock) };
    case 'drop-outbox-row':
      return { outbox: () => new DropsInvoicePaid() };
    case 'fail-on-unknown':
      return { payoutRail: (rail) => failOnUnknown(rail) };
    case 'broadcast-before-store':
      return { payoutRail: (rail) => broadcastBeforeStore(rail) };
    case 'stray-credited-on-sight':
      return { outbox: () => new CreditsStrayOnSight() };
  }
}
