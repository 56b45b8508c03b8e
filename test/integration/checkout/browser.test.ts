import AxeBuilder from '@axe-core/playwright';
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { chromiumAvailable, chromiumTest, launchChromium, watchPage, type Browser } from '../../helpers/chromium';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

const inChromium = chromiumTest(test);
let f: InvoiceFixture;
let browser: Browser;
let shop: http.Server;
let shopUrl: string;
let stranger: http.Server;
let strangerUrl: string;

/**
 * A merchant's site on its own port: /thanks is where return_url leads; /frame?src= frames a
 * payment page and keeps every message it receives in `window.received`.
 */
function site(): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    if (url.pathname === '/frame') {
      const src = url.searchParams.get('src') ?? '';
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<!doctype html><title>Shop checkout</title><h1>Shop checkout</h1>' +
          '<script>window.received=[];addEventListener("message",function(e){window.received.push({origin:e.origin,data:e.data})})</script>' +
          `<iframe title="Payment" src="${src.replace(/"/g, '&quot;')}" width="360" height="700"></iframe>`,
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><h1>Thanks from the shop</h1>');
  });
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test.before(async () => {
  if (!chromiumAvailable()) return;
  f = await startInvoiceFixture();
  browser = await launchChromium();
  shop = site();
  shopUrl = await listen(shop);
  stranger = site();
  strangerUrl = await listen(stranger);
});
test.after.always(async () => {
  await browser?.close();
  for (const server of [shop, stranger]) if (server) await new Promise((resolve) => server.close(resolve));
  await f?.stop();
});

