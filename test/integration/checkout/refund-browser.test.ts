import AxeBuilder from '@axe-core/playwright';
import test from 'ava';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { chromiumAvailable, chromiumTest, launchChromium, PHONE, watchPage, type Browser } from '../../helpers/chromium';
import { FakeRefundPages, GOOD_ADDRESS, serveRefundPages } from '../../helpers/fake-refund-pages';

const inChromium = chromiumTest(test);
const ID = '0190a0a0-0000-7000-8000-0000000000bb';
const TOKEN = 'Zx9_yW8-vU7tS6rQ5pO4nM3l';
const EXPIRED = 'expired-link-0123456789abc';
let browser: Browser;
let server: { url: string; close: () => Promise<void> };
const source = new FakeRefundPages();

test.before(async () => {
  if (!chromiumAvailable()) return;
  source.add(ID, TOKEN);
  source.add(ID, EXPIRED, { status: 'expired' });
  server = await serveRefundPages(source);
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await server?.close();
});

/** Serious or critical accessibility violations, in light and in dark. */
async function axeProblems(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const { violations } = await new AxeBuilder({ page }).analyze();
    for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') out.push(`${colorScheme}: ${v.id} ${v.help}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return out;
}

const noHorizontalScroll = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
const focusedId = (page: Page) => page.evaluate<string>('document.activeElement ? document.activeElement.id : ""');

inChromium(
  'a payer on a phone enters a wrong address, sees why, enters a good one, sees it with its network, confirms, and watches the refund sent',
  async (t) => {
    const page = await browser.context.newPage();
    t.deepEqual(page.viewportSize(), PHONE);
    const seen = watchPage(page);
    await page.goto(`${server.url}/pay/${ID}/refund/${TOKEN}`);
    await page.getByRole('heading', { name: 'Refund from Test shop' }).waitFor();
    t.is(await page.locator('.total').textContent(), '12.5 USDT');
    t.true(await page.getByText('The network fee is deducted from this amount').isVisible());
    t.true(await noHorizontalScroll(page));
    t.deepEqual(await axeProblems(page), []);
    await page.screenshot({ path: path.join(browser.shotsDir, 'refund-address.png'), fullPage: true });

    const field = page.getByLabel('Your USDT on Tron address');
    await page.getByRole('button', { name: 'Check address' }).click();
    await page.getByText('Enter an address.').waitFor();
    t.is(await focusedId(page), 'to-address');

    await field.fill('0x52908400098527886E0F7030069857D2E4169EE7');
    await page.keyboard.press('Enter');
    const refused = page.getByRole('alert').filter({ hasText: 'This is not an address for USDT on Tron. Check it and enter it again.' });
    await refused.waitFor();
    t.is(await field.getAttribute('aria-invalid'), 'true');
    t.is(await focusedId(page), 'to-address');
    t.true(await noHorizontalScroll(page));
    t.deepEqual(await axeProblems(page), []);

    await field.fill(` ${GOOD_ADDRESS} `);
    await page.getByRole('button', { name: 'Check address' }).click();
    await page.getByRole('heading', { name: 'Is this the right address?' }).waitFor();
    t.is(await focusedId(page), 'confirm-h');
    t.is(await page.locator('#confirm-text').textContent(), '12.5 USDT will be sent on Tron to:');
    t.is(await page.locator('#confirm-address').textContent(), GOOD_ADDRESS);
    t.false(await page.locator('#address-box').isVisible());
    t.is((await source.view(ID, TOKEN))!.to_address, null, 'nothing is final before the confirmation');
    t.true(await noHorizontalScroll(page));
    t.deepEqual(await axeProblems(page), []);
    await page.screenshot({ path: path.join(browser.shotsDir, 'refund-confirm.png'), fullPage: true });

    // Changing goes back to the field with the address kept; checking again comes back here.
    await page.getByRole('link', { name: 'Change address' }).click();
    t.is(await focusedId(page), 'to-address');
    t.is((await field.inputValue()).trim(), GOOD_ADDRESS);
    await page.getByRole('button', { name: 'Check address' }).click();
    await page.getByRole('button', { name: 'Confirm and send' }).click();

    await page.getByText('Address received. The refund is being prepared.').waitFor();
    t.is(await focusedId(page), 'status-h');
    t.is(await page.locator('#to').textContent(), GOOD_ADDRESS);
    t.false(await page.locator('#confirm-box').isVisible());
    t.false(await page.locator('#address-box').isVisible());
    t.like(await source.view(ID, TOKEN), { status: 'pending', to_address: GOOD_ADDRESS });

    // The page polls: the refund goes out and completes without a reload.
    await page.evaluate('window.notReloaded = true');
    source.set(ID, TOKEN, { status: 'broadcast' });
    await page.getByText('The refund is sent and waiting for the network').waitFor({ timeout: 15_000 });
    source.set(ID, TOKEN, { status: 'completed', txid: 'cd'.repeat(32) });
    await page.getByText('Refund sent', { exact: true }).waitFor({ timeout: 15_000 });
    t.is(await page.locator('#txid').textContent(), 'cd'.repeat(32));
    t.true(await page.evaluate<boolean>('window.notReloaded === true'));
    t.true(await noHorizontalScroll(page));
    t.deepEqual(await axeProblems(page), []);
    await page.screenshot({ path: path.join(browser.shotsDir, 'refund-completed.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(browser.shotsDir, 'refund-completed-dark.png'), fullPage: true });
    t.log(`screenshots in ${browser.shotsDir}`);

    t.deepEqual(
      seen.requests.filter((u) => !u.startsWith(`${server.url}/`)),
      [],
    );
    // The one refused check is logged by Chromium as a failed load; nothing else went wrong.
    t.deepEqual(
      seen.errors.filter((e) => !/status of 422 .*\/refund\/[^/]+\/check$/.test(e)),
      [],
    );
    t.is(seen.errors.length, 1);
    await page.close();
  },
);

inChromium('an expired link says so and offers no address field', async (t) => {
  const page = await browser.context.newPage();
  const seen = watchPage(page);
  await page.goto(`${server.url}/pay/${ID}/refund/${EXPIRED}`);
  await page.getByText('This refund link has expired. Please contact the merchant for a new one.').waitFor();
  t.false(await page.locator('#address-box').isVisible());
  t.false(await page.locator('#confirm-box').isVisible());
  t.true(await noHorizontalScroll(page));
  t.deepEqual(await axeProblems(page), []);
  t.deepEqual(seen.errors, []);
  await page.close();
});
