import test from 'ava';
import type { Coin } from '../../../src/catalog/coins';
import { parseEmbedOrigins } from '../../../src/checkout/embed.service';
import { pickLanguage } from '../../../src/checkout/messages';
import { paymentUri } from '../../../src/checkout/payment-uri';

const coin = (c: Partial<Coin>): Coin => ({
  id: 'x',
  chain_id: 'c',
  asset: 'native',
  ticker: 'T',
  name: 'T',
  network: 'c',
  decimals: 8,
  invoice_enabled: true,
  family: 'btc',
  ...c,
});

test('the QR of BTC is BIP21 with the amount in BTC', (t) => {
  t.is(paymentUri(coin({ family: 'btc' }), 'bc1qxyz', '0.00147059', undefined), 'bitcoin:bc1qxyz?amount=0.00147059');
});

test('the QR of ETH is EIP-681 with the value in wei and the chain id when known', (t) => {
  const eth = coin({ family: 'evm', decimals: 18 });
  t.is(paymentUri(eth, '0xabc', '1.5', 1), 'ethereum:0xabc@1?value=1500000000000000000');
  t.is(paymentUri(eth, '0xabc', '1.5', undefined), 'ethereum:0xabc?value=1500000000000000000');
});

test('the QR of an ERC-20 is an EIP-681 transfer call with the amount in base units', (t) => {
  const usdt = coin({ family: 'evm', asset: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 });
  t.is(paymentUri(usdt, '0xabc', '12.5', 1), 'ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=0xabc&uint256=12500000');
});

test('the QR of Tron is the plain address', (t) => {
  t.is(paymentUri(coin({ family: 'tron', decimals: 6, asset: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }), 'TXyz', '10', undefined), 'TXyz');
});

test('?lang= wins when shipped; else the most preferred shipped language of Accept-Language; else English', (t) => {
  t.is(pickLanguage('de', 'en'), 'de');
  t.is(pickLanguage('xx', 'fr;q=0.9, de-AT;q=0.8, en;q=0.5'), 'de');
  t.is(pickLanguage(undefined, 'de;q=0.2, en;q=0.7'), 'en');
  t.is(pickLanguage(undefined, 'de;q=0'), 'en');
  t.is(pickLanguage(undefined, ''), 'en');
  t.is(pickLanguage(['de'], ''), 'en');
  // Names every object has are no language.
  for (const name of ['constructor', '__proto__', 'toString']) {
    t.is(pickLanguage(name, `${name}, de;q=0.1`), 'de');
    t.is(pickLanguage(name, name), 'en');
  }
});

test('embed origins are exact https origins (http too on a testnet), at most 20, kept once each', (t) => {
  t.deepEqual(parseEmbedOrigins({ allowed_origins: ['https://a.example', 'https://a.example', 'https://[::1]:8443'] }, false), [
    'https://a.example',
    'https://[::1]:8443',
  ]);
  t.throws(() => parseEmbedOrigins({ allowed_origins: ['http://a.example'] }, false), { message: /https origin/ });
  t.deepEqual(parseEmbedOrigins({ allowed_origins: ['http://127.0.0.1:3000'] }, true), ['http://127.0.0.1:3000']);
  for (const bad of ['https://a.example/', 'https://*.a.example', "https://a.example'", 'https://a.example:443', 'javascript:alert(1)']) {
    t.throws(() => parseEmbedOrigins({ allowed_origins: [bad] }, false), undefined, bad);
  }
});
