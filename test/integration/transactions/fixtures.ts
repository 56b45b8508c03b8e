import { coinId } from '../../../src/catalog/coins';
import { ChainTransferEntity } from '../../../src/db/entities/chain';
import type { Store } from '../../../src/db/store';
import { confirmedTransferRow } from '../../helpers/chain-transfer-row';

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
  const row = confirmedTransferRow({ coin_id: coin, account_id: accountId, confirmations });
  await store.write((em) => em.insert(ChainTransferEntity, row));
  return row.id;
}
