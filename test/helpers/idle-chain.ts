import type { BlockHeader, BlockRef, ChainReader, NormalisedBlock } from '../../src/chains/types';

/**
 * A node whose chain is its genesis block and never grows: the chain core watches it and finds
 * nothing, so its coins take invoices while a test drives payments another way (FakeChainSource).
 */
export class IdleChain implements ChainReader {
  private readonly genesis: NormalisedBlock = { height: 0, hash: 'idle-genesis', parentHash: 'idle-none', transfers: [] };

  constructor(readonly chainId: string) {}

  async tip(): Promise<BlockRef> {
    return this.genesis;
  }

  async header(): Promise<BlockHeader> {
    return this.genesis;
  }

  async blocks(): Promise<NormalisedBlock[]> {
    return [this.genesis];
  }
}
