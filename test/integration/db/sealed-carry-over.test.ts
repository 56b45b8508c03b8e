import test from 'ava';
import { createCipheriv, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { ApiKeyEntity, IdempotencyEntity } from '../../../src/db/entities/auth';
import { MemberEntity, MetaEntity } from '../../../src/db/entities/team';
import { CallbackSecretEntity, WebhookEndpointEntity } from '../../../src/db/entities/webhooks';
import { loadMasterKey } from '../../../src/db/seal';
import { Store } from '../../../src/db/store';
import { startDaemon } from '../../../src/daemon/main';
import { signerBackupWords } from '../../../src/wallet/signer-process/main';
import { silentLogger } from '../../../src/shared/logger';
import { totpCode, totpStep } from '../../../src/team/totp';
import { merchantWithKey, startTestDaemon, TEST_MNEMONIC } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';

/**
 * A database from before sealed values were bound to their rows holds values sealed for a purpose
 * only, and stored answers in clear. At start the daemon seals them again bound, in one
 * transaction; the secrets keep working. docs/decisions.md says so.
 */

/** Seals as the code before binding did: associated data = a purpose. */
function sealUnbound(key: Buffer, plain: string, purpose: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(purpose, 'utf8'));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return 'v1.' + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
}

test('a database sealed before binding is carried over at start: every value bound, every secret still working', async (t) => {
  const td = await startTestDaemon();
  const { config } = td.daemon;
  t.teardown(() => rmSync(td.dataDir, { recursive: true, force: true }));
  const m = await merchantWithKey(td.daemon);
  const rotated = await td.daemon.keys.rotate(m.accountId, m.keyId, { email: m.owner });
  const api = new ApiClient(td.url, m.keyId, rotated.key.secret!);
  const endpoint = await api.post(
    '/v1/webhooks/endpoints',
    { url: 'http://127.0.0.1:9/h', event_types: ['invoice.paid'] },
    { 'Idempotency-Key': 'old-answer' },
  );
  t.is(endpoint.status, 201);
  const callback = await td.daemon.webhooks.callbackSecrets.show(m.accountId, false);
  await td.daemon.stop();

  // Write the rows as the code before binding left them.
  const master = loadMasterKey(config.data_dir, { create: false });
  const old = await Store.open({ url: config.database.url });
  await old.write(async (em) => {
    const key = await em.findOneByOrFail(ApiKeyEntity, { key_id: m.keyId });
    await em.update(
      ApiKeyEntity,
      { id: key.id },
      {
        secret_sealed: sealUnbound(master, rotated.key.secret!, 'api_key.secret'),
        previous_secret_sealed: sealUnbound(master, m.secret, 'api_key.secret'),
      },
    );
    const owner = await em.findOneByOrFail(MemberEntity, { email: m.owner });
    await em.update(MemberEntity, { id: owner.id }, { totp_secret_sealed: sealUnbound(master, m.ownerTotp, 'member.totp') });
    await em.update(
      WebhookEndpointEntity,
      { id: endpoint.body.id },
      { secret_sealed: sealUnbound(master, endpoint.body.secret, `webhook-endpoint:${endpoint.body.id}`) },
    );
    await em.update(
      CallbackSecretEntity,
      { account_id: m.accountId },
      { secret_sealed: sealUnbound(master, callback.secret, `webhook-callback:${m.accountId}`) },
    );
    // The seed as it was before the signer: under the master key, unbound; the signer moves it to its own key.
    await em.delete(MetaEntity, { key: 'signer_seed' });
    await em.insert(MetaEntity, { key: 'wallet_seed', value: sealUnbound(master, TEST_MNEMONIC, 'wallet-seed') });
    await em.update(IdempotencyEntity, { key: 'old-answer' }, { response_body: JSON.stringify(endpoint.body) });
  });
  await old.close();

  // The real child signer: it moves the old seed at its start.
  const daemon = await startDaemon(config, { logger: silentLogger });
  t.teardown(() => daemon.stop());
  const values = async () => {
    const key = await daemon.store.read.findOneByOrFail(ApiKeyEntity, { key_id: m.keyId });
    const owner = await daemon.store.read.findOneByOrFail(MemberEntity, { email: m.owner });
    const ep = await daemon.store.read.findOneByOrFail(WebhookEndpointEntity, { id: endpoint.body.id });
    const cb = await daemon.store.read.findOneByOrFail(CallbackSecretEntity, { account_id: m.accountId });
    const seed = await daemon.store.read.findOneByOrFail(MetaEntity, { key: 'signer_seed' });
    const answer = await daemon.store.read.findOneByOrFail(IdempotencyEntity, { key: 'old-answer' });
    return [key.secret_sealed, key.previous_secret_sealed, owner.totp_secret_sealed, ep.secret_sealed, cb.secret_sealed, seed.value, answer.response_body];
  };
  for (const v of await values()) t.regex(String(v), /^v2\./);

  // Every secret opens where it is used: the key signs (current and previous), the TOTP secret
  // checks a code, the callback secret reads back, the stored answer replays.
  const after = new ApiClient(daemon.apiUrl, m.keyId, rotated.key.secret!);
  t.is((await after.get('/v1/webhooks/endpoints')).status, 200);
  t.is((await new ApiClient(daemon.apiUrl, m.keyId, m.secret).get('/v1/webhooks/endpoints')).status, 200);
  t.is((await daemon.webhooks.callbackSecrets.show(m.accountId, false)).secret, callback.secret);
  const otp = totpCode(m.ownerTotp, totpStep(new Date()));
  const updated = await daemon.keys.update(m.accountId, m.keyId, { email: m.owner, otp }, { ip_whitelist: ['127.0.0.0/8'] });
  t.deepEqual(updated.key.ip_whitelist, ['127.0.0.0/8']);
  const replay = await after.post(
    '/v1/webhooks/endpoints',
    { url: 'http://127.0.0.1:9/h', event_types: ['invoice.paid'] },
    { 'Idempotency-Key': 'old-answer' },
  );
  t.is(replay.headers.get('idempotent-replayed'), 'true', `${replay.status} ${JSON.stringify(replay.body)}`);
  t.deepEqual(replay.body, endpoint.body);
  t.is((await signerBackupWords(daemon.config)).words, TEST_MNEMONIC);
  t.is(await daemon.store.read.findOneBy(MetaEntity, { key: 'wallet_seed' }), null);
});
