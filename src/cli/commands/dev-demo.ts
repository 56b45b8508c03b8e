import type { Daemon } from '../../daemon/main';
import { withSandboxCode } from '../../dev/sandbox-otp';
import { Amount } from '../../shared/amount';
import { signedCurl } from './signed-curl';

export const DEMO_OWNER = 'owner@demo.coinkeep.test';
/** The second person of the demo account: `coinkeep dev approve` approves as them (PRODUCT §14). */
export const DEMO_APPROVER = 'approver@demo.coinkeep.test';

/** Creates the sandbox's demo account and its test key (once per dev data dir). */
export async function prepareDemo(daemon: Daemon): Promise<Record<string, unknown>> {
  const created = await daemon.team.createAccount('Demo shop', DEMO_OWNER);
  const { key } = await daemon.keys.create(
    created.account.id,
    { email: DEMO_OWNER },
    {
      name: 'sandbox',
      permissions: ['read', 'create_invoice', 'create_address'],
      test: true,
    },
  );
  return {
    account_id: created.account.id,
    owner_email: DEMO_OWNER,
    owner_totp_secret: created.member.totp_secret,
    key_id: key.key_id,
    key_secret: key.secret,
  };
}

/**
 * Lets the demo account pay out, at every start (a sandbox made before withdrawals gets it too):
 * the operator marks the account verified, and the demo owner grants `withdraw` on the demo key
 * with the sandbox's own two-factor code, through the key service like any owner's grant.
 */
export async function enableDemoWithdrawals(daemon: Daemon, demo: { account_id: string; key_id: string; owner_totp_secret: string }): Promise<void> {
  const account = await daemon.team.getAccount(demo.account_id);
  if (!account.verified) await daemon.team.setVerified(demo.account_id, true);
  const key = await daemon.keys.show(demo.account_id, demo.key_id);
  if (key.withdraw_status === 'granted') return;
  await withSandboxCode(demo.owner_totp_secret, (otp) =>
    daemon.keys.update(demo.account_id, demo.key_id, { email: DEMO_OWNER, otp }, { permissions: [...key.permissions, 'withdraw'] }),
  );
}

/**
 * The demo account's approver, an admin the operator adds (so their approval counts at once): the
 * demo owner holds the demo key's secret and granted its `withdraw`, so their own approval of its
 * withdrawals does not count. Null when the sandbox has one already; else what demo.json adds.
 */
export async function addDemoApprover(daemon: Daemon, demo: Record<string, unknown>): Promise<{ approver_email: string; approver_totp_secret: string } | null> {
  if (typeof demo.approver_totp_secret === 'string') return null;
  const { member } = await daemon.team.addMember(String(demo.account_id), { kind: 'operator' }, DEMO_APPROVER, 'admin');
  return { approver_email: DEMO_APPROVER, approver_totp_secret: member.totp_secret };
}

/** What the banner's withdrawal examples pay: above the dust limit, well within a demo invoice's USD 25. */
export const DEMO_WITHDRAWAL_AMOUNT = '0.0002';

/** The same per sandbox coin (at the sandbox's fixed rates, a few dollars or less). */
export const DEMO_WITHDRAWAL_AMOUNTS: Record<string, string> = { BTC: DEMO_WITHDRAWAL_AMOUNT, ETH: '0.001', USDT: '1' };

/**
 * Signed curl lines of a withdrawal estimate and of the withdrawal itself (to the sandbox payer's
 * address, outside the daemon's wallet; pasting it twice returns the same withdrawal by its
 * payout_id).
 */
export const demoWithdrawalCurls = (
  baseUrl: string,
  keyId: string,
  secret: string,
  coinId: string,
  toAddress: string,
  amount = DEMO_WITHDRAWAL_AMOUNT,
  payoutId = 'sandbox-1',
) => ({
  estimate: signedCurl(baseUrl, keyId, secret, 'POST', '/v1/withdrawals/estimate', JSON.stringify({ coin_id: coinId, amount })),
  withdrawal: signedCurl(
    baseUrl,
    keyId,
    secret,
    'POST',
    '/v1/withdrawals',
    JSON.stringify({ coin_id: coinId, amount, to_address: toAddress, payout_id: payoutId }),
  ),
});

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

/** What the banner's overpaid demo invoice asks for, and what the banner's `dev pay` line pays into it: half as much again. */
export const DEMO_REFUND_INVOICE = '0.001';
const DEMO_OVERPAY = '1.5';

/**
 * The refund example (PRODUCT §16), made at every start: a demo invoice in `coinId` (the sandbox's
 * Bitcoin), the `dev pay` line that overpays it by half, and the signed curl that refunds the
 * excess once paid (no address: the answer's refund_url is the payer's link). Pasting the curl
 * twice returns the same refund (its refund_id).
 */
export async function demoRefundExample(daemon: Daemon, accountId: string, keyId: string, secret: string, coinId: string) {
  const coin = daemon.catalog.coin(coinId);
  if (!coin) throw new Error(`the sandbox has no coin ${coinId}`);
  const { invoice } = await daemon.invoices.service.create(accountId, {
    amount: Amount.of(DEMO_REFUND_INVOICE),
    currency: coin.ticker,
    fiat: false,
    coin,
    allowedCoinIds: null,
    orderId: null,
    idempotencyByOrderId: false,
    description: 'Sandbox demo to overpay and refund',
    returnUrl: null,
    webhookUrl: null,
    metadata: null,
    feePaidBy: 'merchant',
  });
  const due = Amount.of(invoice.payer_amount ?? DEMO_REFUND_INVOICE);
  const pay = due.times(Amount.of(DEMO_OVERPAY)).round(coin.decimals, 'down');
  const body = JSON.stringify({ invoice_id: invoice.id, amount: 'excess', refund_id: `sandbox-refund-${invoice.id.slice(-8)}` });
  return {
    invoice_id: invoice.id,
    ticker: coin.ticker,
    payer_amount: due.toString(),
    pay_amount: pay.toString(),
    excess: pay.minus(due).toString(),
    pay_command: `coinkeep dev pay ${invoice.id} --amount ${pay.toString()}`,
    refund_curl_example: signedCurl(daemon.apiUrl, keyId, secret, 'POST', '/v1/refunds', body),
  };
}
