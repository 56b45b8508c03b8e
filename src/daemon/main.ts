import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import type { ChainConfig, Config } from '../config/schema';
import { ensureDataDir, loadMasterKey, Sealer } from '../db/seal';
import { bindSealedValues } from '../db/sealed-values';
import { Store } from '../db/store';
import { createApp } from '../http/app';
import { answerClientErrors } from '../http/client-errors';
import { healthRoutes, readyRoutes } from '../http/health.routes';
import { listenMetrics } from '../http/metrics';
import { createMetrics, readiness } from './metrics.wiring';
import { openApiDocument } from '../http/api-registry';
import { openApiRoutes } from '../http/openapi.routes';
import { listenAdmin } from '../admin/server';
import { teamAdminRoutes } from '../admin/team.routes';
import { statusAdminRoutes } from '../admin/status.routes';
import { payoutAlerts } from '../payouts/payout-alerts';
import { ledgerAdminRoutes } from '../admin/ledger.routes';
import { invoiceAdminRoutes } from '../admin/invoices.routes';
import { Catalog } from '../catalog/coins';
import { catalogRoutes } from '../catalog/catalog.routes';
import { transactionsApi } from '../transactions/transaction.routes';
import { RateEngine } from '../rates/engine';
import { refreshRatesJob } from '../jobs/refresh-rates.job';
import { Scheduler } from '../jobs/scheduler';
import { TeamService } from '../team/team.service';
import { systemClock, type Clock } from '../shared/clock';
import { createLogger, type Logger } from '../shared/logger';
import { createAuth } from './auth.wiring';
import type { KeyService } from '../auth/key.service';
import { WatchedAddresses } from '../chains/watched-addresses';
import type { RefundPageSource } from '../refunds/refund-page.source';
import { createRefunds } from './refunds.wiring';
import { createCustody } from './custody.wiring';
import { createStrays } from './strays.wiring';
import { addressGroups } from '../chains/address-groups';
import type { ArchivedScan } from '../chains/archived-scan';
import type { ChainCore, AdapterFactory } from '../chains/chain-core';
import type { TransferRecorder } from '../chains/transfer-recorder';
import { TransferRouter } from '../chains/transfer-router';
import { createEvmPayouts } from './evm-payouts.wiring';
import { feeCeilings } from '../payouts/fee-ceiling';
import { walletAdminRoutes } from '../admin/wallet.routes';
import { AddressService } from '../wallet/address.service';
import { HdWallet } from '../wallet/hd';
import type { SignerClient } from '../wallet/signer-client';
import { createSigner, type InProcessSigner, type SignerStatus } from './signer.wiring';
import { Outbox } from '../events/outbox';
import { Ledger } from '../ledger/ledger';
import { MoneyMovement } from '../money/money-movement';
import { createInvoices } from './invoices.wiring';
import { createStaticAddresses } from './addresses.wiring';
import { createWithdrawals } from './withdrawals.wiring';
import type { PayoutCheckpoint } from '../payouts/payout-worker';
import type { PayoutRail } from '../payouts/rail';
import { createWebhooks, type WebhooksDeps } from './webhooks.wiring';
import { dashboardAdminRoutes } from '../admin/dashboard.routes';
import { DashboardSnapshots } from '../admin/dashboard.snapshot';
import { LogTail } from '../shared/log-tail';
import type { AddressAllocator } from '../wallet/allocator';
import { AddressLookahead } from '../wallet/address-lookahead';
import type { SensitiveLimits } from '../auth/sensitive-limiter';
import type { AppRouter, RouteGuards } from '../http/context';
import { createChains } from './chains.wiring';
import { OpenParts, type DaemonModule } from './module';

import { adminSocketPath, pidFilePath } from './paths';
import { UserError } from '../shared/errors';
import { dnsResolver, TargetGuard } from '../shared/target-guard';

