/**
 * The payer's refund link end to end (issue 33 §2), in Chromium at phone size against the real
 * daemon and bcoin regtest: the merchant refunds an invoice without an address; the payer opens
 * the link, is refused a bad address, gives a good one, confirms it, and watches the refund reach
 * completed with its txid while blocks are mined; an unused link past its time says it expired.
 */
import AxeBuilder from '@axe-core/playwright';
import test from 'ava';
import { RefundEntity } from '../../../src/db/entities/refund';
import { killAllBcoins, sats } from '../../helpers/bcoin';
import { chromiumAvailable, chromiumTest, launchChromium, PHONE, watchPage, type Browser } from '../../helpers/chromium';
import { BTC, CONFIRMATIONS, elsewhere, startPayoutFixture, until, type PayoutFixture } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);
const inChromium = chromiumTest(test);

let f: PayoutFixture;
let browser: Browser;
test.before(async () => {
  if (!chromiumAvailable()) return;
  f = await startPayoutFixture();
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await f?.stop();
});

/** Pays an invoice of `amount` and refunds half of it without an address; the link as the test daemon serves it. */
async function refundOfPaidInvoice(amount: string): Promise<{ invoiceId: string; refund: any; link: string }> {
  const inv = await f.api.post('/v1/invoices', { amount, currency: 'BTC', coin_id: BTC });
  await f.node.pay([{ address: inv.body.address, value: sats(amount) }]);
  await f.node.mine(CONFIRMATIONS);
  await until(async () => (await f.api.get(`/v1/invoices/${inv.body.id}`)).body.status === 'paid', 'the invoice paid');
  const res = await f.api.post('/v1/refunds', { invoice_id: inv.body.id, amount: (Number(amount) / 2).toString() });
  if (res.status !== 201) throw new Error(`refund: ${res.status} ${JSON.stringify(res.body)}`);
  return { invoiceId: inv.body.id, refund: res.body, link: `${f.td.url}${new URL(res.body.refund_url).pathname}` };
}

const serious = async (page: import('playwright-core').Page): Promise<string[]> =>
  (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);

inChromium('a payer on a phone opens the refund link, is refused a bad address, confirms a good one and sees the refund completed with its txid', async (t) => {
  const { refund, link } = await refundOfPaidInvoice('0.02');
  const page = await browser.context.newPage();
  t.deepEqual(page.viewportSize(), PHONE);
  const seen = watchPage(page);
  await page.goto(link);
  await page.locator('.total').filter({ hasText: '0.01 BTC' }).waitFor();
  t.deepEqual(await serious(page), []);

  await page.locator('#to-address').fill('bc1qthisisnotanaddress');
  await page.getByRole('button', { name: 'Check address' }).click();
  await page.getByRole('alert').filter({ hasText: 'not an address' }).waitFor();
  t.is((await f.api.get(`/v1/refunds/${refund.id}`)).body.status, 'awaiting_address', 'nothing given');

  const to = elsewhere();
  await page.locator('#to-address').fill(to);
  await page.getByRole('button', { name: 'Check address' }).click();
  await page.getByRole('heading', { name: 'Is this the right address?' }).waitFor();
  t.is(await page.locator('#confirm-address').textContent(), to);
  t.is((await f.api.get(`/v1/refunds/${refund.id}`)).body.to_address, null, 'nothing is final before the confirmation');
  await page.getByRole('button', { name: 'Confirm and send' }).click();
  await page.locator('#to').filter({ hasText: to }).waitFor();
  t.like((await f.api.get(`/v1/refunds/${refund.id}`)).body, { to_address: to });

  await f.mineUntil(async () => (await f.api.get(`/v1/refunds/${refund.id}`)).body.status === 'completed', 'the refund completed');
  const done = (await f.api.get(`/v1/refunds/${refund.id}`)).body;
  await page.getByText('Refund sent', { exact: true }).waitFor({ timeout: 20_000 });
  t.is(await page.locator('#txid').textContent(), done.txid);
  t.deepEqual(await serious(page), []);
  t.deepEqual(
    seen.requests.filter((u) => !u.startsWith(`${f.td.url}/`)),
    [],
  );
  await page.close();
});

inChromium('an unused link past its time shows the refund expired and takes no address', async (t) => {
  const { refund, link } = await refundOfPaidInvoice('0.01');
  await f.td.daemon.store.write((em) => em.update(RefundEntity, { id: refund.id }, { expires_at: new Date(Date.now() - 1000).toISOString() }));
  t.is(await f.td.daemon.refunds.service.expireDue(), 1);
  const page = await browser.context.newPage();
  await page.goto(link);
  await page.getByText('This refund link has expired. Please contact the merchant for a new one.').waitFor();
  t.false(await page.locator('#address-box').isVisible());
  t.deepEqual(await serious(page), []);
  await page.close();
});
