import type { EntityManager } from 'typeorm';

/**
 * Work to run once a write transaction has committed (a wake-up of whoever reads what it wrote: the
 * webhook dispatcher, the payment pages' event streams). The store opens a list when a transaction
 * begins (`Store.write`) and runs it after COMMIT; a rolled-back transaction drops it (work asked
 * by a group commit's job rolled back to its savepoint still runs: a wake with nothing new). Each `key`
 * runs once per transaction however often it is asked (a block's hundred events wake the
 * dispatcher once). Outside a transaction the store began, the work runs on the next turn of the
 * event loop, as before this existed.
 */
type Hooks = Map<unknown, () => void>;
const open = new WeakMap<EntityManager, Hooks>();

export function afterCommit(em: EntityManager, key: unknown, fn: () => void): void {
  const hooks = open.get(em);
  if (hooks) {
    if (!hooks.has(key)) hooks.set(key, fn);
    return;
  }
  setImmediate(fn);
}

/** `fn` in the transaction of `em`, collecting its after-commit work into `hooks`. */
export async function collectHooks<T>(em: EntityManager, hooks: Hooks, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  open.set(em, hooks);
  try {
    return await fn(em);
  } finally {
    open.delete(em);
  }
}

/** Runs the work a committed transaction collected; one failing does not stop the others. */
export function runHooks(hooks: Hooks, onError: (err: unknown) => void): void {
  for (const fn of hooks.values())
    try {
      fn();
    } catch (err) {
      onError(err);
    }
}

export type { Hooks as CommitHooks };
