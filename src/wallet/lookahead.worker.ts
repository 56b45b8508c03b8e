import { parentPort, workerData } from 'node:worker_threads';
import { schemeFor, type AddressScheme } from '../chains/derivation';
import type { ChainConfig } from '../config/schema';
import { publicChildKeys } from './child-key';
import type { LookaheadRequest, LookaheadResult } from './address-lookahead';

/**
 * The lookahead's thread (see address-lookahead.ts): derives the addresses of a public branch key.
 * It never sees a private key.
 */
const schemes = new Map<string, AddressScheme>((workerData as { chains: ChainConfig[] }).chains.map((c) => [c.id, schemeFor(c)]));

parentPort!.on('message', (req: LookaheadRequest) => {
  const scheme = schemes.get(req.chainId);
  if (!scheme) return;
  const keyOf = publicChildKeys(req);
  const addresses: string[] = [];
  for (let i = 0; i < req.count; i++) addresses.push(scheme.address(keyOf(req.from + i, scheme.compressedKey)));
  const result: LookaheadResult = { chainId: req.chainId, branch: req.branch, from: req.from, addresses };
  parentPort!.postMessage(result);
});
