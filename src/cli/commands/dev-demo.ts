import type { Daemon } from '../../daemon/main';
import { Amount } from '../../shared/money';
import { signedCurl } from './signed-curl';

export const DEMO_OWNER = 'owner@demo.coinkeep.test';

/** Creates the sandbox's demo account and its test key (once per dev data dir). */
export async function prepareDemo(daemon: Daemon): Promise<Record<string, unknown>> {
  const created = await daemon.team.createAccount('Demo shop', DEMO_OWNER);
  const { key } = await daemon.keys.create(created.account.id, { email: DEMO_OWNER }, {
    name: 'sandbox',
    permissions: ['read', 'create_invoice', 'create_address'],
    test: true,
  });
  return {
    account_id: created.account.id,
    owner_email: DEMO_OWNER,
    owner_totp_secret: created.member.totp_secret,
    key_id: key.key_id,
    key_secret: key.secret,
  };
}

/**
 * A curl line that creates a USD 25 invoice to be paid in `coinId` when pasted: it signs with openssl
 * at run time, so its timestamp is fresh.
 */
export const demoCurl = (baseUrl: string, keyId: string, secret: string, coinId: string): string =>
  signedCurl(baseUrl, keyId, secret, 'POST', '/v1/invoices', JSON.stringify({ amount: '25', currency: 'USD', coin_id: coinId }));

/** A USD 25 invoice without a coin, made at every start: its payment page lets the payer choose the coin. */
export async function demoInvoice(daemon: Daemon, accountId: string): Promise<{ id: string; checkout_url: string }> {
  const { invoice } = await daemon.invoices.service.create(accountId, {
    amount: Amount.of('25'),
    currency: 'USD',
    fiat: true,
    coin: null,
    allowedCoinIds: null,
    orderId: null,
    idempotencyByOrderId: false,
    description: 'Sandbox demo',
    returnUrl: null,
    webhookUrl: null,
    metadata: null,
    feePaidBy: 'merchant',
  });
  return invoice;
}
