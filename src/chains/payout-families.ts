import { btcPayouts } from './btc/payouts/family-payouts';
import { evmPayouts } from './evm/payouts/family-payouts';
import type { ChainKind } from './family';
import { tronPayouts } from './tron/payouts/family-payouts';
import type { FamilyPayouts } from '../payouts/family-payouts';

/**
 * The money-moving half of each chain family, by kind (beside familyOf in families.ts: this half
 * works with the payout worker and the wallet, a layer above the chain core, so it is a registry of
 * its own). A record keyed by every kind: a family missing here does not compile.
 */
const PAYOUTS: Record<ChainKind, FamilyPayouts> = { btc: btcPayouts, evm: evmPayouts, tron: tronPayouts };

export const payoutsOf = (kind: ChainKind): FamilyPayouts => PAYOUTS[kind];
