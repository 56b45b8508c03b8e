import type { Coin } from '../catalog/coins';
import { familyOf } from '../chains/families';

/**
 * What a wallet scans to pay (the QR rules), in the coin's family's form: BIP21 for
 * Bitcoin, EIP-681 for EVM chains, a plain address for Tron (src/chains/<kind>/family.ts).
 */
export function paymentUri(coin: Coin, address: string, amount: string, evmChainId: number | undefined): string {
  return familyOf(coin.family).paymentUri(coin, address, amount, evmChainId);
}

/** QR codes already drawn, by payment URI: a payer's reloads and status-driven reloads draw each once. */
const drawn = new Map<string, string>();
const DRAWN_MAX = 1000;

/** The QR code of a payment URI as an SVG element (dark modules on a light quiet zone: scanners want that in dark mode too). */
export async function qrSvg(text: string): Promise<string> {
  const known = drawn.get(text);
  if (known !== undefined) return known;
  // Loaded on the first QR drawn: most daemon processes (and every CLI) never draw one.
  const QRCode = require('qrcode') as typeof import('qrcode');
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
  if (drawn.size >= DRAWN_MAX) drawn.clear();
  drawn.set(text, svg);
  return svg;
}
