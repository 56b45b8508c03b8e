import { newRouter, type AppRouter } from '../http/context';
import type { GasStationStatus } from '../chains/evm/payouts/evm-chain-payouts';
import { notFound } from '../shared/errors';
import type { GasStationResponse } from './contract';

/** `coinkeep wallet gas-station --chain ID`: the operator's address that pays an EVM chain's sweep and payout gas, or stakes a Tron chain's energy. */
export function gasStationAdminRoutes(chains: ReadonlyMap<string, { status(): GasStationStatus; gasStation: { path: string } }>): AppRouter {
  const r = newRouter('/admin/wallet/gas-station');
  r.get('/:chainId', (ctx) => {
    const chain = chains.get(ctx.params.chainId!);
    if (!chain) throw notFound('EVM or Tron chain with a gas station');
    ctx.body = { ...chain.status(), path: chain.gasStation.path } satisfies GasStationResponse;
  });
  return r;
}
