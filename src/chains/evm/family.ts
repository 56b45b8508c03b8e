import { NATIVE_ASSET } from '../../catalog/coins';
import { Amount } from '../../shared/money';
import type { ChainFamily } from '../family';
import { reservedGas } from './gas';
import { evmScheme } from './derive';
import { EvmAdapter } from './evm-adapter';

/** Ethereum and every EVM network (configuration of this one family). */
export const evmFamily: ChainFamily = {
  kind: 'evm',
  adapter: (chain) => new EvmAdapter(chain),
  addressScheme: () => evmScheme(),
  // EIP-681: the native coin's value in wei; a token as an ERC-20 `transfer` call in base units.
  paymentUri: (coin, address, amount, evmChainId) => {
    const units = Amount.of(amount).toBaseUnits(coin.decimals).toString();
    const on = evmChainId === undefined ? '' : `@${evmChainId}`;
    if (coin.asset === NATIVE_ASSET) return `ethereum:${address}${on}?value=${units}`;
    return `ethereum:${coin.asset}${on}/transfer?address=${address}&uint256=${units}`;
  },
  // PRODUCT §8a: the payout's gas (a token's adds the treasury's top-up) at the current fee cap.
  networkFeeReserve: (quote, token) => (quote.kind === 'evm' ? reservedGas(token) * quote.maxFeePerGas : null),
  holdings: { by: 'addresses', pastHeight: true },
  addresses: { treasuries: true, change: false },
};
