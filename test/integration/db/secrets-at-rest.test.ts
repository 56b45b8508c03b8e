import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { merchantWithKey, startTestDaemon, TEST_MNEMONIC, type TestDaemon } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';

/**
 * Issue 14 §3, PRODUCT §13: no secret is stored in clear. Every secret the daemon hands out (key
 * secrets, rotated ones, TOTP secrets, webhook endpoint secrets given and generated, the
 * invoice-callback secret, the wallet seed), and every answer that carries one and is kept for
 * an Idempotency-Key, is looked for in every column of every table and in the raw bytes of the
 * database file and its WAL, as text, base64, base64url and hex.
 */

/** The little of better-sqlite3 this test reads with (the package ships no types). */
const Database = require('better-sqlite3') as new (
  file: string,
  o: { readonly: boolean; fileMustExist: boolean },
) => {
  prepare(sql: string): { all(): unknown[] };
  close(): void;
};

let td: TestDaemon;
test.before(async () => {
  td = await startTestDaemon();
});
test.after.always(async () => {
  await td?.stop();
});

/** The forms a secret could be written in; a base64url secret's own bytes too. */
function formsOf(secret: string): Buffer[] {
  const text = Buffer.from(secret, 'utf8');
  const forms = [text, Buffer.from(text.toString('base64')), Buffer.from(text.toString('base64url')), Buffer.from(text.toString('hex'))];
  if (/^[A-Za-z0-9_-]{40,}$/.test(secret)) {
    const raw = Buffer.from(secret, 'base64url');
    forms.push(raw, Buffer.from(raw.toString('hex')), Buffer.from(raw.toString('base64')));
  }
  return forms;
}

test('no secret handed out, nor a stored answer that carried one, is in the database file in clear; replays still answer the secret', async (t) => {
  const m = await merchantWithKey(td.daemon);
  const api = new ApiClient(td.url, m.keyId, m.secret);
  const secrets: Record<string, string> = { key: m.secret, owner_totp: m.ownerTotp, wallet_seed: TEST_MNEMONIC };

  const rotated = await td.daemon.keys.rotate(m.accountId, m.keyId, { email: m.owner });
  secrets.rotated_key = rotated.key.secret!;
  const fresh = new ApiClient(td.url, m.keyId, rotated.key.secret!);

  const given = 'a given webhook secret: 7f3c9e2a-unique';
  const endpointWithGiven = { url: 'http://127.0.0.1:9/given', event_types: ['invoice.paid'], secret: given };
  const created = await fresh.post('/v1/webhooks/endpoints', endpointWithGiven, { 'Idempotency-Key': 'create-given' });
  t.is(created.status, 201, JSON.stringify(created.body));
  secrets.endpoint_given = given;
  const generatedBody = { url: 'http://127.0.0.1:9/generated', event_types: ['invoice.paid'] };
  const generated = await fresh.post('/v1/webhooks/endpoints', generatedBody, { 'Idempotency-Key': 'create-generated' });
  t.is(generated.status, 201);
  secrets.endpoint_generated = generated.body.secret;
  const rotateTarget = `/v1/webhooks/endpoints/${generated.body.id}/rotate-secret`;
  const rotatedEndpoint = await fresh.post(rotateTarget, {}, { 'Idempotency-Key': 'rotate-generated' });
  t.is(rotatedEndpoint.status, 200, JSON.stringify(rotatedEndpoint.body));
  secrets.endpoint_rotated = rotatedEndpoint.body.secret;
  secrets.callback = (await td.daemon.webhooks.callbackSecrets.show(m.accountId, false)).secret;
  t.is(new Set(Object.values(secrets)).size, Object.keys(secrets).length);

  // A replay answers what the first request answered, secret included.
  const again = await fresh.post('/v1/webhooks/endpoints', endpointWithGiven, { 'Idempotency-Key': 'create-given' });
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, created.body);
  const rotatedAgain = await fresh.post(rotateTarget, {}, { 'Idempotency-Key': 'rotate-generated' });
  t.is(rotatedAgain.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(rotatedAgain.body, rotatedEndpoint.body);

  const file = td.daemon.config.database.url.replace(/^sqlite:/, '');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const found: string[] = [];
  const cells: string[] = [];
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    for (const { name } of tables) {
      for (const row of db.prepare(`SELECT * FROM "${name}"`).all() as Array<Record<string, unknown>>) {
        for (const [column, value] of Object.entries(row)) {
          if (value === null) continue;
          const bytes = Buffer.isBuffer(value) ? value : Buffer.from(String(value), 'utf8');
          cells.push(`${name}.${column}`);
          for (const [what, secret] of Object.entries(secrets)) {
            if (formsOf(secret).some((f) => bytes.includes(f))) found.push(`${what} in ${name}.${column}`);
          }
        }
      }
    }
  } finally {
    db.close();
  }
  t.true(cells.includes('idempotency_keys.response_body'), 'the stored answers were read');
  for (const path of [file, `${file}-wal`].filter(existsSync)) {
    const bytes = readFileSync(path);
    for (const [what, secret] of Object.entries(secrets)) {
      if (formsOf(secret).some((f) => bytes.includes(f))) found.push(`${what} in the bytes of ${path.endsWith('-wal') ? 'the WAL' : 'the database file'}`);
    }
  }
  t.deepEqual(found, []);
});
