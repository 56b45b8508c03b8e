import type { TestFn } from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether Debian's Chromium is installed; under CI=true (.ci/run) it must be. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} not found (CI=true: the browser tests must run; ./install.sh installs it as root)`);
  return false;
}

/** Serial tests in Chromium; without it (outside CI) they are skipped, which ava reports by name. */
export function chromiumTest(test: TestFn): TestFn['serial'] {
  return chromiumAvailable() ? test.serial : (test.serial.skip as TestFn['serial']);
}

/** Without the background-networking flags Chromium reaches for the network, which is closed here. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A phone: 360 CSS pixels wide. */
export const PHONE = { width: 360, height: 740 };

export interface Browser {
  context: BrowserContext;
  /** Screenshots go here (a temp dir of their own, kept for a look after the run). */
  shotsDir: string;
  close(): Promise<void>;
}

/** Debian's Chromium, headless, with a fresh profile in a temp dir and a phone-sized viewport. */
export async function launchChromium(opts: { colorScheme?: 'light' | 'dark' } = {}): Promise<Browser> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-chromium-'));
  const shotsDir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-screenshots-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: PHONE,
    isMobile: true,
    hasTouch: true,
    colorScheme: opts.colorScheme ?? 'light',
  });
  return {
    context,
    shotsDir,
    close: async () => {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a page did that a test must see: console errors, uncaught errors, every request's URL. */
export function watchPage(page: Page) {
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${m.text()} ${m.location().url}`);
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  return { errors, requests };
}
