import type { Config } from '../config/schema';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import { Idempotency, IDEMPOTENCY_TTL_MS } from '../http/idempotency';
import type { RouteGuards } from '../http/context';
import { keysAdminRoutes } from '../admin/keys.routes';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { TeamService } from '../team/team.service';
import { accountRoutes } from '../auth/account.routes';
import { Hmac } from '../auth/hmac';
import { Authenticator, authOf } from '../auth/auth.middleware';
import { IpBlocker } from '../auth/ip-blocker';
import { KeyRegistry } from '../auth/key-registry';
import { KeyService } from '../auth/key.service';
import { MemoryReplayGuard, REPLAY_BUCKET_MS, REPLAY_RETENTION_MS } from '../auth/replay-guard';
import { openReplayState } from '../auth/replay-state';
import { SensitiveLimiter, type SensitiveLimits } from '../auth/sensitive-limiter';
import { StoreReplayGuard } from '../auth/store-replay-guard';
import { testKeysDocRoutes } from '../auth/test-keys.routes';
import { TokenBuckets } from '../auth/token-bucket';
import { KeyUsage } from '../auth/key-usage';
import type { Job } from '../jobs/scheduler';
import type { DaemonModule } from './module';

/**
 * Authentication's parts, wired: on SQLite (one daemon) the replay guard and key cache live in
 * memory (the guard saved at `close` and restored at the next start); on PostgreSQL (possibly
 * several daemons) replays are recorded in the store and cached keys live 2 s.
 */
export async function createAuth(deps: {
  config: Config;
  store: Store;
  sealer: Sealer;
  clock: Clock;
  logger: Logger;
  team: TeamService;
  replayKeyShare?: number;
  sensitiveLimits?: SensitiveLimits;
}) {
  const nowMs = () => deps.clock.now().getTime();
  const shared = deps.store.dialect === 'postgres';
  const registry = new KeyRegistry(deps.store, deps.sealer, nowMs, shared ? 2000 : Number.POSITIVE_INFINITY);
  const memoryGuard = shared ? null : new MemoryReplayGuard(REPLAY_RETENTION_MS, REPLAY_BUCKET_MS, deps.replayKeyShare);
  const replay = memoryGuard ?? new StoreReplayGuard(deps.store);
  const replayState = memoryGuard && openReplayState(deps.config.data_dir, memoryGuard, nowMs());
  const usage = new KeyUsage();
  const authenticator = new Authenticator({
    config: deps.config,
    clock: deps.clock,
    keys: registry,
    replay,
    buckets: new TokenBuckets(nowMs),
    ipBlocker: new IpBlocker(nowMs),
    usage,
    hmac: new Hmac(),
  });
  /** Writes the keys' last use every 10 s (PRODUCT: the dashboard's Keys screen). */
  const usageJob: Job = { name: 'key-usage', schedule: { everyMs: 10_000 }, run: () => usage.flush(deps.store) };
  const limiter = new SensitiveLimiter(nowMs, deps.sensitiveLimits);
  const keys = new KeyService(deps.store, deps.sealer, deps.clock, deps.config, deps.team, registry, limiter);
  const idempotency = new Idempotency(deps.store, deps.sealer, deps.clock, deps.logger);
  await idempotency.recoverAbandoned({ atStart: true });
  /** Keys are remembered per API key for 24 h (withdrawals will pass a per-merchant permanent scope). */
  const idempotent = idempotency.middleware((ctx) => ({ scope: `key:${authOf(ctx).apiKeyId}`, ttlMs: IDEMPOTENCY_TTL_MS }));
  const authenticate = authenticator.authenticate;
  const guards: RouteGuards = { authenticate, signed: authenticator.signed, idempotent };
  /** Saves the replay guard; if that fails the next start finds it open and refuses what this run may have accepted. */
  const close = () => {
    try {
      replayState?.close();
    } catch (err) {
      deps.logger.warn('the replay guard could not be saved; the next start refuses signatures made before it', { error: (err as Error).message });
    }
  };
  const module: DaemonModule = {
    routes: [accountRoutes(keys, guards), testKeysDocRoutes(deps.config)],
    adminRoutes: [keysAdminRoutes(keys)],
    jobs: [
      { job: usageJob },
      { job: { name: 'idempotency-upkeep', schedule: '*/1 * * * *', run: () => idempotency.upkeep() } },
      { job: { name: 'expire-withdraw-requests', schedule: '*/1 * * * *', run: async () => void (await keys.expireRequests()) }, runAtStart: true },
    ],
    close,
  };
  return { module, guards, limiter, screen: authenticator.screen, keys };
}
