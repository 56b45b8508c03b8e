import type { EntityManager } from 'typeorm';

/**
 * Values kept for one write transaction on SQLite: rows a transaction reads again (the ledger's
 * balance rows, which the appends of a group commit's jobs read and write one after another; an
 * account's invoice settings, which each invoice creation of a batch reads), so that a later read
 * in it is answered from memory. The store opens a scope when a transaction
 * begins and closes it when the transaction ends; a rollback to a savepoint closes and reopens
 * it (what was kept may no longer be what is stored). Outside a scope (PostgreSQL, where rows are
 * locked as they are read, or a transaction the store did not begin) nothing is kept.
 */
const scopes = new WeakMap<EntityManager, Map<object, unknown>>();

export function openScope(em: EntityManager): void {
  scopes.set(em, new Map());
}

export function closeScope(em: EntityManager): void {
  scopes.delete(em);
}

/** What the transaction of `em` keeps under `key` (made by `make` the first time); null outside a scope. */
export function scoped<T>(em: EntityManager, key: object, make: () => T): T | null {
  const scope = scopes.get(em);
  if (!scope) return null;
  let value = scope.get(key) as T | undefined;
  if (value === undefined) scope.set(key, (value = make()));
  return value;
}
