import { EntitySchema } from 'typeorm';

/**
 * The outbox: one row per event, written in the same transaction as the state change it reports.
 * `body` is the webhook body exactly as it will be signed and sent ({event_id, type, created_at,
 * data}); it is built once and never re-serialised. Rows are never deleted by the domain.
 */
export interface EventRow {
  /** The event_id. */
  id: string;
  /** Insertion order, for the dispatcher's scan (gaps and out-of-order commits are possible on PostgreSQL: it scans by `dispatched_at IS NULL`, not by a high-water mark). */
  seq: number;
  account_id: string;
  type: string;
  /** The object the event is about (invoice id, address id, withdrawal id, endpoint id). */
  object_id: string | null;
  /** An invoice's own webhook_url for invoice.* events (signed with the account's callback secret). */
  callback_url: string | null;
  body: string;
  created_at: string;
  /** Set by the webhook dispatcher once deliveries exist for the event. */
  dispatched_at: string | null;
}

export const EventEntity = new EntitySchema<EventRow>({
  name: 'Event',
  tableName: 'events',
  columns: {
    id: { type: 'varchar', length: 36, unique: true },
    seq: { type: 'integer', primary: true, generated: 'increment' },
    account_id: { type: 'varchar', length: 36 },
    type: { type: 'varchar', length: 48 },
    object_id: { type: 'varchar', length: 36, nullable: true },
    callback_url: { type: 'text', nullable: true },
    body: { type: 'text' },
    created_at: { type: 'varchar', length: 30 },
    dispatched_at: { type: 'varchar', length: 30, nullable: true },
  },
});
