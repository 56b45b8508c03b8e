import type { ChainFamily } from '../family';
import { TWO_INPUT_PAYMENT_VSIZE } from './tx-size';
import { BtcAdapter } from './btc-adapter';
import { btcScheme } from './derive';

/** Bitcoin and its test networks: P2WPKH addresses, BIP21 payment URIs, coins and change. */
export const btcFamily: ChainFamily = {
  kind: 'btc',
  adapter: (chain) => new BtcAdapter(chain),
  addressScheme: (chain) => btcScheme(chain),
  paymentUri: (_coin, address, amount) => `bitcoin:${address}?amount=${amount}`,
  // Without the rail's own pricing (payouts off), a payment of two inputs at the quoted rate.
  networkFeeReserve: (quote) => (quote.kind === 'btc' ? BigInt(Math.ceil(quote.satPerVbyte * TWO_INPUT_PAYMENT_VSIZE)) : null),
  holdings: { by: 'outputs', pastHeight: false },
  addresses: { treasuries: false, change: true },
};
