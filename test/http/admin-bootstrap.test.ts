import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { randomBase62 } from '../../src/lib/crypto.js';
import { startServer } from '../../src/main.js';

describe('admin keys at start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-admin-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const base = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, LOG_LEVEL: 'silent', PORT: '0' };
  const fixed = `svc_admin_${randomBase62(32)}`;

  async function start(env: Record<string, string> = {}) {
    const lines: string[] = [];
    const server = await startServer(loadConfig({ ...base, ...env }), (line) => lines.push(line));
    return { server, output: lines.join('\n') };
  }

  it('the first start prints one admin key beside the test key, once; OPENVAT_ADMIN_KEY is added idempotently', async () => {
    const first = await start();
    const printed = /(svc_admin_[0-9A-Za-z]{32})/.exec(first.output)?.[1];
    assert.ok(printed, first.output);
    assert.match(first.output, /svc_test_[0-9A-Za-z]{32}/);
    const listed = await first.server.app.inject({
      method: 'GET',
      url: '/admin/v1/accounts',
      headers: { authorization: `Bearer ${printed}` },
    });
    assert.equal(listed.statusCode, 200);
    // The test key's account has a name an operator recognises in the console and the CLI.
    assert.deepEqual(
      (listed.json() as { data: { name: string | null }[] }).data.map((account) => account.name),
      ['Default'],
    );
    assert.match(first.output, /test key \(account "Default"\)/);
    await first.server.stop();

    for (let i = 0; i < 2; i++) {
      const again = await start({ OPENVAT_ADMIN_KEY: fixed });
      assert.ok(!/svc_admin_/.test(again.output), 'printed only on the first start');
      const response = await again.server.app.inject({
        method: 'GET',
        url: '/admin/v1/keys',
        headers: { authorization: `Bearer ${fixed}` },
      });
      assert.equal(response.statusCode, 200);
      assert.equal(await again.server.container.admin.countKeys(), 2, 'added once');
      await again.server.stop();
    }
  });

  it('a malformed OPENVAT_ADMIN_KEY is refused at start', () => {
    assert.throws(() => loadConfig({ ...base, OPENVAT_ADMIN_KEY: 'svc_admin_short' }), /OPENVAT_ADMIN_KEY/);
  });
});
