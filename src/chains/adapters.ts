import type { ChainConfig } from '../config/schema';
import { systemClock, type Clock } from '../shared/clock';
import type { AdapterFactory } from './chain-core';
import type { DoctorEndpoint } from './doctor';
import { familyOf } from './families';
import type { ChainAdapter } from './types';

/** The adapter of a configured chain, from its family: it reads and sends through a pool of the chain's endpoints (PRODUCT §15). */
export const adapterFor: AdapterFactory = (chain: ChainConfig, clock: Clock = systemClock): ChainAdapter => familyOf(chain.kind).adapter(chain, clock);

/** Each endpoint of a chain on its own, with its family's checks: what `coinkeep doctor` asks of every one in turn. */
export const doctorEndpoints = (chain: ChainConfig): DoctorEndpoint[] => chain.nodes.endpoints.map((e) => familyOf(chain.kind).doctorEndpoint(chain, e));
