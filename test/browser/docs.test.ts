import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Locator } from 'playwright-core';
import { PLAYGROUND_KEY } from '../../src/modules/playground/playground.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, type LaunchedBrowser, launchBrowser, watchPage } from '../helpers/browser.js';

type Box = { x: number; y: number; width: number; height: number };

const skip = browserSkipReason();
if (skip) console.log(`# ${skip}`);

describe('the API reference in a browser', { skip }, () => {
  let t: TestApp;
  let launched: LaunchedBrowser;
  let origin: string;
  const requested: string[] = [];

  before(async () => {
    t = await buildTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    // A host name that is not localhost, over plain http: the page must not upgrade its requests.
    origin = `http://openvat.test:${(t.app.server.address() as AddressInfo).port}`;
    launched = await launchBrowser(['openvat.test']);
  });
  after(async () => {
    await launched?.close();
    await t?.close();
  });

  it('/ redirects to /docs, which renders over http on a non-localhost host with no errors', async () => {
    const page = await launched.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems = watchPage(page, (url) => !url.includes('/v1/'));
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(`${origin}/`);
    assert.equal(new URL(page.url()).pathname, '/docs/');
    await page.getByRole('heading', { name: 'openvat', exact: true }).waitFor();
    assert.ok(await page.getByText('Validate one VAT number').first().isVisible());
    assert.ok(await page.getByText('v0.1.0').first().isVisible(), 'the version comes from package.json');
    // The request examples name this server, so a copied curl command works as it is.
    const curl = await page.locator('code.language-curl').first().textContent();
    assert.match(curl ?? '', new RegExp(`^curl '${origin}/v1/validate\\?`));
    // Every asset came from this server, over http.
    const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('Test Request works at once with the pre-filled demo key', async () => {
    const page = await launched.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems = watchPage(page, (url) => !url.includes('/v1/'));
    const calls: { url: string; authorization: string | undefined }[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/v1/validate')) {
        calls.push({ url: request.url(), authorization: request.headers().authorization });
      }
    });
    await page.goto(`${origin}/docs/`);
    await page.getByText('Validate one VAT number').first().click();
    await page
      .getByRole('button', { name: /Test Request/ })
      .first()
      .click();
    const answer = page.waitForResponse((response) => response.url().includes('/v1/validate'));
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const response = await answer;
    assert.equal(response.status(), 200);
    const body = await response.json();
    assert.equal(body.data.vat_number, 'DE100000008');
    assert.equal(body.data.valid, true);
    assert.equal(calls[0]?.authorization, `Bearer ${PLAYGROUND_KEY}`);
    assert.match(calls[0]?.url ?? '', /vat_number=DE100000008/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  for (const width of [390, 1400]) {
    it(`the request builder at ${width} px: the method and the URL on one row, no button over the URL`, async () => {
      const page = await launched.browser.newPage({ viewport: { width, height: 900 } });
      const problems = watchPage(page, (url) => !url.includes('/v1/'));
      await page.goto(`${origin}/docs/#tag/validation/GET/v1/validate`);
      await page
        .getByRole('button', { name: /Test Request/ })
        .first()
        .click();
      const client = page.getByRole('dialog', { name: 'API Client' });
      await client.getByRole('button', { name: /^Send/ }).first().waitFor();
      const box = async (locator: Locator) => {
        const found = await locator.boundingBox();
        assert.ok(found, `${locator} has a box`);
        return found;
      };
      const overlaps = (a: Box, b: Box) =>
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      const sameRow = (a: Box, b: Box) => a.y < b.y + b.height && b.y < a.y + a.height;
      // The URL: the server's part (a button that chooses it) and the path after it.
      const server = await box(client.getByRole('button', { name: /^Server:/ }));
      const path = await box(client.getByText('/v1/validate', { exact: true }).first());
      assert.ok(sameRow(server, path), 'the server and the path are one URL on one row');
      const methods = await Promise.all(
        (await client.getByText('GET', { exact: true }).filter({ visible: true }).all()).map(box),
      );
      assert.ok(
        methods.some((method) => sameRow(method, server) && method.x + method.width <= server.x),
        `the method is shown before the URL, on its row (method boxes ${JSON.stringify(methods)}, URL ${JSON.stringify(server)})`,
      );
      const toggle = await box(client.getByRole('button', { name: 'Show sidebar' }));
      assert.ok(!overlaps(toggle, server), 'the sidebar button lies beside the URL, not over it');
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
});