const invoice = async (body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/invoices', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

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

inChromium('a payer on a phone picks a coin, copies the address, pays, watches pending then paid without a reload, and goes back to the shop', async (t) => {
  const inv = await invoice({ amount: '34', currency: 'USD', return_url: `${shopUrl}/thanks` });
  const page = await browser.context.newPage();
  const seen = watchPage(page);
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: f.td.url });

  await page.goto(inv.checkout_url.replace(/^https?:\/\/[^/]+/, f.td.url));
  await page.getByRole('heading', { name: 'Payment to Test shop' }).waitFor();
  t.true(await noHorizontalScroll(page));
  t.deepEqual(await axeProblems(page), []);
  await page.screenshot({ path: path.join(browser.shotsDir, 'choice.png'), fullPage: true });

  // Keyboard only: Tab to the ETH choice, Enter.
  const eth = page.getByRole('button', { name: /Pay with ETH on Ethereum/ });
  for (
    let i = 0;
    i < 10 && !(await eth.evaluate((el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement));
    i++
  )
    await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  const address = page.locator('#pay-address');
  await address.waitFor();
  const chosen = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(await address.getAttribute('data-value'), chosen.address);
  t.is(await page.locator('#pay-amount').getAttribute('data-value'), chosen.payer_amount);
  t.is(chosen.payer_amount, '0.01');
  t.true(await page.locator('.qr svg').isVisible());
  t.regex((await page.locator('#countdown').textContent()) ?? '', /^\d+:\d\d$/);
  await page.getByRole('button', { name: 'Copy address' }).click();
  t.is(await page.evaluate<string>('navigator.clipboard.readText()'), chosen.address);
  t.true(await noHorizontalScroll(page));
  t.deepEqual(await axeProblems(page), []);
  await page.screenshot({ path: path.join(browser.shotsDir, 'pay.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(browser.shotsDir, 'pay-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  t.log(`screenshots in ${browser.shotsDir}`);

  // A mark on the window: it survives only if the page is never reloaded.
  await page.evaluate('window.notReloaded = true');
  const chain = f.chain('ethereum');
  const transfer = await chain.send(chosen.address, COINS.ETH, chosen.payer_amount);
  await page.getByText('Payment seen, waiting for confirmations').waitFor({ timeout: 15_000 });
  t.is(await page.locator('#status-detail').textContent(), '0 of 3 confirmations');
  await chain.confirm(transfer);
  await page.getByText('Paid. Thank you!').waitFor({ timeout: 15_000 });
  t.true(await page.evaluate<boolean>('window.notReloaded === true'));
  t.false(await page.locator('#pay-box').isVisible());
  t.deepEqual(await axeProblems(page), []);

  t.deepEqual(
    seen.requests.filter((u) => !u.startsWith(`${f.td.url}/`)),
    [],
  );
  t.deepEqual(seen.errors, []);
  await page.getByRole('link', { name: 'Back to the shop' }).click();
  await page.getByRole('heading', { name: 'Thanks from the shop' }).waitFor();
  t.is(page.url(), `${shopUrl}/thanks`);
  await page.close();
});

inChromium('an underpaid invoice shows what is paid and what is still due, at the same address', async (t) => {
  const inv = await invoice({ amount: '1', currency: 'ETH', coin_id: COINS.ETH });
  const page = await browser.context.newPage();
  const seen = watchPage(page);
  await page.goto(`${f.td.url}/pay/${inv.id}`);
  await page.locator('#pay-address').waitFor();
  await f.chain('ethereum').pay(inv.address, COINS.ETH, '0.4');
  await page.getByText('Partly paid').waitFor({ timeout: 15_000 });
  t.is(await page.locator('#paid').textContent(), '0.4 ETH');
  t.is(await page.locator('#due').textContent(), '0.6 ETH');
  t.is(await page.locator('#pay-address').getAttribute('data-value'), inv.address);
  t.is(await page.locator('#pay-amount').getAttribute('data-value'), '0.6');
  t.true(await page.locator('#pay-box').isVisible());
  t.deepEqual(await axeProblems(page), []);
  t.deepEqual(seen.errors, []);
  await page.close();
});

inChromium('an expired invoice says so and offers no address to pay; one that received something tells the payer to contact the merchant', async (t) => {
  const store = f.td.daemon.store;
  const expire = async (id: string) => {
    await store.write((em) => em.update(InvoiceEntity, { id }, { ttl_expires_at: new Date(Date.now() - 60_000).toISOString() }));
    await f.td.daemon.invoices.service.expireDue();
  };
  const empty = await invoice({ amount: '1', currency: 'ETH', coin_id: COINS.ETH });
  await expire(empty.id);
  const page = await browser.context.newPage();
  const seen = watchPage(page);
  await page.goto(`${f.td.url}/pay/${empty.id}`);
  await page.getByText('This payment has expired').waitFor();
  t.false(await page.locator('#pay-box').isVisible());
  t.is(await page.locator('#status-detail').textContent(), '');

  const late = await invoice({ amount: '1', currency: 'ETH', coin_id: COINS.ETH });
  await expire(late.id);
  await f.chain('ethereum').pay(late.address, COINS.ETH, '1');
  await page.goto(`${f.td.url}/pay/${late.id}`);
  await page.getByText('Do not send more: contact the merchant.').waitFor();
  t.false(await page.locator('#pay-box').isVisible());
  t.deepEqual(await axeProblems(page), []);
  t.deepEqual(seen.errors, []);
  await page.close();
});

inChromium('framed by an allowed origin the page loads and posts its status changes to it; framed by another origin it is blocked', async (t) => {
  t.is((await f.api.call('PUT', '/v1/embed', { allowed_origins: [shopUrl] })).status, 200);
  const inv = await invoice({ amount: '0.2', currency: 'ETH', coin_id: COINS.ETH });
  const src = encodeURIComponent(`${f.td.url}/pay/${inv.id}`);

  const page = await browser.context.newPage();
  const seen = watchPage(page);
  await page.goto(`${shopUrl}/frame?src=${src}`);
  const framed = page.frameLocator('iframe');
  await framed.getByRole('heading', { name: 'Payment to Test shop' }).waitFor();
  const eth = f.chain('ethereum');
  await eth.pay(inv.address, COINS.ETH, '0.2');
  await framed.getByText('Paid. Thank you!').waitFor({ timeout: 15_000 });
  const received = await page.evaluate<Array<{ origin: string; data: unknown }>>('window.received');
  // Each change the page learns is posted: with the event stream it may see the payment pending for a
  // moment before it is confirmed (the poll alone saw only paid).
  t.deepEqual(received.at(-1), { origin: f.td.url, data: { type: 'coinkeep.invoice.status', invoice_id: inv.id, status: 'paid' } });
  t.deepEqual(
    received.map((m) => (m.data as { status: string }).status).filter((s) => s !== 'pending'),
    ['paid'],
  );
  t.true(received.every((m) => m.origin === f.td.url));
  t.deepEqual(seen.errors, []);
  await page.close();

  const other = await browser.context.newPage();
  const refused = new Promise<string>((resolve) => other.on('console', (m) => m.text().includes('frame-ancestors') && resolve(m.text())));
  await other.goto(`${strangerUrl}/frame?src=${src}`);
  t.regex(await refused, /violates the following Content Security Policy directive: "frame-ancestors /);
  t.is(await other.frameLocator('iframe').getByRole('heading', { name: 'Payment to Test shop' }).count(), 0);
  await other.close();
  await f.api.call('PUT', '/v1/embed', { allowed_origins: [] });
});
