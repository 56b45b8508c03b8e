import type { EntityManager } from 'typeorm';
import { afterCommit } from '../db/after-commit';

/**
 * Which invoices changed, told once the changing transaction commits (after-commit.ts): the payment
 * pages' event streams (GET /pay/{id}/events) and the checkout's view cache listen here, so an
 * open page learns of a payment from the commit that recorded it, not from a read every second.
 * In-process only: a page open on another daemon of the same database learns it from its poll.
 */
export class InvoiceChanges {
  private readonly byId = new Map<string, Set<() => void>>();
  private readonly all = new Set<(id: string) => void>();

  /** In the transaction that changed invoice `id`: its listeners run once it commits (once per transaction). */
  changed(em: EntityManager, id: string): void {
    if (this.all.size === 0 && !this.byId.has(id)) return;
    afterCommit(em, `invoice-changed:${id}`, () => this.notify(id));
  }

  /** `listener` runs after each committed change of invoice `id`; returns the unsubscribe. */
  watch(id: string, listener: () => void): () => void {
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byId.get(id) === set) this.byId.delete(id);
    };
  }

  /** `listener` runs after each committed change of any invoice. */
  watchAll(listener: (id: string) => void): () => void {
    this.all.add(listener);
    return () => this.all.delete(listener);
  }

  /** Invoices with a listener of their own (open event streams). */
  get watched(): number {
    return this.byId.size;
  }

  private notify(id: string): void {
    for (const l of this.all) l(id);
    for (const l of this.byId.get(id) ?? []) l();
  }
}
