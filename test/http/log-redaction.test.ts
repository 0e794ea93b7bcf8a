import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildTestApp } from '../helpers/app.js';

/** What request and error logs keep of URLs and headers: never a credential (docs/logging.md). */
describe('log redaction', () => {
  it('credentials in query strings, paths and headers never reach the log; the rest of the URL does', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const t = await buildTestApp({ OPENVAT_PLAYGROUND: 'false' }, { log });
    t.app.get('/__boom', async () => {
      throw new Error('boom');
    });
    try {
      const key = await t.key('business', 'test');
      const secret = key.key;
      await t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=DE100000008&api_key=${secret}` });
      await t.app.inject({ method: 'GET', url: `/v1/rates/de?token=tok-SECRET-1&access_token=SECRET-2` });
      await t.app.inject({ method: 'GET', url: `/v1/rates/de?Authorization=Bearer%20${secret}&x=1` });
      await t.app.inject({ method: 'GET', url: `/v1/rates/${secret}` });
      await t.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE100000008', headers: key.headers });
      await t.app.inject({
        method: 'GET',
        url: `/__boom?password=SECRET-3&key=${secret}`,
        headers: key.headers,
      });

      const all = lines.join('\n');
      assert.ok(lines.length >= 6, 'requests were logged');
      for (const leaked of [secret, 'tok-SECRET-1', 'SECRET-2', 'SECRET-3', encodeURIComponent(secret)]) {
        assert.ok(!all.includes(leaked), `"${leaked}" appears in the log`);
      }
      // The rest of the request stays useful.
      assert.match(all, /\/v1\/validate\?vat_number=DE100000008&api_key=\[REDACTED\]/);
      assert.match(all, /\/v1\/rates\/de\?token=\[REDACTED\]&access_token=\[REDACTED\]/);
      const error = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error');
      assert.ok(error, 'the 500 was logged');
      assert.match(String(error.url), /^\/__boom\?password=\[REDACTED\]&key=\[REDACTED\]$/);
    } finally {
      await t.close();
    }
  });
});
