import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A value sealed bound to its cell. */
const BOUND = 'v2.';
/** A value sealed before binding (bound to a purpose only): opened once, by the carry-over at start. */
const UNBOUND = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Where a sealed value is stored: its table, its column and its row's id. */
export interface SealedCell {
  table: string;
  column: string;
  row: string;
}

/**
 * Secrets at rest (key secrets, TOTP secrets, webhook secrets, the wallet seed, stored idempotent
 * answers) are sealed with AES-256-GCM under the master key. The associated data is the value's
 * cell (table, column, row id), so a sealed value copied into another row or column does not open.
 */
export class Sealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
  }

  seal(plain: string, cell: SealedCell): string {
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    c.setAAD(cellData(cell));
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return BOUND + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
  }

  open(sealed: string, cell: SealedCell): string {
    if (!sealed.startsWith(BOUND)) throw new Error('not a sealed value');
    return this.decrypt(sealed.slice(BOUND.length), cellData(cell));
  }

  /** Opens a value sealed before binding; only the carry-over at start calls it. */
  openUnbound(sealed: string, purpose: string): string {
    if (!sealed.startsWith(UNBOUND)) throw new Error('not an unbound sealed value');
    return this.decrypt(sealed.slice(UNBOUND.length), Buffer.from(purpose, 'utf8'));
  }

  private decrypt(text: string, aad: Buffer): string {
    const raw = Buffer.from(text, 'base64url');
    // A shorter tag would be accepted by GCM and weaken it: the whole 16 bytes must be there.
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('sealed value too short');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    d.setAAD(aad);
    d.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([d.update(raw.subarray(IV_BYTES + TAG_BYTES)), d.final()]).toString('utf8');
  }
}

export const isUnboundSealed = (value: string): boolean => value.startsWith(UNBOUND);

/** Table and column names never hold a NUL, so the row id (which may) is unambiguous last. */
const cellData = (c: SealedCell): Buffer => Buffer.from(`coinkeep-sealed\u0000${c.table}\u0000${c.column}\u0000${c.row}`, 'utf8');

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

/**
 * A 32-byte key: env `env` (base64url or hex) or `file` (made, 0600, when `create`). The master key
 * and the signer's key are both read this way; `fail` makes their errors.
 */
export function loadKeyFile(
  dataDir: string,
  file: string,
  env: string,
  opts: { create: boolean },
  fail: { missing: (file: string) => Error; size: (where: string) => Error },
): Buffer {
  const decode = (text: string, where: string): Buffer => {
    const buf = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64url');
    if (buf.length !== 32) throw fail.size(where);
    return buf;
  };
  const fromEnv = process.env[env];
  if (fromEnv) return decode(fromEnv, env);
  if (!existsSync(file)) {
    if (!opts.create) throw fail.missing(file);
    ensureDataDir(dataDir);
    writePrivateFile(file, randomBytes(32).toString('base64url') + '\n');
  }
  return decode(readFileSync(file, 'utf8').trim(), file);
}

/** The master key: env COINKEEP_MASTER_KEY (base64url or hex of 32 bytes) or <data_dir>/master.key. */
export function loadMasterKey(dataDir: string, opts: { create: boolean }): Buffer {
  return loadKeyFile(dataDir, masterKeyPath(dataDir), 'COINKEEP_MASTER_KEY', opts, {
    missing: (file) => new Error(`master key ${file} not found (run: coinkeep init)`),
    size: (where) => new Error(`${where}: master key must be 32 bytes`),
  });
}
