/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page.evaluate callbacks below run in the browser.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { browserSkipReason, type LaunchedBrowser, launchBrowser, openPage } from '../helpers/browser.js';

const skip = browserSkipReason();
if (skip) console.log(`# ${skip}`);

const SHOTS = process.env.OPENVAT_SCREENSHOTS ?? '/tmp';

describe('the admin console in a browser', { skip }, () => {
  let t: TestApp;
  let launched: LaunchedBrowser;
  let origin: string;
  let adminKey: string;
  let readKey: string;
  let used: TestKey;

  before(async () => {
    t = await buildTestApp();
    adminKey = (await t.container.admin.createKey('ops', 'admin')).key;
    readKey = (await t.container.admin.createKey('viewer', 'read')).key;
    // An account whose key made requests today: usage to chart.
    used = await t.key('pro');
    for (const vat of ['DE100000008', 'DE100000008', 'XX123']) {
      await t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=${vat}`, headers: used.headers });
    }
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://openvat.test:${(t.app.server.address() as AddressInfo).port}`;
    launched = await launchBrowser(['openvat.test']);
  });
  after(async () => {
    await launched?.close();
    await t?.close();
  });

  const open = (width: number) => openPage(launched.browser, `${origin}/admin/`, width);

  async function signIn(page: Page, key: string) {
    await page.fill('#admin-key', key);
    await page.click('#sign-in-form button[type="submit"]');
    await page.locator('#signed-in').waitFor();
    await page.locator('#account-list tbody tr').first().waitFor();
  }

  /** Nothing wider than the window, no button wrapped, no text broken per character. */
  async function assertLaidOut(page: Page, width: number, where: string) {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 1)
        .map((node) => `${node.tagName.toLowerCase()}#${node.id}.${node.className}`)
        .slice(0, 5),
    );
    assert.ok(overflow <= 0, `${where}: scrolls sideways by ${overflow}px at ${width}px: ${wide.join(', ')}`);
    const squeezed = await page.evaluate(() =>
      [...document.querySelectorAll('button, td, th, dt, dd, h2, label, a')]
        .filter(
          // A label around a checkbox counts the box as a line of its own: left out.
          (node) =>
            (node as HTMLElement).offsetParent !== null &&
            (node.textContent ?? '').trim().length > 3 &&
            !node.querySelector('input'),
        )
        .map((node) => {
          const range = document.createRange();
          range.selectNodeContents(node);
          const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
          const text = (node.textContent ?? '').trim();
          return { text: text.slice(0, 40), perLine: text.length / Math.max(1, lines) };
        })
        .filter((box) => box.perLine < 4),
    );
    assert.deepEqual(squeezed, [], `${where}: text squeezed at ${width}px`);
    const wrapped = await page.evaluate(() =>
      [...document.querySelectorAll('button')]
        .filter((b) => (b as HTMLElement).offsetParent !== null)
        .filter(
          (b) => b.getBoundingClientRect().height > 2.2 * Number.parseFloat(getComputedStyle(b).fontSize),
        )
        .map((b) => b.textContent),
    );
    assert.deepEqual(wrapped, [], `${where}: buttons wrapped at ${width}px`);
  }

  const keyRow = (page: Page, prefix: string) => page.locator('#key-list tbody tr', { hasText: prefix });

  for (const width of [390, 1400]) {
    it(`at ${width}px: an account, a key shown once, its quota edited, rolled and revoked, the audit log, usage and status`, async () => {
      const { page, problems } = await open(width);
      assert.equal(await page.locator('#signed-in').isVisible(), false);
      await assertLaidOut(page, width, 'sign-in');
      await signIn(page, adminKey);
      assert.equal(await page.evaluate(() => sessionStorage.length), 1, 'the key is kept in this tab');
      assert.ok(!page.url().includes('svc_admin_'), 'never in the address');
      assert.match(await page.locator('#who').innerText(), /ops \(admin\)/);

      const name = `Acme Shops ${width}`;
      await page.fill('#account-name', name);
      await page.fill('#account-external', `acme-${width}`);
      await page.click('#account-form button[type="submit"]');
      await page.locator('#account-title', { hasText: name }).waitFor();
      const accountId = /#\/accounts\/([0-9a-f-]{36})$/.exec(page.url())?.[1] ?? '';
      assert.ok(accountId, page.url());

      await page.fill('#key-name', 'checkout');
      await page.selectOption('#key-plan', 'business');
      await page.selectOption('#key-mode', 'test');
      await page.click('#key-form button[type="submit"]');
      await page.locator('#secret').waitFor();
      const secret = await page.inputValue('#secret-value');
      assert.match(secret, /^svc_test_/);
      const prefix = secret.slice(0, 13);
      await keyRow(page, prefix).waitFor();
      assert.ok(await page.locator('#secret-copy').isVisible(), 'a copy button');
      await page.click('#secret-copy');
      assert.match(await page.locator('#secret-copied').innerText(), /Copied|press Ctrl\+C/);
      await assertLaidOut(page, width, 'new key');
      if (width === 390) await page.screenshot({ path: `${SHOTS}/console-key-${width}.png`, fullPage: true });
      await page.click('#secret-done');
      assert.equal(await page.locator('#secret').isVisible(), false);
      assert.equal(await page.locator('#secret-value').inputValue(), '', 'not kept on the page');

      // The monthly quota, through the edit dialog.
      await keyRow(page, prefix).locator('button:has-text("Edit")').click();
      await page.locator('#key-dialog').waitFor();
      await page.screenshot({ path: `${SHOTS}/console-edit-${width}.png` });
      await assertLaidOut(page, width, 'edit dialog');
      // A refusal is shown with the API's own message, and the dialog stays open to correct it.
      await page.fill('#edit-allowlist', 'not-a-network');
      await page.click('#key-edit button[type="submit"]');
      await page.locator('#key-edit-error').waitFor();
      assert.match(await page.locator('#key-edit-error').innerText(), /ip_allowlist/);
      await page.fill('#edit-allowlist', '');
      // Scopes narrowed to two operations, and the monthly quota.
      await page.uncheck('#edit-all-scopes');
      for (const scope of [
        'decide',
        'confirm',
        'audits',
        'webhooks',
        'monitors',
        'usage',
        'peppol',
        'validate_batch',
        'eori',
      ]) {
        await page.uncheck(`#edit-scopes input[value="${scope}"]`);
      }
      await page.fill('#edit-quota', '1000');
      await page.click('#key-edit button[type="submit"]');
      await page.locator('#key-dialog').waitFor({ state: 'hidden' });
      await keyRow(page, prefix).filter({ hasText: '0 / 1,000' }).waitFor();
      const keyId = (await keyRow(page, prefix).getAttribute('data-id')) ?? '';
      const read = await t.container.manageKeys.getKey(keyId);
      const saved = read.kind === 'ok' ? read.key : undefined;
      assert.equal(saved?.monthly_quota, 1000);
      assert.deepEqual(saved?.scopes, ['validate']);
      assert.equal(saved?.ip_allowlist, null);

      // Rolled: a new secret, the old key works for the overlap.
      await keyRow(page, prefix).locator('button:has-text("Roll")').click();
      await page.fill('#roll-overlap', '3600');
      await page.click('#roll-form button[type="submit"]');
      await page.locator('#secret-title', { hasText: `rolled from ${prefix}` }).waitFor();
      const rolled = await page.inputValue('#secret-value');
      assert.notEqual(rolled, secret);
      await keyRow(page, prefix).filter({ hasText: 'rolled' }).waitFor();
      const rolledPrefix = rolled.slice(0, 13);
      await keyRow(page, rolledPrefix).filter({ hasText: '0 / 1,000' }).waitFor();

      await keyRow(page, rolledPrefix).locator('button:has-text("Revoke")').click();
      await page.click('#revoke-form button[type="submit"]');
      await keyRow(page, rolledPrefix).filter({ hasText: 'revoked' }).waitFor();
      assert.equal(
        await keyRow(page, rolledPrefix).locator('button').count(),
        0,
        'a revoked key has no actions',
      );
      await page.screenshot({ path: `${SHOTS}/console-account-${width}.png`, fullPage: true });
      await assertLaidOut(page, width, 'account');

      // Found again by its external id.
      await page.click('#nav-accounts');
      await page.fill('#account-q', `acme-${width}`);
      await page.click('#account-search button[type="submit"]');
      await page.locator('#account-list tbody tr', { hasText: name }).waitFor();
      assert.equal(await page.locator('#account-list tbody tr').count(), 1);
      await page.click(`#account-list a:has-text("${name}")`);
      await page.locator('#account-title', { hasText: name }).waitFor();
      await keyRow(page, rolledPrefix).filter({ hasText: 'revoked' }).waitFor();

      // The audit log: this account's writes.
      await page.click('#account-history');
      await page.locator('#audit-view').waitFor();
      await page.locator('#audit-list tbody tr').first().waitFor();
      assert.equal(await page.inputValue('#audit-target'), accountId);
      assert.match(await page.locator('#audit-list').innerText(), /account\.create/);
      await page.click('#nav-audit');
      await page.locator('#audit-list tbody tr', { hasText: 'key.revoke' }).first().waitFor();
      const log = await page.locator('#audit-list').innerText();
      for (const action of ['account.create', 'key.create', 'key.update', 'key.roll', 'key.revoke']) {
        assert.match(log, new RegExp(action.replace('.', '\\.')), action);
      }
      assert.match(log, /monthly_quota/);
      assert.doesNotMatch(log, /svc_test_[0-9A-Za-z]{20}/, 'no secret in the log');
      await page.locator('#audit-list tbody tr', { hasText: 'key.roll' }).locator('button').first().click();
      await page.waitForFunction(() => location.hash.startsWith('#/audit?actor='));
      await page.locator('#audit-list tbody tr').first().waitFor();
      await page.screenshot({ path: `${SHOTS}/console-audit-${width}.png`, fullPage: true });
      await assertLaidOut(page, width, 'audit log');

      // Usage of the account whose key made requests.
      await page.goto(`${origin}/admin/#/accounts/${used.accountId}`);
      await page.locator('#usage-facts', { hasText: /Requests\s*3/ }).waitFor();
      assert.equal(await page.locator('#usage-chart svg g rect.ok').count(), 30);
      const today = page.locator('#usage-chart svg g').last();
      assert.ok(Number(await today.locator('rect.ok').getAttribute('height')) > 0, "today's bar is drawn");
      assert.match((await today.locator('title').textContent()) ?? '', /: 3 requests, 1 errors$/);
      assert.match(await page.locator('#usage-operations').innerText(), /validate/);
      await page.screenshot({ path: `${SHOTS}/console-usage-${width}.png`, fullPage: true });
      await assertLaidOut(page, width, 'usage');

      await page.click('#nav-status');
      await page.locator('#registry-summary', { hasText: 'instances' }).waitFor();
      assert.match(await page.locator('#rates-facts').innerText(), /Sync\s+off/);
      await assertLaidOut(page, width, 'status');

      await page.click('#sign-out');
      assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'signing out forgets the key');
      // The browser logs the refused allowlist (400); nothing else may fail.
      assert.deepEqual(
        problems.filter((p) => !/status of 400 .*\/admin\/v1\/keys\//.test(p)),
        [],
      );
      await page.close();
    });
  }

  it('a read key sees everything and no write control; a write it tries anyway shows the 403', async () => {
    const { page, problems } = await open(390);
    await signIn(page, readKey);
    assert.ok(await page.locator('#read-note').isVisible());
    assert.equal(await page.locator('#account-form').isVisible(), false);
    await page.goto(`${origin}/admin/#/accounts/${used.accountId}`);
    const row = page.locator('#key-list tbody tr').first();
    await row.waitFor();
    assert.ok(await row.locator('a:has-text("History")').isVisible());
    assert.equal(await row.locator('button:visible').count(), 0, 'no Edit, Roll or Revoke');
    assert.equal(await page.locator('h3', { hasText: 'New key' }).isVisible(), false);
    for (const id of ['#key-form', '#account-edit', '#account-toggle']) {
      assert.equal(await page.locator(id).isVisible(), false, id);
    }
    await page.screenshot({ path: `${SHOTS}/console-read-390.png`, fullPage: true });
    await page.click('#nav-audit');
    await page.locator('#audit-list tbody tr').first().waitFor();

    // The API is the guard: shown the controls anyway, the write is refused and the refusal shown.
    await page.goto(`${origin}/admin/#/accounts/${used.accountId}`);
    await row.waitFor();
    await page.evaluate(() => {
      document.body.dataset.role = 'admin';
    });
    await row.locator('button:has-text("Revoke")').click();
    await page.click('#revoke-form button[type="submit"]');
    await page.locator('#revoke-error').waitFor();
    assert.match(await page.locator('#revoke-error').innerText(), /^Not allowed: .*read role/);
    const stillUsed = await t.container.manageKeys.getKey(used.id);
    assert.equal(stillUsed.kind === 'ok' ? stillUsed.key.status : stillUsed.reason, 'active');
    await page.keyboard.press('Escape');
    await page.locator('#revoke-dialog').waitFor({ state: 'hidden' });
    assert.deepEqual(
      problems.filter((p) => !/status of 403/.test(p)),
      [],
    );
    await page.close();
  });

  it('the admin API reference renders at /admin/docs from this server alone, with no errors', async () => {
    const page = await launched.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(`${origin}/`) && !request.url().startsWith('data:')) {
        elsewhere.push(request.url());
      }
    });
    await page.goto(`${origin}/admin/docs`);
    await page.getByRole('heading', { name: 'openvat admin API', exact: true }).waitFor();
    await page.screenshot({ path: `${SHOTS}/console-docs-1400.png` });
    await page.getByText('List accounts; search by name or external id').first().waitFor();
    const curl = await page.locator('code.language-curl').first().textContent();
    assert.match(curl ?? '', new RegExp(`^curl ${origin}/admin/v1/|^curl '${origin}/admin/v1/`));
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('with the keyboard alone: signs in, creates a key, and a dialog opens and closes with Escape', async () => {
    const { page, problems } = await open(1400);
    /** Presses Tab until the element matching `selector` has the focus; its focus is visible. */
    async function tabTo(selector: string) {
      for (let i = 0; i < 80; i++) {
        if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) {
          const outline = await page.evaluate(
            () => getComputedStyle(document.activeElement as Element).outlineStyle,
          );
          assert.notEqual(outline, 'none', `${selector} shows its focus`);
          return;
        }
        await page.keyboard.press('Tab');
      }
      assert.fail(`Tab never reached ${selector}`);
    }
    await tabTo('#admin-key');
    await page.keyboard.type(adminKey);
    await page.keyboard.press('Enter');
    await page.locator('#account-list tbody tr').first().waitFor();
    await tabTo('#account-name');
    await page.keyboard.type('Keyboard Co');
    await page.keyboard.press('Enter');
    await page.locator('#account-title', { hasText: 'Keyboard Co' }).waitFor();
    await tabTo('#key-name');
    await page.keyboard.type('typed');
    await page.keyboard.press('Enter');
    await page.locator('#secret').waitFor();
    assert.ok(await page.evaluate(() => document.activeElement?.id === 'secret-copy'), 'focus on Copy');
    assert.match(await page.inputValue('#secret-value'), /^svc_live_/);
    await tabTo('#key-list button');
    await page.keyboard.press('Enter');
    await page.locator('#key-dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#key-dialog').waitFor({ state: 'hidden' });
    assert.ok(
      await page.evaluate(() => document.activeElement?.textContent === 'Edit'),
      'focus back on Edit',
    );
    assert.deepEqual(problems, []);
    await page.close();
  });
});
