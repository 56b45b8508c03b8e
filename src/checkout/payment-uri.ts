import QRCode from 'qrcode';
import { NATIVE_ASSET, type Coin } from '../catalog/coins';
import { Amount } from '../shared/money';

/**
 * What a wallet scans to pay (the QR rules): BIP21 `bitcoin:` with the amount in BTC;
 * EIP-681 for EVM chains (the native coin's value in wei, an ERC-20 as a `transfer` call with the
 * amount in base units); a plain address for Tron, whose wallets agree on no URI scheme.
 */
export function paymentUri(coin: Coin, address: string, amount: string, evmChainId: number | undefined): string {
  const units = Amount.of(amount).toBaseUnits(coin.decimals).toString();
  switch (coin.family) {
    case 'btc':
      return `bitcoin:${address}?amount=${amount}`;
    case 'evm': {
      const on = evmChainId === undefined ? '' : `@${evmChainId}`;
      if (coin.asset === NATIVE_ASSET) return `ethereum:${address}${on}?value=${units}`;
      return `ethereum:${coin.asset}${on}/transfer?address=${address}&uint256=${units}`;
    }
    case 'tron':
      return address;
  }
}

/** QR codes already drawn, by payment URI: a payer's reloads and status-driven reloads draw each once. */
const drawn = new Map<string, string>();
const DRAWN_MAX = 1000;

/** The QR code of a payment URI as an SVG element (dark modules on a light quiet zone: scanners want that in dark mode too). */
export async function qrSvg(text: string): Promise<string> {
  const known = drawn.get(text);
  if (known !== undefined) return known;
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
  if (drawn.size >= DRAWN_MAX) drawn.clear();
  drawn.set(text, svg);
  return svg;
}
