import type { FamilyPayouts } from '../../../payouts/family-payouts';
import { BtcRail } from './btc-rail';

/** Bitcoin has no sends of its own (nothing to sweep): its payout rail only, priced by the account's coins. */
export const btcPayouts: FamilyPayouts = {
  rail(deps) {
    const rail = new BtcRail({ chain: deps.chain, signer: deps.signer, addresses: deps.addresses, clock: deps.clock }, deps.node, deps.ceiling);
    return {
      rail,
      networkCost: (req) =>
        req.quote.kind === 'btc'
          ? rail.networkCost(deps.store.read, { ...req, satPerVbyte: req.quote.satPerVbyte })
          : Promise.reject(new Error('not a Bitcoin fee quote')),
    };
  },
};
