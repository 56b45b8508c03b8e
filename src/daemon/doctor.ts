import { doctorEndpoints } from '../chains/adapters';
import { checkChain, type ChainReport } from '../chains/doctor';
import type { Config } from '../config/schema';
import { systemClock, type Clock } from '../shared/clock';

export type { ChainReport } from '../chains/doctor';
export { doctorLines } from '../chains/doctor';

/**
 * `coinkeep doctor` (PRODUCT §15): every configured chain's endpoints checked side by side, from
 * the config alone (no daemon, no database), so it runs before the first start too.
 */
export async function runDoctor(config: Config, signal: AbortSignal, clock: Clock = systemClock): Promise<ChainReport[]> {
  return Promise.all(config.chains.map((chain) => checkChain(chain, doctorEndpoints(chain), clock, signal)));
}
