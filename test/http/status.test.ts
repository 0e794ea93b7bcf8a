import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, isUuidV7, type TestApp } from '../helpers/app.js';

describe('GET /v1/status and /ready', () => {
  let sim: SimulatorServer;
  let urls: Record<string, string>;
  let t: TestApp;
  const clock = createManualClock(new Date());
  before(async () => {
    sim = createSimulatorServer({ latencyMs: 5 });
    urls = { ...(await sim.listen(0, '127.0.0.1')).urls };
    t = await buildTestApp({ ...urls, OPENVAT_RATE_LIMIT_PRO: '100000' }, { clock });
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  it('is public and reports breaker, in-flight calls and last success per registry and member state', async () => {
    const key = await t.key('pro', 'live');
    const empty = await t.app.inject({ method: 'GET', url: '/v1/status' });
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(empty.json().data, {
      shared: false,
      instances: null,
      registries: [],
      rates: {
        enabled: true,
        last_run_at: null,
        last_success_at: null,
        last_error: null,
        next_run_at: null,
        held: 0,
      },
      evidence_timestamps: {
        enabled: false,
        tsa_urls: [],
        interval_seconds: 3600,
        newest: null,
        last_run_at: null,
        last_error: null,
        next_run_at: null,
      },
      peppol: {
        sml_zone: 'participant.sml.prod.tech.peppol.org',
        last_success_at: null,
        last_failure_at: null,
        last_failure: null,
        sml_breaker: 'closed',
        sml_retry_after_seconds: null,
        smp_breakers: [],
      },
      // No register is asked in tests (OPENVAT_NATIONAL_FALLBACKS=none).
      national_registers: [],
    });
    assert.ok(isUuidV7(empty.json().meta.request_id));

    await t.container.status.heartbeat();
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=BE0428759497',
      headers: key.headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    clock.advance(2_000); // past the status cache
    const snapshot = await t.container.registryStatus();
    assert.equal(snapshot.instances, 1);
    const be = snapshot.registries.find((r) => r.registry === 'vies' && r.country === 'BE');
    assert.ok(be);
    assert.equal(be.breaker, 'closed');
    assert.equal(be.in_flight, 0);
    assert.equal(be.queued, 0);
    assert.match(be.last_success_at ?? '', /^\d{4}-\d{2}-\d{2}T/);
    assert.equal(be.last_failure_at, null);
    assert.equal(be.retry_after_seconds, null);
  });

  it('/ready warns when several instances share the database without Redis', async () => {
    const alone = await t.app.inject({ method: 'GET', url: '/ready' });
    assert.deepEqual(alone.json(), { ok: true, database: 'ok' });

    const lines: string[] = [];
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const second = await buildTestApp({}, { db: { ...t.container.db, close: async () => {} } as Db, log });
    try {
      await t.container.status.heartbeat();
      await second.container.status.heartbeat();
      const ready = await second.app.inject({ method: 'GET', url: '/ready' });
      assert.equal(ready.statusCode, 200);
      assert.match(ready.json().warnings[0], /2 instances share this database but REDIS_URL is not set/);
      assert.equal(lines.filter((l) => l.includes('REDIS_URL is not set')).length, 1, 'logged once');
      await second.container.status.heartbeat();
      assert.equal(lines.filter((l) => l.includes('REDIS_URL is not set')).length, 1, 'not on every beat');
    } finally {
      await second.close();
    }
  });

  it('a REDIS_URL that does not answer at start is a start-up error naming it', async () => {
    await assert.rejects(buildTestApp({ REDIS_URL: 'redis://user:secret@127.0.0.1:1' }), (error: Error) => {
      assert.equal(error.name, 'ConfigError');
      assert.match(error.message, /REDIS_URL redis:\/\/\*\*\*@127\.0\.0\.1:1 does not answer/);
      assert.doesNotMatch(error.message, /secret/);
      return true;
    });
  });

  it('when Redis stops answering, live validations still answer correctly from per-instance limits', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    dead.on('error', () => {});
    const lines: string[] = [];
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const cut = await buildTestApp(
      { ...urls, OPENVAT_RATE_LIMIT_PRO: '100000', OPENVAT_PLAYGROUND: 'false' },
      { redis: dead, log },
    );
    try {
      const key = await cut.key('pro', 'live');
      const numbers = ['BE0428759497', 'FR40303265045', 'DE136695976', 'ATU13585627'];
      const answers = await Promise.all(
        numbers.map((vat) =>
          cut.app.inject({
            method: 'GET',
            url: `/v1/validate?vat_number=${vat}&cache=false`,
            headers: key.headers,
          }),
        ),
      );
      for (const [i, res] of answers.entries()) {
        assert.equal(res.statusCode, 200, res.body);
        const vat = numbers[i] as string;
        const expected = expectedViesAnswer(vat.slice(0, 2), vat.slice(2));
        assert.ok('valid' in expected);
        assert.equal(res.json().data.valid, expected.valid);
      }
      assert.equal(lines.filter((l) => l.includes('Redis is unreachable')).length, 1, 'one warning a minute');
      assert.equal((await cut.container.registryStatus()).shared, false);
    } finally {
      await cut.close();
    }
  });
});
