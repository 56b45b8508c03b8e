import type { ChainCore } from '../chains/chain-core';
import type { Config } from '../config/schema';
import { newRouter, type AppRouter } from '../http/context';
import type { RateEngine } from '../rates/engine';
import type { FeeCeilingStatus, GasStationStatus, PayoutAlert, SignerStatusView, StatusResponse } from './contract';

/** `coinkeep status`: what runs, where, since when, each chain's node tip, scanned height, lag and last error, the payouts to look at, and the chains whose fee is above their ceiling. */
export function statusAdminRoutes(deps: {
  config: Config;
  apiUrl: string;
  startedAt: Date;
  rates: RateEngine;
  chains: ChainCore;
  gasStations?: () => GasStationStatus[];
  payoutAlerts?: () => Promise<PayoutAlert[]>;
  feeCeilings?: () => FeeCeilingStatus[];
  signer?: () => SignerStatusView;
}): AppRouter {
  const r = newRouter('/admin');
  r.get('/status', async (ctx) => {
    ctx.body = {
      status: 'running',
      pid: process.pid,
      network: deps.config.network,
      api_url: deps.apiUrl,
      base_url: deps.config.base_url,
      data_dir: deps.config.data_dir,
      database: deps.config.database.url.startsWith('sqlite:') ? 'sqlite' : 'postgres',
      started_at: deps.startedAt.toISOString(),
      uptime_seconds: Math.floor(process.uptime()),
      chains: deps.chains.status(),
      gas_stations: deps.gasStations?.() ?? [],
      payout_alerts: (await deps.payoutAlerts?.()) ?? [],
      fee_ceilings: deps.feeCeilings?.() ?? [],
      ...(deps.signer ? { signer: deps.signer() } : {}),
    } satisfies StatusResponse;
  });
  return r;
}