export interface DaemonOptions {
  logger?: Logger;
  clock?: Clock;
  /** Write <data_dir>/coinkeepd.pid (the CLI's start/stop use it). */
  pidFile?: boolean;
  /** Tests: issue deposit addresses with this allocator instead of the wallet's. */
  allocator?: AddressAllocator;
  /** Tests: build chain adapters with this factory instead of the families' own. */
  adapterFor?: AdapterFactory;
  /** Tests only: extra API routers, mounted last, built with the real auth and idempotency middleware. */
  extraRouters?: (guards: RouteGuards) => AppRouter[];
  /** Tests: how many signatures one key may hold in the replay guard (REPLAY_KEY_SHARE otherwise). */
  replayKeyShare?: number;
  /** Benchmarks: the sensitive-operation limits (SPEC "Limits") instead of the defaults. */
  sensitiveLimits?: SensitiveLimits;
  /** Tests and benchmarks: the webhook guard's resolver, concurrency bounds and attempt timeout. */
  webhooks?: Pick<WebhooksDeps, 'resolve' | 'limits' | 'timeoutMs'>;
  /** Crash tests (test/helpers/crashing-daemon.ts): called at each payout checkpoint, where the daemon may kill itself. */
  payoutCheckpoint?: (point: PayoutCheckpoint) => void;
  /** Tests: the signer server in this process (test/helpers/signer-process.ts) instead of a child `coinkeep signer`. */
  signer?: InProcessSigner;
  /** The simulator's planted bugs (test/sim/planted-bugs.ts): the outbox, ledger and money movement built by these instead. */
  parts?: {
    outbox?: () => Outbox;
    ledger?: (clock: Clock) => Ledger;
    money?: (deps: ConstructorParameters<typeof MoneyMovement>[0]) => MoneyMovement;
    /** Each chain's payout rail as the payout worker uses it: the rail wired for the chain, or what this makes of it. */
    payoutRail?: (rail: PayoutRail, chain: ChainConfig) => PayoutRail;
  };
}

export interface Daemon {
  config: Config;
  apiUrl: string;
  /** `GET /metrics` of the metrics listener; null when `metrics.listen` is off. */
  metricsUrl: string | null;
  store: Store;
  team: TeamService;
  keys: KeyService;
  rates: RateEngine;
  catalog: Catalog;
  /** The HD wallet (public keys only), the watched set and the deposit-address allocator (the wallet issue). */
  wallet: HdWallet;
  /** The signer process's client: the daemon holds no seed; it asks the signer (PRODUCT §18). */
  signer: SignerClient;
  /** The signer's state (up, mode, restarts), and its child's pid when the daemon started it. */
  signerStatus: () => SignerStatus;
  signerPid: () => number | null;
  watched: WatchedAddresses;
  addresses: AddressService;
  outbox: Outbox;
  ledger: Ledger;
  /** The one owner of money movement. */
  money: MoneyMovement;
  invoices: Awaited<ReturnType<typeof createInvoices>>;
  staticAddresses: ReturnType<typeof createStaticAddresses>;
  withdrawals: ReturnType<typeof createWithdrawals>;
  refunds: ReturnType<typeof createRefunds>;
  custody: ReturnType<typeof createCustody>;
  webhooks: Awaited<ReturnType<typeof createWebhooks>>;
  chains: ChainCore;
  /** Each watched chain's slow scan of archived static addresses (tests and benchmarks run a round directly). */
  archivedScans: ArchivedScan[];
  /** The chain core's recorder: through it every transfer reaches its handler (tests drive it directly). */
  recorder: TransferRecorder;
  /** Each EVM chain's sweeps, gas station and own transactions. */
  evmPayouts: ReturnType<typeof createEvmPayouts>;
  logger: Logger;
  stop(): Promise<void>;
}

export { pidFilePath };

/**
 * The one place that wires config → store → services → API, admin socket and jobs: each part's
 * `*.wiring.ts` returns a DaemonModule; the list is folded into the routers, the scheduler and the
 * transfer router, and what is open is closed in reverse order, by stop() or by a start that fails.
 */
