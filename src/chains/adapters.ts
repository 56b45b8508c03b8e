import type { AdapterFactory } from './chain-core';
import { familyOf } from './families';

/** The adapter of a configured chain, from its family. */
export const adapterFor: AdapterFactory = (chain) => familyOf(chain.kind).adapter(chain);
