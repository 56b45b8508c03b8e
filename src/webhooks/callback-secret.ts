import type { EntityManager } from 'typeorm';
import { CallbackSecretEntity } from '../db/entities/webhooks';
import { AccountEntity } from '../db/entities/team';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { notFound } from '../shared/errors';
import { last4, newWebhookSecret, type WebhookSecrets } from './secrets';

export interface CallbackSecretView {
  account_id: string;
  secret: string;
  secret_last4: string;
  created_at: string;
  updated_at: string;
}

/**
 * The account's invoice-callback secret (PRODUCT §10): it signs deliveries to invoices' own
 * webhook_url. Made on first need (the first such delivery, or `coinkeep webhooks secret`), so an
 * account never waits for it.
 */
export class CallbackSecrets {
  constructor(private readonly deps: { store: Store; secrets: WebhookSecrets; clock: Clock }) {}

  /** Creates the secret in the caller's transaction unless it exists. */
  async ensure(em: EntityManager, accountId: string): Promise<void> {
    if (await em.findOne(CallbackSecretEntity, { where: { account_id: accountId } })) return;
    await this.write(em, accountId, newWebhookSecret(), null);
  }

  /** The plain secret for signing; made now if the account has none yet. */
  async secretFor(accountId: string): Promise<string> {
    let row = await this.deps.store.read.findOne(CallbackSecretEntity, { where: { account_id: accountId } });
    if (!row) {
      await this.deps.store.write((em) => this.ensure(em, accountId));
      row = await this.deps.store.read.findOneOrFail(CallbackSecretEntity, { where: { account_id: accountId } });
    }
    return this.deps.secrets.openCallback(accountId, row.secret_sealed);
  }

  /** `coinkeep webhooks secret [--rotate]`: the secret, made or replaced first when asked. */
  async show(accountId: string, rotate: boolean): Promise<CallbackSecretView> {
    await this.deps.store.write(async (em) => {
      if (!(await em.findOne(AccountEntity, { where: { id: accountId } }))) throw notFound('account');
      const existing = await em.findOne(CallbackSecretEntity, { where: { account_id: accountId } });
      if (!existing || rotate) await this.write(em, accountId, newWebhookSecret(), existing?.created_at ?? null);
    });
    const row = await this.deps.store.read.findOneOrFail(CallbackSecretEntity, { where: { account_id: accountId } });
    const secret = this.deps.secrets.openCallback(accountId, row.secret_sealed);
    return { account_id: accountId, secret, secret_last4: row.secret_last4, created_at: row.created_at, updated_at: row.updated_at };
  }

  private async write(em: EntityManager, accountId: string, secret: string, createdAt: string | null): Promise<void> {
    const now = iso(this.deps.clock.now());
    const row = {
      account_id: accountId,
      secret_sealed: this.deps.secrets.sealCallback(accountId, secret),
      secret_last4: last4(secret),
      created_at: createdAt ?? now,
      updated_at: now,
    };
    await em.save(CallbackSecretEntity, row);
  }
}
