import type { EntityManager } from 'typeorm';
import type { FamilyPayouts } from '../../../payouts/family-payouts';
import { EvmAdapter } from '../evm-adapter';
import { EvmChainPayouts } from './evm-chain-payouts';
import { EvmRail } from './evm-rail';
import { EvmSendQueue } from './send-queue';
import { EvmSweeper } from './sweeper';

/** An EVM chain's own sends (PRODUCT §8a: sweeps, top-ups, nonce fillers), its gas station and its payout rail. */
export const evmPayouts: FamilyPayouts = {
  ownSends(deps) {
    const { chain, node, ceiling } = deps;
    if (!(node instanceof EvmAdapter)) return null;
    const logger = deps.logger.child({ component: 'evm-payouts', chain: chain.id });
    const queue = new EvmSendQueue({
      chain,
      node,
      store: deps.store,
      catalog: deps.catalog,
      signer: deps.signer,
      sealer: deps.sealer,
      replaceAfterBlocks: chain.payouts.replace_after_blocks,
      ceiling,
      clock: deps.clock,
      logger,
    });
    const gasStation = deps.addresses.gasStation(chain.id);
    const treasuryOf = (em: EntityManager, accountId: string) => deps.addresses.treasury(em, accountId, chain.id);
    const sweeper = new EvmSweeper({
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
    // The sweeper books what the chain takes for the wallet's own sends: its sweeps and top-ups, and the fillers of given-back nonces.
    queue.own('sweep', sweeper).own('topup', sweeper).own('filler', sweeper);
    const sends = new EvmChainPayouts({ chain, node, store: deps.store, queue, sweeper, gasStation, clock: deps.clock });
    const rail = new EvmRail({
      chain,
      node,
      store: deps.store,
      catalog: deps.catalog,
      queue,
      sweeper,
      gasStation,
      treasuryOf,
      ceiling,
      money: deps.money,
      clock: deps.clock,
      logger,
    });
    sends.addGasNeed(() => rail.gasNeed());
    sends.addFinisher((signal) => rail.bookFinished(signal));
    return {
      sends,
      job: `evm-sends-${chain.id}`,
      rail,
      screen: (em, transfer) => sweeper.isTopUp(em, transfer),
      // The wallet's own spends from every kind of address: a final send reorganised away is followed again.
      outgoing: queue,
    };
  },
};