export async function startDaemon(config: Config, opts: DaemonOptions = {}): Promise<Daemon> {
  // The dashboard's Log screen reads the newest lines from memory over the admin socket.
  const logTail = new LogTail();
  const logger = logTail.wrap(opts.logger ?? createLogger({ level: config.log_level }));
  ensureDataDir(config.data_dir);
  const sealer = new Sealer(loadMasterKey(config.data_dir, { create: false }));
  // The one shutdown signal: stop() aborts it, and every job, chain scan and webhook attempt sees it.
  const shutdown = new AbortController();
  const open = new OpenParts(logger);
  try {
    return await wire({ config, opts, logger, logTail, clock: opts.clock ?? systemClock, sealer, shutdown, open });
  } catch (err) {
    shutdown.abort();
    await open.closeAll();
    throw err;
  }
}

interface Start {
  config: Config;
  opts: DaemonOptions;
  logger: Logger;
  logTail: LogTail;
  clock: Clock;
  sealer: Sealer;
  shutdown: AbortController;
  open: OpenParts;
}

async function wire({ config, opts, logger, logTail, clock, sealer, shutdown, open }: Start): Promise<Daemon> {
  const { signal } = shutdown;
  const store = await Store.open({ url: config.database.url, backgroundCheckpoints: true });
  open.add('store', () => store.close());
  const applied = await store.migrate();
  if (applied.length) logger.info('migrations applied', { migrations: applied });
  const bound = await bindSealedValues(store, sealer);
  if (bound) logger.info('sealed values bound to their rows', { values: bound });

  // The seed is the signer process's alone: the daemon asks it for public keys and signatures.
  let addressesOf: AddressService | null = null;
  const signing = createSigner({ config, store, logger, signal, inProcess: opts.signer, branchPaths: () => addressesOf!.branchPaths() });
  open.add('signer', signing.module.close!);
  const signer = signing.client;
  const wallet = new HdWallet(signing.keys);
  const catalog = new Catalog(config.chains, config.fiat);
  const watched = new WatchedAddresses(addressGroups(config.chains));
  const lookahead = new AddressLookahead(config.chains);
  open.add('address lookahead', () => lookahead.close());
  const addresses = new AddressService({ store, wallet, chains: config.chains, catalog, watched, clock, lookahead });
  addressesOf = addresses;
  await signing.start();
  await addresses.loadWatched();
  const allocator = opts.allocator ?? addresses;
  const tickers = [...new Set(catalog.coins().map((c) => c.ticker))];
  const rates = new RateEngine({ sources: config.rates, tickers, fiats: config.fiat.enabled, clock, logger });
  const team = new TeamService(store, sealer, clock, config.fiat);
  const outbox = opts.parts?.outbox?.() ?? new Outbox();
  const ledger = opts.parts?.ledger?.(clock) ?? new Ledger(clock);
  const money = opts.parts?.money?.({ ledger, catalog, clock }) ?? new MoneyMovement({ ledger, catalog, clock });
  // One guard for every URL an account gives, so its bound on names resolving at once is one.
  const guard = new TargetGuard({ allowPrivate: config.webhooks.allow_private_targets, resolve: opts.webhooks?.resolve ?? dnsResolver(config.webhooks.dns) });

  const router = new TransferRouter();
  const modules: DaemonModule[] = [];
  const install = <T extends { module: DaemonModule }>(name: string, part: T): T => {
    modules.push(part.module);
    for (const route of part.module.transfers ?? []) for (const purpose of route.purposes) router.register(purpose, route.direction, route.handler);
    for (const screen of part.module.screens ?? []) router.screen(screen);
    if (part.module.close) open.add(name, part.module.close);
    return part;
  };
  const auth = install(
    'auth',
    await createAuth({ config, store, sealer, clock, logger, team, replayKeyShare: opts.replayKeyShare, sensitiveLimits: opts.sensitiveLimits }),
  );
  const { guards } = auth;
  // The payment page's routes are built before the refunds service exists: they reach its payer side through this.
  let refundSource: RefundPageSource | null = null;
  const refundPages: RefundPageSource = {
    view: (id, token) => (refundSource ? refundSource.view(id, token) : Promise.resolve(null)),
    check: (id, token, address) => refundSource!.check(id, token, address),
    provide: (id, token, address) => refundSource!.provide(id, token, address),
  };
  const invoices = install(
    'invoices',
    await createInvoices({ config, store, catalog, rates, allocator, outbox, money, clock, logger, guard, guards, refundPages, signal }),
  );
  const webhooks = install('webhooks', await createWebhooks({ config, store, sealer, outbox, clock, logger, guard, guards, signal, ...opts.webhooks }));
  const staticAddresses = install(
    'static addresses',
    createStaticAddresses({ config, store, catalog, allocator, outbox, money, watched, clock, logger, guards }),
  );
  const strays = install('strays', createStrays({ store, catalog, money, outbox, clock, guards }));
  // Only a shared database has addresses issued by another daemon to learn before each batch.
  const learnAddresses = store.dialect === 'postgres' ? () => addresses.loadWatched() : undefined;
  const chains = install(
    'chains',
    await createChains({ config, store, catalog, watched, router, learnAddresses, adapterFor: opts.adapterFor, clock, logger, signal }),
  );
  const ceilings = feeCeilings(config.chains, clock);
  const evmPayouts = install(
    'evm payouts',
    createEvmPayouts({ config, store, catalog, chains: chains.core, addresses, signer, sealer, money, ceilings, clock, logger }),
  );
  const withdrawals = install(
    'withdrawals',
    createWithdrawals({
      config,
      store,
      catalog,
      rates,
      chains: chains.core,
      watched,
      money,
      outbox,
      team,
      keys: auth.keys,
      limiter: auth.limiter,
      clock,
      logger,
      guards,
      signer,
      addresses,
      sealer,
      payoutCheckpoint: opts.payoutCheckpoint,
      wrapRail: opts.parts?.payoutRail,
      isOperatorAddress: evmPayouts.isGasStation,
      evmRails: evmPayouts.rails,
      ceilings,
    }),
  );
  const refunds = install(
    'refunds',
    createRefunds({
      config,
      store,
      catalog,
      withdrawals: withdrawals.service,
      strays: strays.service,
      team,
      outbox,
      sealer,
      keys: auth.keys,
      clock,
      logger,
      guards,
    }),
  );
  refundSource = refunds.service.pages;
  const custody = install(
    'custody',
    createCustody({ config, store, catalog, withdrawals: withdrawals.service, money, team, limiter: auth.limiter, clock, logger }),
  );
  install('api', {
    module: {
      routes: [transactionsApi({ store, catalog, clock, logger, guards }), ...(opts.extraRouters?.(guards) ?? [])],
      jobs: [{ job: refreshRatesJob(rates, config.rates.refresh_seconds), runAtStart: true }],
    },
  });

  // Stopped after the servers close (closing is in reverse order), before the parts its jobs use.
  const scheduler = new Scheduler(logger, signal);
  open.add('scheduler', () => scheduler.stop());
  const startedAt = clock.now();
  const alerts = () => payoutAlerts(store.read, clock.now(), config.payouts.stuck_alert_minutes);
  const metrics = config.metrics.listen
    ? createMetrics({ store, chains: chains.core, catalog, payoutAlerts: alerts, signerUp: () => signing.status().up })
    : null;
  const app = createApp({
    logger,
    trustProxy: config.trust_proxy,
    screen: auth.screen,
    observe: metrics?.koaObserver(),
    routers: [
      healthRoutes(),
      readyRoutes(() => readiness({ store, chains: chains.core })),
      openApiRoutes(openApiDocument),
      catalogRoutes({ catalog, rates, guards }),
      ...modules.flatMap((m) => m.routes ?? []),
    ],
  });
  const server = http.createServer(app.callback());
  answerClientErrors(server);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.listen.port, config.listen.host, () => resolve());
  }).catch((err: NodeJS.ErrnoException) => {
    throw listenError(err, `${config.listen.host}:${config.listen.port}`);
  });
  open.add('API server', () => closeServer(server));
  const addr = server.address() as AddressInfo;
  const apiUrl = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;

  const metricsServer =
    metrics && config.metrics.listen
      ? await listenMetrics(metrics, config.metrics.listen.host, config.metrics.listen.port, (err) =>
          logger.error('metrics scrape failed', { error: String(err) }),
        ).catch((err: NodeJS.ErrnoException) => {
          throw listenError(err, `${config.metrics.listen!.host}:${config.metrics.listen!.port}`, 'metrics.listen');
        })
      : null;
  if (metricsServer) open.add('metrics server', () => closeServer(metricsServer.server));

  const gasStations = evmPayouts.gasStations;
  const admin = await listenAdmin(
    adminSocketPath(config.data_dir),
    [
      healthRoutes(),
      statusAdminRoutes({
        config,
        apiUrl,
        startedAt,
        rates,
        chains: chains.core,
        gasStations,
        payoutAlerts: alerts,
        feeCeilings: () => [...ceilings.values()].flatMap((c) => c.status() ?? []),
        signer: signing.status,
      }),
      teamAdminRoutes(team),
      // The fingerprint only: the backup words are the signer's (`coinkeep signer backup`), never the daemon's.
      walletAdminRoutes({ fingerprint: signing.keys.fingerprint, addresses, chains: config.chains, logger }),
      ledgerAdminRoutes({ store, catalog, holdingsOf: (chainId) => chains.core.holdings(chainId) }),
      invoiceAdminRoutes({ store, presenter: invoices.presenter }),
      ...modules.flatMap((m) => m.adminRoutes ?? []),
      dashboardAdminRoutes(
        new DashboardSnapshots({
          config,
          store,
          team,
          keys: auth.keys,
          catalog,
          chains: chains.core,
          ledger,
          logTail,
          clock,
          startedAt,
          gasStations,
          payoutAlerts: alerts,
          signer: signing.status,
          refunds: async (accountId) => ({
            decisions: await refunds.service.decisions(accountId),
            open: (await refunds.service.open(accountId)).map((r) => ({ ...r, account_id: accountId })),
          }),
          cold: async (em, accountId) => ({
            rules: await custody.service.ruleCoins(em, accountId),
            totals: await custody.service.coldTotals(em, accountId),
          }),
        }),
      ),
    ],
    logger,
  );
  open.add('admin socket', () => closeServer(admin));

  for (const { job, runAtStart } of modules.flatMap((m) => m.jobs ?? [])) scheduler.add(job, { runAtStart });

  const pidFile = pidFilePath(config.data_dir);
  if (opts.pidFile) writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  logger.info('coinkeepd started', { api_url: apiUrl, metrics_url: metricsServer?.url ?? null, network: config.network, pid: process.pid });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('coinkeepd stopping');
      shutdown.abort();
      await open.closeAll();
      if (opts.pidFile) rmSync(pidFile, { force: true });
      logger.info('coinkeepd stopped');
    })());

  return {
    config,
    apiUrl,
    metricsUrl: metricsServer?.url ?? null,
    store,
    team,
    keys: auth.keys,
    rates,
    catalog,
    wallet,
    signer,
    signerStatus: signing.status,
    signerPid: signing.childPid,
    watched,
    addresses,
    outbox,
    ledger,
    money,
    invoices,
    staticAddresses,
    withdrawals,
    refunds,
    custody,
    webhooks,
    chains: chains.core,
    archivedScans: chains.archivedScans,
    recorder: chains.recorder,
    evmPayouts,
    logger,
    stop,
  };
}

/** A listen failure as one line naming the address and the config key (EADDRINUSE, EACCES...). */
function listenError(err: NodeJS.ErrnoException, where: string, key = 'listen'): Error {
  const reason =
    err.code === 'EADDRINUSE'
      ? 'address already in use'
      : err.code === 'EACCES'
        ? 'permission denied'
        : err.code === 'EADDRNOTAVAIL'
          ? 'address not available on this host'
          : err.message;
  return new UserError(`cannot listen on ${where} (${key}): ${reason}`);
}

/** Stops accepting, lets in-flight requests finish, then closes idle keep-alive sockets. */
function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
