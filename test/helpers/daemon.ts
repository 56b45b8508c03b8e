import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { SENSITIVE_SCOPES, type SensitiveLimits } from '../../src/auth/sensitive-limiter';
import { configFromText } from '../../src/config/load';
import type { Config } from '../../src/config/schema';
import { loadMasterKey } from '../../src/db/seal';
import { startDaemon, type Daemon, type DaemonOptions } from '../../src/daemon/main';
import type { Clock } from '../../src/shared/clock';
import { silentLogger, type Logger } from '../../src/shared/logger';
import { totpCode } from '../../src/team/totp';
import { nextTotpStep } from './cli-otp';

import { prepareSeed } from '../../src/wallet/signer-process/main';
import type { AddressAllocator } from '../../src/wallet/allocator';
import { COINKEEP_BIN, FIXED_RATES, runBin, testCliConfig } from './cli';
import { TEST_MNEMONIC } from './test-mnemonic';
import { inProcessSigner } from './signer-process';
import { placeMigratedDatabase } from './migrated-db';

export { FIXED_RATES, TEST_MNEMONIC };

/** Sensitive-operation limits no test reaches: for tests and benchmarks that make many withdrawals. */
export const OPEN_SENSITIVE_LIMITS = Object.fromEntries(SENSITIVE_SCOPES.map((s) => [s, { max: 1e9, windowMs: 60_000 }])) as unknown as SensitiveLimits;

/** A config for tests (testCliConfig's, parsed as the daemon reads it); `overrides` merge on top. */
export function testConfig(dataDir: string, overrides: Record<string, unknown> = {}): Config {
  return configFromText(YAML.stringify(testCliConfig(dataDir, overrides)));
}

/** Writes the test daemon's own config to `<data_dir>/cli.yaml`, for the CLI (bin/coinkeep --config) to reach it. */
export function cliConfigFile(td: TestDaemon): string {
  const file = path.join(td.dataDir, 'cli.yaml');
  writeFileSync(file, YAML.stringify({ ...td.daemon.config }));
  return file;
}

/** `coinkeep ledger reconcile --json` on the running daemon's config: what the books say the wallet holds against what the nodes show. */
export async function ledgerReconcile(td: TestDaemon): Promise<{ code: number | null; report: string; stderr: string }> {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), '--json', 'ledger', 'reconcile'], { timeoutMs: 60_000 });
  return { code: r.code, report: r.stdout, stderr: r.stderr };
}

export interface TestDaemon {
  daemon: Daemon;
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** The real daemon, in this process, on 127.0.0.1 port 0 with a temp data dir. */
export async function startTestDaemon(
  overrides: Record<string, unknown> = {},
  opts: {
    clock?: Clock;
    logger?: Logger;
    allocator?: AddressAllocator;
    extraRouters?: DaemonOptions['extraRouters'];
    webhooks?: DaemonOptions['webhooks'];
    adapterFor?: DaemonOptions['adapterFor'];
    replayKeyShare?: number;
    sensitiveLimits?: DaemonOptions['sensitiveLimits'];
    /** The signer: 'child' runs the real `coinkeep signer`; a function builds one in this process (the default: inProcessSigner). */
    signer?: 'child' | ((config: Config) => NonNullable<DaemonOptions['signer']>);
  } = {},
): Promise<TestDaemon> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-test-'));
  const config = testConfig(dataDir, overrides);
  const daemon = await startPreparedDaemon(config, {
    logger: opts.logger ?? silentLogger,
    clock: opts.clock,
    allocator: opts.allocator,
    extraRouters: opts.extraRouters,
    webhooks: opts.webhooks,
    adapterFor: opts.adapterFor,
    replayKeyShare: opts.replayKeyShare,
    sensitiveLimits: opts.sensitiveLimits,
    signer: opts.signer === 'child' ? 'child' : opts.signer?.(config),
  });
  return {
    daemon,
    url: daemon.apiUrl,
    dataDir,
    stop: async () => {
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The daemon in this process on `config`'s data dir, made ready first (a master key, the test
 * wallet seed): also the setup of tests that run bin/coinkeepd on the same dir afterwards.
 */
export async function startPreparedDaemon(
  config: Config,
  opts: Omit<DaemonOptions, 'signer'> & { signer?: DaemonOptions['signer'] | 'child' } = { logger: silentLogger },
): Promise<Daemon> {
  loadMasterKey(config.data_dir, { create: true });
  await placeMigratedDatabase(config.database.url);
  await prepareSeed(config, TEST_MNEMONIC);
  // The signer in this process (same socket and checks), unless the test brings its own or asks for the real child.
  const { signer, ...rest } = opts;
  return startDaemon(config, { ...rest, signer: signer === 'child' ? undefined : (signer ?? inProcessSigner(config)) });
}

/** How long the previous TOTP step must stay valid for OtpSource to use it. */
const PREVIOUS_STEP_MARGIN_MS = 10_000;

/**
 * TOTP codes for tests: each call returns a code of a later step than the last, as a person would
 * wait for. The daemon accepts steps within ±1 of its own; the previous step is used only while it
 * stays valid 10 s more (a busy machine between this call and the daemon's check). When the window
 * has no later step left: on the real clock it waits for the next step, on a test clock it throws.
 */
export class OtpSource {
  private step = 0;
  constructor(
    private readonly secret: string,
    private readonly clock: { now(): Date },
  ) {}

  next(): string {
    for (;;) {
      const got = this.take();
      if ('code' in got) return got.code;
      // The real clock: the next step is at most 30 s away (the daemon of this process waits too; nothing needs it meanwhile).
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, got.waitMs);
    }
  }

  /**
   * `next` for a test with work in flight in this process (a dashboard's request to the daemon): it
   * waits for the next step on a timer, so the daemon and the dashboard go on meanwhile. (`next`
   * blocks the thread: a dashboard frozen 30 s found its daemon silent and reconnected, and its
   * request's answer was lost, on a loaded machine.)
   */
  async nextAsync(): Promise<string> {
    for (;;) {
      const got = this.take();
      if ('code' in got) return got.code;
      await new Promise((r) => setTimeout(r, got.waitMs));
    }
  }

  /** The next step's code, or how long to wait for one. */
  private take(): { code: string } | { waitMs: number } {
    const nowMs = this.clock.now().getTime();
    const next = nextTotpStep(this.step, nowMs, PREVIOUS_STEP_MARGIN_MS);
    if ('step' in next) {
      this.step = next.step;
      return { code: totpCode(this.secret, next.step) };
    }
    if (Math.abs(nowMs - Date.now()) > 2000) throw new Error('OtpSource: advance the clock; no fresh code inside the window');
    return { waitMs: next.waitMs + 50 };
  }
}

/** Creates an account with an owner and a key; returns what a merchant back end would hold. */
export async function merchantWithKey(daemon: Daemon, opts: { permissions?: string[]; test?: boolean; ip?: string[]; rateLimit?: number } = {}) {
  const owner = `owner-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await daemon.team.createAccount('Test shop', owner);
  const { key } = await daemon.keys.create(
    created.account.id,
    { email: owner },
    {
      name: 'backend',
      permissions: opts.permissions ?? ['read', 'create_invoice', 'create_address'],
      ip_whitelist: opts.ip ?? [],
      rate_limit_per_minute: opts.rateLimit ?? 600,
      test: opts.test ?? false,
    },
  );
  return { accountId: created.account.id, owner, ownerTotp: created.member.totp_secret, keyId: key.key_id, secret: key.secret };
}
