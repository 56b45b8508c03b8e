import test from 'ava';
import { createCipheriv, randomBytes } from 'node:crypto';
import { loadMasterKey, Sealer } from '../../../src/db/seal';

/**
 * PRODUCT §13: secrets at rest are AES-256-GCM under the master key, bound to their cell (table,
 * column, row id) so that a sealed value moved to another row or column does not open.
 */

const key = randomBytes(32);
const sealer = new Sealer(key);
const SECRET = 'Zx9-secret_value-of-43-characters-abcdefghi';
const CELL = { table: 'api_keys', column: 'secret_sealed', row: 'row-1' };

/** Seals like the code before binding did (associated data = a purpose), for the carry-over. */
function sealUnbound(plain: string, purpose: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(purpose, 'utf8'));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return 'v1.' + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
}

test('a sealed secret opens with the same key in the same cell, and does not show the secret', (t) => {
  const sealed = sealer.seal(SECRET, CELL);
  t.regex(sealed, /^v2\.[A-Za-z0-9_-]+$/);
  t.false(sealed.includes(SECRET));
  t.is(sealer.open(sealed, CELL), SECRET);
  t.is(new Sealer(Buffer.from(key)).open(sealed, { ...CELL }), SECRET);
});

test('sealing the same secret twice gives different values (a fresh nonce each time)', (t) => {
  t.not(sealer.seal(SECRET, CELL), sealer.seal(SECRET, CELL));
});

test('a sealed value moved to another row, column or table does not open', (t) => {
  const sealed = sealer.seal(SECRET, CELL);
  t.throws(() => sealer.open(sealed, { ...CELL, row: 'row-2' }));
  t.throws(() => sealer.open(sealed, { ...CELL, column: 'previous_secret_sealed' }));
  t.throws(() => sealer.open(sealed, { ...CELL, table: 'webhook_endpoints' }));
  // The parts are separated: shifting characters between them is another cell.
  t.throws(() => sealer.open(sealed, { table: 'api_keys', column: 'secret_seale', row: 'd\u0000row-1' }));
});

test('another key, a changed byte or a foreign value does not open', (t) => {
  const sealed = sealer.seal(SECRET, CELL);
  t.throws(() => new Sealer(randomBytes(32)).open(sealed, CELL));
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  for (const at of [0, 12, 28, raw.length - 1]) {
    const changed = Buffer.from(raw);
    changed[at]! ^= 1;
    t.throws(() => sealer.open(`v2.${changed.toString('base64url')}`, CELL), undefined, `byte ${at}`);
  }
  t.throws(() => sealer.open(SECRET, CELL), { message: 'not a sealed value' });
});

test('a value with a tag shorter than 16 bytes is refused, even when its short tag is right', (t) => {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 4 });
  c.setAAD(Buffer.from(`coinkeep-sealed\u0000${CELL.table}\u0000${CELL.column}\u0000${CELL.row}`));
  const ct = Buffer.concat([c.update('', 'utf8'), c.final()]);
  const shortTag = `v2.${Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url')}`;
  t.throws(() => sealer.open(shortTag, CELL), { message: 'sealed value too short' });
  const sealed = Buffer.from(sealer.seal(SECRET, CELL).slice(3), 'base64url');
  t.throws(() => sealer.open(`v2.${sealed.subarray(0, 27).toString('base64url')}`, CELL));
});

test('a value sealed before binding opens only through the carry-over, never as a bound value', (t) => {
  const old = sealUnbound(SECRET, 'api_key.secret');
  t.is(sealer.openUnbound(old, 'api_key.secret'), SECRET);
  t.throws(() => sealer.openUnbound(old, 'member.totp'));
  t.throws(() => sealer.open(old, CELL), { message: 'not a sealed value' });
  t.throws(() => sealer.openUnbound(sealer.seal(SECRET, CELL), 'api_key.secret'));
});

test('the master key is 32 bytes: from COINKEEP_MASTER_KEY as hex or base64url, anything else refused', (t) => {
  const saved = process.env.COINKEEP_MASTER_KEY;
  t.teardown(() => {
    if (saved === undefined) delete process.env.COINKEEP_MASTER_KEY;
    else process.env.COINKEEP_MASTER_KEY = saved;
  });
  // The environment wins: the data dir is not read (it does not exist).
  process.env.COINKEEP_MASTER_KEY = key.toString('hex');
  t.deepEqual(loadMasterKey('/nonexistent-data-dir', { create: false }), key);
  process.env.COINKEEP_MASTER_KEY = key.toString('base64url');
  t.deepEqual(loadMasterKey('/nonexistent-data-dir', { create: false }), key);
  process.env.COINKEEP_MASTER_KEY = randomBytes(16).toString('hex');
  const err = t.throws(() => loadMasterKey('/nonexistent-data-dir', { create: false }));
  t.regex(err.message, /^COINKEEP_MASTER_KEY: master key must be 32 bytes$/);
  t.throws(() => new Sealer(randomBytes(31)));
});
