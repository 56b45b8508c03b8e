import type { EntityManager } from 'typeorm';
import type { FamilyPayouts } from '../../../payouts/family-payouts';
import { TronAdapter } from '../tron-adapter';
import { TronChainPayouts } from './tron-chain-payouts';
import { TronRail } from './tron-rail';
import { TronSendQueue } from './tron-sends';
import { TronSweeper } from './tron-sweeper';

/** A Tron chain's own sends (sweeps, activations, top-ups, stakes and delegations), its gas station and its payout rail. */
export const tronPayouts: FamilyPayouts = {
  ownSends(deps) {
    const { chain, node, ceiling } = deps;
    if (!(node instanceof TronAdapter)) return null;
    const logger = deps.logger.child({ component: 'tron-payouts', chain: chain.id });
    const queue = new TronSendQueue({
      chain,
      node,
      store: deps.store,
      catalog: deps.catalog,
      signer: deps.signer,
      sealer: deps.sealer,
      clock: deps.clock,
      logger,
    });
    const gasStation = deps.addresses.gasStation(chain.id);
    const treasuryOf = (em: EntityManager, accountId: string) => deps.addresses.treasury(em, accountId, chain.id);
    const sweeper = new TronSweeper({
      chain,
      node,
      store: deps.store,
      catalog: deps.catalog,
      queue,
      money: deps.money,
      treasuryOf,
      gasStation,
      ceiling,
      clock: deps.clock,
      logger,
    });
    for (const kind of ['sweep', 'topup', 'stake', 'delegate', 'undelegate'] as const) queue.own(kind, sweeper);
    const sends = new TronChainPayouts({ chain, node, store: deps.store, queue, sweeper, gasStation, clock: deps.clock });
    const rail = new TronRail({
      chain,
      node,
      store: deps.store,
      catalog: deps.catalog,
      queue,
      sweeper,
      signer: deps.signer,
      treasuryOf,
      gasStation,
      ceiling,
      logger,
    });
    return {
      sends,
      job: `tron-sends-${chain.id}`,
      rail,
      networkCost: (req) => rail.networkCost(req),
      screen: (em, transfer) => sweeper.isTopUp(em, transfer),
    };
  },
};
