import { coinId } from '../../../src/catalog/coins';
import { ChainTransferEntity } from '../../../src/db/entities/chain';
import type { Store } from '../../../src/db/store';
import { newId } from '../../../src/shared/ids';

export const USDT_CONTRACT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
export const BTC = coinId('bitcoin', 'native');
export const ETH = coinId('ethereum', 'native');
export const USDT = coinId('ethereum', USDT_CONTRACT);

/** Two chains (nodes never contacted: these tests only read what the database holds). */
export const CHAINS = {
  chains: [
    { id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:9' },
    { id: 'ethereum', kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:9', tokens: [{ ticker: 'USDT', contract: USDT_CONTRACT, decimals: 6 }] },
  ],
};

/** A chain transfer row a transaction can point at (for its confirmations). */
export async function chainTransfer(store: Store, accountId: string, coin: string, confirmations: number): Promise<string> {
  const id = newId();
  const now = new Date().toISOString();
  await store.write((em) =>
    em.insert(ChainTransferEntity, {
      id,
      chain_id: 'ethereum',
      coin_id: coin,
      txid: `0x${id.replace(/-/g, '')}`,
      output_index: 0,
      address: '0x0000000000000000000000000000000000000001',
      address_id: newId(),
      account_id: accountId,
      amount: '1',
      block_height: 10,
      block_hash: '0xabc',
      confirmations,
      status: 'confirmed',
      seen_at: now,
      confirmed_at: now,
      reverted_at: null,
      created_at: now,
      updated_at: now,
    }),
  );
  return id;
}
