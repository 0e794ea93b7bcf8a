import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildTestApp } from '../helpers/app.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('request logging', () => {
  it('at info, logs each request with its request id', async () => {
    const { log, lines } = capture('info');
    const t = await buildTestApp({}, { log });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/v1/rates/de' });
      const id = res.headers['service-request-id'];
      const completed = lines.find((l) => l.msg === 'request completed');
      assert.ok(completed, 'a completion line');
      assert.equal(completed.reqId, id);
      assert.equal((completed.res as { statusCode: number }).statusCode, 200);
    } finally {
      await t.close();
    }
  });

  it('at warn, logs no request lines', async () => {
    const { log, lines } = capture('warn');
    const t = await buildTestApp({}, { log });
    try {
      await t.app.inject({ method: 'GET', url: '/v1/rates/de' });
      await t.app.inject({ method: 'GET', url: '/nowhere' });
      assert.deepEqual(lines, []);
    } finally {
      await t.close();
    }
  });
});
