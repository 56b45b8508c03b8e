import test from 'ava';
import type { PayerCoin, PayerView } from '../../../src/checkout/checkout.service';
import { messagesOf } from '../../../src/checkout/messages';
import { renderPage } from '../../../src/checkout/page';

const coin = (c: Partial<PayerCoin>): PayerCoin => ({
  coin_id: '00000000-0000-4000-8000-000000000001',
  ticker: 'ETH',
  name: 'Ether',
  network: 'ethereum',
  network_name: 'Ethereum',
  token_standard: null,
  ...c,
});

const view = (v: Partial<PayerView>): PayerView => ({
  id: '0190a0a0-0000-7000-8000-000000000000',
  status: 'new',
  merchant: 'Shop',
  amount: '25',
  currency: 'USD',
  coin: null,
  address: null,
  payer_amount: null,
  paid_amount: '0',
  remaining_amount: '0',
  late_payment: false,
  confirmations: null,
  ttl_expires_at: '2030-01-01T00:00:00.000Z',
  return_url: null,
  choices: [],
  payment_uri: null,
  ...v,
});

const render = (v: PayerView, lang = 'en') => renderPage({ view: v, lang, m: messagesOf(lang), qr: null, parents: [] });

test('every coin choice names its network beside the ticker, with the token standard where payers know one', (t) => {
  const html = render(
    view({
      choices: [
        { ...coin({ ticker: 'USDT', network: 'tron', network_name: 'Tron', token_standard: 'TRC-20' }), approx_amount: '25.0125' },
        { ...coin({ ticker: 'USDC', network: 'base', network_name: 'Base' }), approx_amount: '25.0125' },
        { ...coin({}), approx_amount: '0.007352941176470589' },
        { ...coin({ ticker: 'BTC', network: 'bitcoin', network_name: 'Bitcoin' }), approx_amount: null },
        { ...coin({ ticker: 'USDT', network: 'bsc', network_name: 'BNB Smart Chain', token_standard: 'BEP-20' }), approx_amount: '25.0125' },
      ],
    }),
  );
  for (const label of ['USDT on Tron (TRC-20)', 'USDC on Base', 'ETH on Ethereum', 'BTC on Bitcoin', 'USDT on BNB Smart Chain (BEP-20)']) {
    t.true(html.includes(`Pay with ${label}<`), label);
  }
  t.true(
    render(view({ choices: [{ ...coin({ ticker: 'USDT', network_name: 'Tron', token_standard: 'TRC-20' }), approx_amount: '1' }] }), 'de').includes(
      'Mit USDT auf Tron (TRC-20) bezahlen',
    ),
  );
});

test('approximate amounts are written for people; the page says the exact amount comes with the choice', (t) => {
  const html = render(
    view({
      choices: [
        { ...coin({}), approx_amount: '0.007352941176470589' },
        { ...coin({ ticker: 'USDT' }), approx_amount: '25.0125' },
      ],
    }),
  );
  t.true(html.includes('about 0.007353 ETH'));
  t.false(html.includes('0.007352941176470589 ETH'));
  t.true(html.includes('about 25.01 USDT'));
  t.true(html.includes('The exact amount to send is shown once you choose.'));
});

test('with a coin the exact amount stays exact, the network is said plainly, and the wallet link is the payment URI with its chain id', (t) => {
  const uri = 'ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48@8453/transfer?address=0xabc&uint256=25012501';
  const html = render(
    view({
      coin: coin({ ticker: 'USDC', network: 'base', network_name: 'Base' }),
      address: '0xabc',
      payer_amount: '25.012501',
      remaining_amount: '25.012501',
      payment_uri: uri,
    }),
  );
  t.true(html.includes('<h2 id="coin-h">USDC on Base</h2>'));
  t.true(html.includes('Send only USDC on Base. Another coin, or this coin on another network, is not credited to this payment.'));
  t.true(html.includes('data-value="25.012501"'));
  t.true(html.includes('25.012501 USDC</code>'));
  t.true(html.includes(`<a id="open-wallet" class="button" href="${uri.replace(/&/g, '&amp;')}">`));
});

test('a Tron payment URI is a bare address: no wallet link', (t) => {
  const html = render(
    view({
      coin: coin({ ticker: 'USDT', network: 'tron', network_name: 'Tron', token_standard: 'TRC-20' }),
      address: 'TXyz',
      payer_amount: '25',
      remaining_amount: '25',
      payment_uri: 'TXyz',
    }),
  );
  t.true(html.includes('<h2 id="coin-h">USDT on Tron (TRC-20)</h2>'));
  t.false(html.includes('open-wallet'));
});
