import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes that hold only the open rows the hot paths look for: the outbox's undispatched events,
 * and the deliveries with an attempt planned. A finished row leaves the index instead of staying
 * in it under NULL, so these indexes stay as small as the work in hand and each write to them is
 * one change less. The attempts' `finished_at` index goes: an attempt's row is now written once,
 * with its outcome (a claim without an outcome is found through its delivery). The deliveries'
 * event_id index goes: the one lookup by event (a ping's delivery, just made) walks the newest end
 * of the account's index instead, and every delivery written is one b-tree less. The addresses'
 * unique (chain, address) index goes: its keys are random, so each invoice creation dirtied a page
 * of its own there (40 % of a creation commit's pages, measured); an address is a function of its
 * chain and path, which stay unique in the store, and the allocation checks the watched set (every
 * address, in memory) before it records one.
 */
export class OpenIndexes1767225600009 implements MigrationInterface {
  name = 'OpenIndexes1767225600009';

  async up(q: QueryRunner): Promise<void> {
    for (const name of [
      'events_undispatched',
      'webhook_deliveries_due',
      'webhook_deliveries_endpoint_due',
      'webhook_deliveries_event',
      'webhook_attempts_unfinished',
    ]) {
      await q.query(`DROP INDEX ${name}`);
    }
    await q.query('CREATE INDEX events_undispatched ON events (seq) WHERE dispatched_at IS NULL');
    await q.query('CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL');
    await q.query('CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE next_attempt_at IS NOT NULL');
    await q.query('DROP INDEX addresses_chain_address');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['events_undispatched', 'webhook_deliveries_due', 'webhook_deliveries_endpoint_due']) await q.query(`DROP INDEX ${name}`);
    await q.query('CREATE INDEX events_undispatched ON events (dispatched_at, seq)');
    await q.query('CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)');
    await q.query('CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)');
    await q.query('CREATE INDEX webhook_attempts_unfinished ON webhook_attempts (finished_at)');
    await q.query('CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)');
    await q.query('CREATE UNIQUE INDEX addresses_chain_address ON addresses (chain_id, address)');
  }
}
