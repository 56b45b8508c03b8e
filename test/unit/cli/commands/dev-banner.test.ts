/**
 * Issue 33 §3: the sandbox banner's refund example: the demo invoice to overpay, the `dev pay
 * --amount` line that overpays it, and the signed curl that refunds the excess, as printed.
 */
import test from 'ava';
import { devBanner } from '../../../../src/cli/commands/dev';
import { signedCurl } from '../../../../src/cli/commands/signed-curl';

const curl = signedCurl('http://127.0.0.1:8421', 'ck_test_x', 's', 'POST', '/v1/refunds', '{"invoice_id":"inv-1","amount":"excess"}');
const info = {
  base_url: 'http://127.0.0.1:8421',
  data_dir: '/tmp/data',
  account_id: 'acc',
  owner_email: 'owner@demo.coinkeep.test',
  owner_totp_secret: 'SECRET',
  chains: [],
  checkout_url: 'http://127.0.0.1:8421/pay/x',
};

test('the banner prints the overpaid demo invoice, its dev pay --amount line and the signed refund curl of its excess', (t) => {
  const text = devBanner({
    ...info,
    refund_example: {
      invoice_id: 'inv-1',
      ticker: 'BTC',
      payer_amount: '0.001',
      pay_amount: '0.0015',
      excess: '0.0005',
      pay_command: 'coinkeep dev pay inv-1 --amount 0.0015',
      refund_curl_example: curl,
    },
  });
  t.true(
    text.includes(
      [
        'Refund an overpayment: demo invoice inv-1 asks 0.001 BTC; overpay it by 0.0005 BTC with',
        '',
        '  coinkeep dev pay inv-1 --amount 0.0015',
        '',
        'then refund the excess (the answer has refund_url: the payer opens it and enters their address; paste twice, the same refund):',
        '',
        curl,
      ].join('\n'),
    ),
    text,
  );
  t.true(curl.includes(`BODY='{"invoice_id":"inv-1","amount":"excess"}'`));
  t.true(curl.includes(`-X POST 'http://127.0.0.1:8421/v1/refunds'`));
});

test('without a Bitcoin chain the banner has no refund example', (t) => {
  t.false(devBanner(info).includes('Refund an overpayment'));
});
