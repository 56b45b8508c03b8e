import type { EntitySchema } from 'typeorm';
import { UserError } from '../shared/errors';
import { ApiKeyEntity, IdempotencyEntity } from './entities/auth';
import { MemberEntity } from './entities/team';
import { CallbackSecretEntity, WebhookEndpointEntity } from './entities/webhooks';
import { isUnboundSealed, type SealedCell, type Sealer } from './seal';
import type { Store } from './store';

/** Every sealed value in the database, by its cell: the one list the code seals and opens by. */
export const cells = {
  keySecret: (keyRowId: string): SealedCell => ({ table: 'api_keys', column: 'secret_sealed', row: keyRowId }),
  keyPreviousSecret: (keyRowId: string): SealedCell => ({ table: 'api_keys', column: 'previous_secret_sealed', row: keyRowId }),
  memberTotp: (memberId: string): SealedCell => ({ table: 'members', column: 'totp_secret_sealed', row: memberId }),
  endpointSecret: (endpointId: string): SealedCell => ({ table: 'webhook_endpoints', column: 'secret_sealed', row: endpointId }),
  callbackSecret: (accountId: string): SealedCell => ({ table: 'webhook_callback_secrets', column: 'secret_sealed', row: accountId }),
  walletSeed: (): SealedCell => ({ table: 'meta', column: 'value', row: 'wallet_seed' }),
  storedAnswer: (scope: string, key: string): SealedCell => ({ table: 'idempotency_keys', column: 'response_body', row: `${scope}\u0000${key}` }),
  payoutCandidate: (payoutId: string, seq: number): SealedCell => ({ table: 'chain_payout_candidates', column: 'raw_sealed', row: `${payoutId}\u0000${seq}` }),
  // Bound to the table's first name: a value sealed before `account_sends` was renamed (migration 0035) still opens.
  evmSend: (sendId: string): SealedCell => ({ table: 'evm_sends', column: 'raw', row: sendId }),
};

type Row = Record<string, string | null>;

interface SealedColumn {
  entity: EntitySchema<any>;
  column: string;
  /** Narrows the table to the rows that hold a sealed value in `column`. */
  only?: Record<string, string>;
  where: (row: Row) => Record<string, string>;
  cell: (row: Row) => SealedCell;
  /** The plain text of a value stored before binding. */
  before: (sealer: Sealer, value: string, row: Row) => string;
}

const unbound = (purpose: (row: Row) => string) => (sealer: Sealer, value: string, row: Row) => {
  if (!isUnboundSealed(value)) throw new Error('not a sealed value');
  return sealer.openUnbound(value, purpose(row));
};

/** The purposes values were sealed for before they were bound to their cells. */
const COLUMNS: SealedColumn[] = [
  {
    entity: ApiKeyEntity,
    column: 'secret_sealed',
    where: (r) => ({ id: r.id! }),
    cell: (r) => cells.keySecret(r.id!),
    before: unbound(() => 'api_key.secret'),
  },
  {
    entity: ApiKeyEntity,
    column: 'previous_secret_sealed',
    where: (r) => ({ id: r.id! }),
    cell: (r) => cells.keyPreviousSecret(r.id!),
    before: unbound(() => 'api_key.secret'),
  },
  {
    entity: MemberEntity,
    column: 'totp_secret_sealed',
    where: (r) => ({ id: r.id! }),
    cell: (r) => cells.memberTotp(r.id!),
    before: unbound(() => 'member.totp'),
  },
  {
    entity: WebhookEndpointEntity,
    column: 'secret_sealed',
    where: (r) => ({ id: r.id! }),
    cell: (r) => cells.endpointSecret(r.id!),
    before: unbound((r) => `webhook-endpoint:${r.id}`),
  },
  {
    entity: CallbackSecretEntity,
    column: 'secret_sealed',
    where: (r) => ({ account_id: r.account_id! }),
    cell: (r) => cells.callbackSecret(r.account_id!),
    before: unbound((r) => `webhook-callback:${r.account_id}`),
  },
  // The wallet seed is not here: the daemon never opens it (the signer moves an old one, v1 or v2, to its own key).
  // Stored answers were kept in clear before they were sealed.
  {
    entity: IdempotencyEntity,
    column: 'response_body',
    where: (r) => ({ scope: r.scope!, key: r.key! }),
    cell: (r) => cells.storedAnswer(r.scope!, r.key!),
    before: (_s, value) => value,
  },
];

/**
 * Carries a database over to bound sealing: every value sealed before binding (and every stored
 * answer kept in clear) is sealed again bound to its cell, in one transaction, before anything
 * opens a secret. From then on `Sealer.open` refuses an unbound value. Runs at every start; a
 * carried-over database has nothing left to do.
 */
export async function bindSealedValues(store: Store, sealer: Sealer): Promise<number> {
  return store.write(async (em) => {
    let bound = 0;
    for (const c of COLUMNS) {
      const qb = em.createQueryBuilder(c.entity, 't').where(`t.${c.column} IS NOT NULL AND t.${c.column} NOT LIKE :bound`, { bound: 'v2.%' });
      for (const [name, value] of Object.entries(c.only ?? {})) qb.andWhere(`t.${name} = :${name}`, { [name]: value });
      for (const row of (await qb.getMany()) as Row[]) {
        let plain: string;
        try {
          plain = c.before(sealer, row[c.column]!, row);
        } catch {
          throw new UserError(`a sealed value in ${c.entity.options.tableName}.${c.column} cannot be opened: wrong master key or damaged row`);
        }
        await em.update(c.entity, c.where(row), { [c.column]: sealer.seal(plain, c.cell(row)) });
        bound++;
      }
    }
    return bound;
  });
}
