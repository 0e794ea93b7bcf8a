import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Where the system Chromium is looked for (CHROMIUM_PATH first). */
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  (path): path is string => typeof path === 'string' && path !== '',
);

export function chromiumPath(): string | null {
  return CANDIDATES.find((path) => existsSync(path)) ?? null;
}

/**
 * Why the browser tests cannot run here, or null when they can. Locally a missing browser skips
 * them with a notice; with CI=true it fails them.
 */
export function browserSkipReason(): string | false {
  if (chromiumPath() !== null) return false;
  if (process.env.CI === 'true') {
    throw new Error(
      'CI=true but no Chromium found (install it: apt-get install -y chromium, or set CHROMIUM_PATH)',
    );
  }
  return 'no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH): browser tests skipped';
}

export interface LaunchedBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * The system Chromium, headless, with a fresh profile and nothing that talks to the network on
 * its own. Playwright gives every launch a fresh temporary profile (it refuses --user-data-dir)
 * and removes it on close. `hostMap` resolves made-up host names to 127.0.0.1 (e.g. `openvat.test`).
 */
export async function launchBrowser(hostMap: string[] = []): Promise<LaunchedBrowser> {
  const executablePath = chromiumPath();
  if (executablePath === null) throw new Error('no Chromium found');
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (hostMap.length > 0) {
    args.push(`--host-resolver-rules=${hostMap.map((host) => `MAP ${host} 127.0.0.1`).join(', ')}`);
  }
  const browser = await chromium.launch({ executablePath, args, headless: true });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}

/**
 * Collects what a page reports as wrong as it happens: console errors, uncaught exceptions, failed
 * requests, and answers of 400 or more for the URLs `reportStatus` picks (none when it is absent:
 * an application that shows the API's refusals, as the consoles do, gets them on purpose).
 * A request the browser abandons because the page navigated away (`net::ERR_ABORTED`, typically
 * the favicon of the page being left) is not a failure of the page.
 */
export function watchPage(page: Page, reportStatus: (url: string) => boolean = () => false): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} ${m.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    if (reason !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()} ${reason}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && reportStatus(response.url())) {
      problems.push(`${response.status()} ${response.url()}`);
    }
  });
  return problems;
}

/** A new page of `width` × 900 px at `url`, with what went wrong on it as it happens (`watchPage`). */
export async function openPage(
  browser: Browser,
  url: string,
  width: number,
  reportStatus?: (url: string) => boolean,
): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const problems = watchPage(page, reportStatus);
  await page.goto(url);
  return { page, problems };
}
