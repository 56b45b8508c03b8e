import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const PREFIX = 'v1.';

/**
 * Secrets at rest (key secrets, TOTP secrets, webhook secrets, the wallet seed) are sealed with
 * AES-256-GCM under the master key. The associated data binds a sealed value to its purpose, so a
 * value copied into another column does not open.
 */
export class Sealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
  }

  seal(plain: string, purpose: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(purpose, 'utf8'));
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return PREFIX + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
  }

  open(sealed: string, purpose: string): string {
    if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed value');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(purpose, 'utf8'));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}

/** Creates the data dir with mode 0700 (and tightens an existing one). */
export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes a file readable by the owner only. */
export function writePrivateFile(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export const masterKeyPath = (dataDir: string): string => path.join(dataDir, 'master.key');

/** The master key: env COINKEEP_MASTER_KEY (base64url or hex of 32 bytes) or <data_dir>/master.key. */
export function loadMasterKey(dataDir: string, opts: { create: boolean }): Buffer {
  const env = process.env.COINKEEP_MASTER_KEY;
  if (env) return decodeKey(env, 'COINKEEP_MASTER_KEY');
  const file = masterKeyPath(dataDir);
  if (!existsSync(file)) {
    if (!opts.create) throw new Error(`master key ${file} not found (run: coinkeep init)`);
    ensureDataDir(dataDir);
    writePrivateFile(file, randomBytes(32).toString('base64url') + '\n');
  }
  return decodeKey(readFileSync(file, 'utf8').trim(), file);
}

function decodeKey(text: string, where: string): Buffer {
  const buf = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64url');
  if (buf.length !== 32) throw new Error(`${where}: master key must be 32 bytes`);
  return buf;
}
