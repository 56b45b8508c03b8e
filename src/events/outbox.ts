import type { EntityManager } from 'typeorm';
import type { EventRow } from '../db/entities/events';
import { afterCommit } from '../db/after-commit';
import { insertRow } from '../db/raw';
import { iso } from '../shared/clock';
import type { EventType } from '../shared/events';
import { newTimeOrderedId } from '../shared/ids';

export interface EmitInput {
  accountId: string;
  type: EventType;
  /** The event's `data`: plain JSON (amounts already as decimal strings). */
  data: Record<string, unknown>;
  /** The object it is about (invoice, address, withdrawal, endpoint). */
  objectId?: string | null;
  /** An invoice's own webhook_url, for invoice.* events. */
  callbackUrl?: string | null;
  at: Date;
}

/**
 * The outbox (ARCHITECTURE "Outbox"): a state change calls `emit` with the EntityManager of its own
 * transaction, so the event exists exactly when the change does. The body is serialised here once;
 * deliveries send and sign those bytes. Listeners (the webhook dispatcher) are woken when the
 * emitting transaction commits (after-commit.ts), so events leave at once without a timer; the
 * dispatcher's periodic pass stays as the fallback (another daemon's events, a wake lost to a crash).
 */
export class Outbox {
  private readonly listeners = new Set<() => void>();

  async emit(em: EntityManager, input: EmitInput): Promise<Omit<EventRow, 'seq'>> {
    // Time-ordered: events are written at the rate of state changes (see MoneyMovement.receive).
    const id = newTimeOrderedId(input.at.getTime());
    const createdAt = iso(input.at);
    const body = JSON.stringify({ event_id: id, type: input.type, created_at: createdAt, data: input.data });
    const row: Omit<EventRow, 'seq'> = {
      id,
      account_id: input.accountId,
      type: input.type,
      object_id: input.objectId ?? null,
      callback_url: input.callbackUrl ?? null,
      body,
      created_at: createdAt,
      dispatched_at: null,
    };
    // A prepared statement: events are written in the chain core's and the API's hot paths.
    await insertRow(em, 'events', row);
    // Once the transaction commits (never before: a reader woken earlier would not see the row).
    if (this.listeners.size > 0) afterCommit(em, this, this.notify);
    return row;
  }

  private readonly notify = (): void => this.listeners.forEach((l) => l());

  /** `listener` runs after the commit of each transaction that emitted (once per transaction). */
  onEmit(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
