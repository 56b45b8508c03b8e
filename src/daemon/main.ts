import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema';
import { ensureDataDir, loadMasterKey, Sealer } from '../db/seal';
import { Store } from '../db/store';
import { createApp } from '../http/app';
import { healthRoutes } from '../http/health.routes';
import { listenAdmin } from '../admin/server';
import { teamAdminRoutes } from '../admin/team.routes';
import { statusAdminRoutes } from '../admin/status.routes';
import { Catalog } from '../catalog/coins';
import { catalogRoutes } from '../catalog/catalog.routes';
import { RateEngine } from '../rates/engine';
import { refreshRatesJob } from '../jobs/refresh-rates.job';
import { Scheduler } from '../jobs/scheduler';
import { TeamService } from '../team/team.service';
import { systemClock, type Clock } from '../shared/clock';
import { createLogger, type Logger } from '../shared/logger';
import { createAuth } from '../auth/auth.wiring';
import type { KeyService } from '../auth/key.service';

export interface DaemonOptions {
  logger?: Logger;
  clock?: Clock;
  /** Write <data_dir>/coinkeepd.pid (the CLI's start/stop use it). */
  pidFile?: boolean;
}

export interface Daemon {
  config: Config;
  apiUrl: string;
  store: Store;
  team: TeamService;
  keys: KeyService;
  rates: RateEngine;
  catalog: Catalog;
  logger: Logger;
  stop(): Promise<void>;
}

export const pidFilePath = (dataDir: string): string => path.join(dataDir, 'coinkeepd.pid');

/** The one place that wires config → store → services → API, admin socket and jobs. */
export async function startDaemon(config: Config, opts: DaemonOptions = {}): Promise<Daemon> {
  const logger = opts.logger ?? createLogger({ level: config.log_level });
  const clock = opts.clock ?? systemClock;
  ensureDataDir(config.data_dir);
  const sealer = new Sealer(loadMasterKey(config.data_dir, { create: false }));

  const store = await Store.open({ url: config.database.url });
  const applied = await store.migrate();
  if (applied.length) logger.info('migrations applied', { migrations: applied });

  const catalog = new Catalog(config.chains, config.fiat);
  const tickers = [...new Set(catalog.coins().map((c) => c.ticker))];
  const rates = new RateEngine({ sources: config.rates, tickers, fiats: config.fiat.enabled, clock, logger });
  const team = new TeamService(store, sealer, clock, config.fiat);
  const auth = createAuth({ config, store, sealer, clock, logger, team });
  await auth.idempotency.recoverAbandoned();

  const scheduler = new Scheduler(logger);
  const startedAt = clock.now();

  const app = createApp({
    logger,
    trustProxy: config.trust_proxy,
    routers: [healthRoutes(), catalogRoutes({ catalog, rates, authenticate: auth.authenticate }), ...auth.apiRoutes],
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.listen.port, config.listen.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const apiUrl = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;

  const admin = await listenAdmin(
    config.data_dir,
    [
      healthRoutes(),
      statusAdminRoutes({ config, apiUrl, startedAt, rates }),
      teamAdminRoutes(team),
      ...auth.adminRoutes,
    ],
    logger,
  );

  scheduler.add(refreshRatesJob(rates, config.rates.refresh_seconds), { runAtStart: true });
  scheduler.add({ name: 'purge-idempotency-keys', schedule: '17 * * * *', run: () => auth.idempotency.purgeExpired() });
  scheduler.add({ name: 'expire-withdraw-requests', schedule: '*/1 * * * *', run: async () => void (await auth.keys.expireRequests()) }, { runAtStart: true });

  const pidFile = pidFilePath(config.data_dir);
  if (opts.pidFile) writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  logger.info('coinkeepd started', { api_url: apiUrl, network: config.network, pid: process.pid });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('coinkeepd stopping');
      const closed = Promise.all([closeServer(server), closeServer(admin)]);
      await scheduler.stop();
      await closed;
      await store.close();
      if (opts.pidFile) {
        try {
          unlinkSync(pidFile);
        } catch {
          /* already gone */
        }
      }
      logger.info('coinkeepd stopped');
    })());

  return { config, apiUrl, store, team, keys: auth.keys, rates, catalog, logger, stop };
}

/** Stops accepting, lets in-flight requests finish, then closes idle keep-alive sockets. */
function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
