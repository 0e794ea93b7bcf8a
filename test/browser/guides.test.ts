import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, type LaunchedBrowser, launchBrowser, watchPage } from '../helpers/browser.js';

const skip = browserSkipReason();
if (skip) console.log(`# ${skip}`);

/** How far the page itself scrolls sideways (0: it fits the viewport). */
const pageOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('the guides in a browser', { skip }, () => {
  let t: TestApp;
  let launched: LaunchedBrowser;
  let origin: string;

  before(async () => {
    t = await buildTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    launched = await launchBrowser();
  });
  after(async () => {
    await launched?.close();
    await t?.close();
  });

  it('at phone width a guide renders its headings and tables, and only the tables scroll sideways', async () => {
    const page = await launched.browser.newPage({ viewport: { width: 390, height: 844 } });
    const problems = watchPage(page, () => true);
    await page.goto(`${origin}/guides/`);
    assert.equal(await page.title(), 'openvat guides');
    assert.equal(await pageOverflow(page), 0, 'the index fits');
    await page.getByRole('link', { name: 'Performance', exact: true }).click();
    await page.waitForURL(`${origin}/guides/performance`);
    assert.equal(await page.title(), 'Performance · openvat guides');
    assert.ok(await page.getByRole('heading', { level: 1, name: 'Performance' }).isVisible());
    assert.ok(await page.getByRole('heading', { level: 2, name: 'Results' }).isVisible());
    // The style sheet applies (the policy lets it load): the table sits in a box that scrolls.
    const box = page.locator('.table').first();
    assert.equal(await box.evaluate((element) => getComputedStyle(element).overflowX), 'auto');
    const table = box.locator('table');
    assert.ok(await table.isVisible());
    assert.ok((await table.locator('tbody tr').count()) > 10, 'the benchmark rows are one table');
    const widths = await box.evaluate((element) => ({
      box: element.clientWidth,
      table: element.scrollWidth,
    }));
    assert.ok(widths.table > widths.box, `the table is wider than its box (${JSON.stringify(widths)})`);
    assert.ok(widths.box <= 390);
    assert.equal(await pageOverflow(page), 0, 'the page itself does not scroll sideways');

    await page.goto(`${origin}/guides/validation#test-mode`);
    assert.ok(await page.getByRole('heading', { level: 2, name: 'Test mode' }).isVisible());
    assert.ok(await page.locator('table').first().isVisible());
    assert.equal(await pageOverflow(page), 0);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('a link between guides leads to the rendered page, and the navigation back to the index', async () => {
    const page = await launched.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems = watchPage(page, () => true);
    await page.goto(`${origin}/guides/api`);
    await page.getByRole('link', { name: 'clients/typescript/README.md' }).first().click();
    await page.waitForURL(`${origin}/guides/typescript-client`);
    assert.ok(await page.getByRole('heading', { level: 1, name: '@openvat/client' }).isVisible());
    assert.equal(await pageOverflow(page), 0);
    await page.getByRole('navigation').getByRole('link', { name: 'Guides' }).click();
    await page.waitForURL(`${origin}/guides/`);
    assert.ok(await page.getByRole('heading', { level: 1, name: 'Guides' }).isVisible());
    assert.deepEqual(problems, []);
    await page.close();
  });
});
