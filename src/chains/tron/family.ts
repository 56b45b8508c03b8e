import type { ChainFamily } from '../family';
import { tronScheme } from './derive';
import { TronAdapter } from './tron-adapter';

/** Tron: accounts like EVM, its own address form, fees priced by its payout rail only. */
export const tronFamily: ChainFamily = {
  kind: 'tron',
  adapter: (chain) => new TronAdapter(chain),
  addressScheme: () => tronScheme(),
  // Tron wallets agree on no URI scheme: a plain address.
  paymentUri: (_coin, address) => address,
  networkFeeReserve: () => null,
  holdings: { by: 'addresses', pastHeight: false },
  addresses: { treasuries: true, change: false },
};
