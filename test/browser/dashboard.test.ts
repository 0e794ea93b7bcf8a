/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page.evaluate callbacks below run in the browser.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { browserSkipReason, type LaunchedBrowser, launchBrowser, openPage } from '../helpers/browser.js';

const skip = browserSkipReason();
if (skip) console.log(`# ${skip}`);

const WIDTHS = [390, 768, 1400];
const LONG_URL = 'https://hooks.example.com/openvat/events/receiver-with-a-long-path/0123456789abcdef';

describe('the dashboard in a browser', { skip }, () => {
  let t: TestApp;
  let launched: LaunchedBrowser;
  let origin: string;
  let key: TestKey;
  let requestId: string;

  before(async () => {
    t = await buildTestApp({}, { dns: createFakeDns({ 'hooks.example.com': '93.184.216.34' }) });
    key = await t.key('pro');
    // Some usage, an endpoint with a long URL and an audit record to look up.
    for (const vat of ['DE100000008', 'DE100000008', 'XX123']) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/validate?vat_number=${vat}`,
        headers: key.headers,
      });
      if (res.statusCode === 200) requestId = res.json().meta.request_id;
    }
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: key.headers,
      payload: { url: LONG_URL },
    });
    assert.equal(created.statusCode, 201, created.body);
    // A test-mode monitor whose company name changes at its second check: a state and a change to show.
    const monitor = await t.app.inject({
      method: 'POST',
      url: '/v1/monitors',
      headers: key.headers,
      payload: { vat_number: 'DE930000007', interval: 'daily', reference: 'customer-4711' },
    });
    assert.equal(monitor.statusCode, 201, monitor.body);
    const checked = await t.app.inject({
      method: 'POST',
      url: `/v1/monitors/${monitor.json().data.monitor.id}/check`,
      headers: key.headers,
    });
    assert.equal(checked.json().data.changes[0]?.type, 'name_changed', checked.body);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://openvat.test:${(t.app.server.address() as AddressInfo).port}`;
    launched = await launchBrowser(['openvat.test']);
  });
  after(async () => {
    await launched?.close();
    await t?.close();
  });

  const open = (width: number) => openPage(launched.browser, `${origin}/dashboard`, width);

  /** Nothing wider than the window, and no visible text box narrower than a few characters. */
  async function assertLaidOut(page: Page, width: number) {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 1)
        .map((node) => `${node.tagName.toLowerCase()}#${node.id}.${node.className}`)
        .slice(0, 5),
    );
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at ${width}px: ${wide.join(', ')}`);
    // Text broken per character: a box whose lines hold on average fewer than 4 characters.
    const squeezed = await page.evaluate(() =>
      [...document.querySelectorAll('button, td, th, dt, dd, h2, label, a')]
        .filter(
          (node) => (node as HTMLElement).offsetParent !== null && (node.textContent ?? '').trim().length > 3,
        )
        .map((node) => {
          const range = document.createRange();
          range.selectNodeContents(node);
          const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
          const text = (node.textContent ?? '').trim();
          return { text: text.slice(0, 40), lines, perLine: text.length / Math.max(1, lines) };
        })
        .filter((box) => box.perLine < 4),
    );
    assert.deepEqual(squeezed, [], `text squeezed at ${width}px`);
    const buttons = await page.evaluate(() =>
      [...document.querySelectorAll('button')]
        .filter((b) => (b as HTMLElement).offsetParent !== null)
        .filter(
          (b) => b.getBoundingClientRect().height > 2.2 * Number.parseFloat(getComputedStyle(b).fontSize),
        )
        .map((b) => b.textContent),
    );
    assert.deepEqual(buttons, [], `buttons wrapped at ${width}px`);
  }

  for (const width of WIDTHS) {
    it(`at ${width}px: signs in, shows usage with a chart, the webhooks and an audit, with no errors`, async () => {
      const { page, problems } = await open(width);
      assert.equal(await page.locator('#sign-out').isVisible(), false, 'no "Sign out" before signing in');
      assert.equal(await page.locator('#signed-in').isVisible(), false, 'no key panels before signing in');
      await assertLaidOut(page, width);

      await page.fill('#key', key.key);
      await page.click('#sign-in-form button[type="submit"]');
      await page.locator('#signed-in').waitFor();
      await page.locator('#sign-out').waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(await page.locator('#sign-in').isVisible(), false, 'the sign-in form is gone');
      // Test keys never call a registry: the status panel says so instead of showing an empty table.
      await page.locator('#registry-summary').filter({ hasText: 'no registry called since start' }).waitFor();
      assert.equal(await page.locator('#registry-table').isVisible(), false, 'no empty registry table');
      await page.locator('#usage-facts dd').first().waitFor();
      // Three validations and the endpoint registration before the first page, then the page's own calls.
      const requests = Number(
        /Requests\s+([\d,]+)/.exec(await page.locator('#usage-facts').innerText())?.[1],
      );
      assert.ok(requests >= 4, `${requests} requests shown`);
      const today = page.locator('#usage-chart svg g').last();
      assert.ok(Number(await today.locator('rect.ok').getAttribute('height')) > 0, "today's bar is drawn");
      assert.match((await today.locator('title').textContent()) ?? '', /: \d+ requests, 1 errors$/);
      // The chart: 30 daily buckets, a y axis with numbers, dates on the x axis, and a legend.
      assert.equal(await page.locator('#usage-chart svg g rect.ok').count(), 30);
      const labels = await page.locator('#usage-chart svg text').allTextContents();
      assert.ok(labels.includes('0') && labels.some((label) => /^\d\d-\d\d$/.test(label)), labels.join(' '));
      // Drawn at the panel's width, not scaled down: the labels stay readable on a phone.
      const labelHeight = (await page.locator('#usage-chart svg text').first().boundingBox())?.height ?? 0;
      assert.ok(labelHeight >= 9, `axis labels ${labelHeight}px tall`);
      assert.ok(await page.locator('.legend').getByText('Errors').isVisible());

      const urlCell = page.locator('#webhook-list td.url');
      await urlCell.waitFor();
      assert.equal(await urlCell.innerText(), LONG_URL);
      await assertLaidOut(page, width);

      const monitorRow = page.locator('#monitor-list tbody tr', { hasText: 'DE930000007' });
      await monitorRow.waitFor();
      assert.match(await monitorRow.innerText(), /customer-4711[\s\S]*valid[\s\S]*Testfirma Neu GmbH/);
      assert.match(await page.locator('#monitors-facts').innerText(), /Monitored\s+1 of [\d,.]+\s+Valid\s+1/);
      const change = page.locator('#monitor-changes tbody tr').first();
      assert.match(
        await change.innerText(),
        /DE930000007 \(customer-4711\)\s+name changed\s+Testfirma Alt GmbH → Testfirma Neu GmbH/,
      );
      await monitorRow.locator('button:has-text("Check now")').click();
      await page.locator('#monitors-message').waitFor();
      assert.match(
        await page.locator('#monitors-message').innerText(),
        /DE930000007 checked now: valid, no change\./,
      );
      await page.selectOption('#monitors-status', 'invalid');
      await page.locator('#monitor-list tbody', { hasText: 'No monitors match' }).waitFor();
      await page.selectOption('#monitors-status', '');
      await monitorRow.waitFor();
      await assertLaidOut(page, width);

      await page.click('#webhook-list button:has-text("Deliveries")');
      await page.locator('#deliveries').waitFor();
      // A disabled endpoint offers no test event (the API would refuse it); enabled again, it does.
      const sendTest = page.locator('#webhook-list button:has-text("Send test")');
      assert.equal(await sendTest.isDisabled(), false);
      await page.click('#webhook-list button:has-text("Disable")');
      await page.locator('#webhook-list button:has-text("Enable")').waitFor();
      assert.equal(await sendTest.isDisabled(), true);
      await page.click('#webhook-list button:has-text("Enable")');
      await page.locator('#webhook-list button:has-text("Disable")').waitFor();
      assert.equal(await sendTest.isDisabled(), false);

      await page.fill('#audit-id', requestId);
      await page.click('#audit-form button[type="submit"]');
      await page.locator('#audit-result').waitFor();
      assert.match(await page.locator('#audit-facts').innerText(), /Endpoint\s+validate\s+Status\s+200/);
      await assertLaidOut(page, width);
      if (process.env.OPENVAT_SCREENSHOTS) {
        await page.screenshot({
          path: `${process.env.OPENVAT_SCREENSHOTS}/dashboard-${width}.png`,
          fullPage: true,
        });
        await page.locator('#monitors').screenshot({
          path: `${process.env.OPENVAT_SCREENSHOTS}/dashboard-monitors-${width}.png`,
        });
      }
      assert.deepEqual(problems, []);
      await page.close();
    });
  }

  it('with the Free plan, the Monitors and Audit panels show notes instead of errors', async () => {
    const free = await t.key('free');
    const { page, problems } = await open(390);
    await page.fill('#key', free.key);
    await page.click('#sign-in-form button[type="submit"]');
    await page.locator('#monitors-note').waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await page.locator('#monitors-note').innerText(), /Pro and Business plans/);
    assert.equal(await page.locator('#monitors-body').isVisible(), false);
    // Free keys keep no audit records: the look-up says so instead of offering a search.
    await page.locator('#audits-note').waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await page.locator('#audits-note').innerText(), /this key's plan keeps none/);
    assert.equal(await page.locator('#audit-form').isVisible(), false);
    assert.equal(await page.locator('#monitors .panel-error').count(), 0);
    await assertLaidOut(page, 390);
    // The browser logs every 402 answer (webhooks and monitors refuse this plan); nothing else may fail.
    const expected = /Failed to load resource: .*status of 402 .*\/v1\/(webhooks|monitors\/summary)$/;
    assert.deepEqual(
      problems.filter((problem) => !expected.test(problem)),
      [],
    );
    await page.close();
  });
});
