import test from 'ava';
import { randomBytes } from 'node:crypto';
import { loadMasterKey, Sealer } from '../../../src/db/seal';

/** PRODUCT §13: secrets at rest are AES-256-GCM under the master key, bound to their purpose. */

const key = randomBytes(32);
const sealer = new Sealer(key);
const SECRET = 'Zx9-secret_value-of-43-characters-abcdefghi';

test('a sealed secret opens with the same key and purpose, and does not show the secret', (t) => {
  const sealed = sealer.seal(SECRET, 'api_key.secret');
  t.regex(sealed, /^v1\.[A-Za-z0-9_-]+$/);
  t.false(sealed.includes(SECRET));
  t.is(sealer.open(sealed, 'api_key.secret'), SECRET);
  t.is(new Sealer(Buffer.from(key)).open(sealed, 'api_key.secret'), SECRET);
});

test('sealing the same secret twice gives different values (a fresh nonce each time)', (t) => {
  t.not(sealer.seal(SECRET, 'p'), sealer.seal(SECRET, 'p'));
});

test('another purpose, another key, a changed byte or a foreign value does not open', (t) => {
  const sealed = sealer.seal(SECRET, 'api_key.secret');
  t.throws(() => sealer.open(sealed, 'member.totp'));
  t.throws(() => new Sealer(randomBytes(32)).open(sealed, 'api_key.secret'));
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  for (const at of [0, 12, 28, raw.length - 1]) {
    const changed = Buffer.from(raw);
    changed[at]! ^= 1;
    t.throws(() => sealer.open(`v1.${changed.toString('base64url')}`, 'api_key.secret'), undefined, `byte ${at}`);
  }
  t.throws(() => sealer.open(SECRET, 'api_key.secret'), { message: 'not a sealed value' });
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
