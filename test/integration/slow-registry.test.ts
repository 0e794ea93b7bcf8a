import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createResponseRecorder } from '../../src/modules/outbox/reply.js';
import { germanVatNumberWithCheckDigit } from '../../src/simulators/evatr.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { type FixtureServer, startFixtureServer } from './registries/helpers.js';

const DE = Array.from({ length: 30 }, (_, i) => germanVatNumberWithCheckDigit(String(40_000_000 + i)));
const FR = 'FR40303265045';

/** Polls `check` every 10 ms until it holds; fails after `boundMs`. */
async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  boundMs = 10_000,
): Promise<void> {
  for (let waited = 0; !(await check()); waited += 10) {
    if (waited >= boundMs) assert.fail(`${what}: not within ${boundMs} ms`);
    await sleep(10);
  }
}

/** A GET over a raw socket, so the test can close it before the answer. */
async function rawGet(port: number, path: string, key: string): Promise<Socket & { received: () => string }> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
  );
  return Object.assign(socket, { received: () => received });
}

for (const target of await databaseTargets()) {
  describe(`a slow or hanging registry, on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    let port: number;
    let fake: ReturnType<typeof createFakeRegistry>;
    let live: TestKey;
    const clock = createManualClock(new Date());

    beforeEach(async () => {
      db = await target.open();
      const shared: Db = { ...db, close: async () => {} };
      fake = createFakeRegistry(['DE', 'FR']);
      clock.set(new Date());
      t = await buildTestApp(
        {
          OPENVAT_PLAYGROUND: 'false',
          OPENVAT_STATUS_POLL_MS: '0',
          // One call per member state at a time: the others queue for the permit.
          OPENVAT_REGISTRY_CONCURRENCY: '1',
          OPENVAT_REGISTRY_PERMIT_WAIT_MS: '300',
          OPENVAT_REGISTRY_DEADLINE_MS: '0',
          OPENVAT_REGISTRY_TIMEOUT_MS: '1000',
          OPENVAT_BREAKER_THRESHOLD: '100',
          OPENVAT_RATE_LIMIT_BUSINESS: '100000',
        },
        { db: shared, clock, registries: fake.ports },
      );
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as { port: number }).port;
      live = await t.key('business', 'live');
    });
    afterEach(async () => {
      fake.releaseAll();
      await t.close();
      await db.dispose();
    });

    const get = (vat: string, key: TestKey = live) =>
      fetch(`http://127.0.0.1:${port}/v1/validate?vat_number=${vat}`, {
        headers: key.headers,
        // A bounded wait: a caller that waits without bound fails here instead of hanging the suite.
        signal: AbortSignal.timeout(15_000),
      });

    const auditsOf = (key: TestKey) =>
      db.kysely.selectFrom('audits').selectAll().where('key_id', '=', key.id).execute();
    const eventsOf = (key: TestKey) =>
      db.kysely.selectFrom('events').selectAll().where('key_id', '=', key.id).execute();

    it('callers queued for a permit get 502 registry_unavailable with Retry-After, or the stored answer as degraded', async () => {
      const stored = DE[0] as string;
      assert.equal((await get(stored)).status, 200);
      // Past its 30-day TTL, inside the 7-day degraded window.
      clock.advance(31 * 86_400_000);
      fake.hold();
      const first = get(DE[1] as string);
      await waitFor(() => fake.heldCount() === 1, 'the first caller holds the only permit');
      const queued = await Promise.all([DE[2], DE[3], DE[4]].map((vat) => get(vat as string)));
      for (const res of queued) {
        assert.equal(res.status, 502);
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(retryAfter >= 1, `Retry-After: ${res.headers.get('retry-after')}`);
        const body = (await res.json()) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'registry_unavailable');
        assert.match(body.error.message, /VIES for DE/);
      }
      const degraded = await get(stored);
      assert.equal(degraded.status, 200);
      const body = (await degraded.json()) as { meta: { source_status: string; cached: boolean } };
      assert.equal(body.meta.source_status, 'degraded');
      assert.equal(body.meta.cached, true);
      assert.deepEqual(
        fake.calls.filter((n) => n !== stored),
        [DE[1]],
        'the queued callers never reached the registry',
      );
      fake.releaseAll();
      assert.equal((await first).status, 200, 'the caller holding the permit is answered');
    });

    it('a client that disconnects cancels its registry call; a call another client shares goes on', async () => {
      fake.hold();
      const alone = DE[5] as string;
      const solo = await rawGet(port, `/v1/validate?vat_number=${alone}`, live.key);
      await waitFor(() => fake.calls.includes(alone), 'the registry is asked');
      solo.destroy();
      await waitFor(() => fake.aborted.includes(alone), 'the call of the client that went away is aborted');

      // Two clients (two keys) share one call; the one that leaves neither stops it nor is recorded.
      const leavingKey = await t.key('business', 'live');
      const staying = get(FR);
      await waitFor(() => fake.calls.includes(FR), 'the shared call is made');
      const leaving = await rawGet(port, `/v1/validate?vat_number=${FR}`, leavingKey.key);
      // Time for the second request to join the shared call (if it has not, it makes no call at all).
      await sleep(200);
      leaving.destroy();
      await once(leaving, 'close');
      const other = DE[6] as string;
      const marker = await rawGet(port, `/v1/validate?vat_number=${other}`, live.key);
      await waitFor(() => fake.calls.includes(other), 'a later call is made');
      marker.destroy();
      await waitFor(() => fake.aborted.includes(other), 'a later disconnect is seen');
      assert.ok(!fake.aborted.includes(FR), 'the shared call goes on while a client still waits');

      fake.releaseAll();
      const res = await staying;
      assert.equal(res.status, 200);
      const sent = await res.text();
      assert.equal(fake.calls.filter((n) => n === FR).length, 1, 'one upstream call for both clients');
      assert.equal(leaving.received(), '', 'the client that left got nothing');

      // Only the answer that was written has an audit record and an event.
      const records = await auditsOf(live);
      const frRecords = records.filter((r) => r.response.includes(FR));
      assert.equal(frRecords.length, 1);
      assert.equal(frRecords[0]?.response, sent, 'the record is byte for byte what was sent');
      assert.equal(frRecords[0]?.undelivered_at ?? null, null);
      assert.deepEqual(await auditsOf(leavingKey), [], 'no record of an answer that was never sent');
      assert.deepEqual(await eventsOf(leavingKey), [], 'no event of an answer that was never sent');
      assert.equal(
        records.filter((r) => r.response.includes(alone) || r.response.includes(other)).length,
        0,
        'the cancelled calls left no record',
      );
      // The registry's answer itself is kept.
      const answer = await db.kysely
        .selectFrom('registry_answers')
        .selectAll()
        .where('vat_number', '=', FR)
        .executeTakeFirst();
      assert.ok(answer, 'the answer the registry gave is stored');
    });

    it('an answer whose client went away before the commit leaves no audit record and no event', async () => {
      const container = t.container;
      // The client's connection closes once its answer is ready, before it is recorded.
      let app: FastifyInstance | null = null;
      app = await buildApp({
        ...container,
        validation: {
          ...container.validation,
          async validate(...args: Parameters<typeof container.validation.validate>) {
            const outcome = await container.validation.validate(...args);
            app?.server.closeAllConnections();
            return outcome;
          },
        },
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      try {
        const appPort = (app.server.address() as { port: number }).port;
        const vat = DE[8] as string;
        const socket = await rawGet(appPort, `/v1/validate?vat_number=${vat}`, live.key);
        await once(socket, 'close');
        assert.equal(socket.received(), '', 'nothing reached the client');
        // The registry's answer is stored (the same path commits it), and nothing else.
        await waitFor(
          async () =>
            (await db.kysely
              .selectFrom('registry_answers')
              .select('vat_number')
              .where('vat_number', '=', vat)
              .executeTakeFirst()) !== undefined,
          'the registry answer is stored',
        );
        assert.deepEqual(await auditsOf(live), [], 'no record of an answer that was never sent');
        assert.deepEqual(await eventsOf(live), [], 'no event of an answer that was never sent');
      } finally {
        await app.close();
      }
    });

    it('an answer recorded but not written to its client is marked as not delivered', async () => {
      const container = t.container;
      // The connection closes while the record is being committed: the write that follows fails.
      let app: FastifyInstance | null = null;
      const recorder = createResponseRecorder(
        {
          async record(entry) {
            const done = await container.outbox.record(entry);
            if (entry.audit) app?.server.closeAllConnections();
            return done;
          },
        },
        container.audits,
      );
      app = await buildApp({ ...container, sendRecorded: recorder });
      await app.listen({ host: '127.0.0.1', port: 0 });
      try {
        const appPort = (app.server.address() as { port: number }).port;
        const vat = DE[7] as string;
        const socket = await rawGet(appPort, `/v1/validate?vat_number=${vat}`, live.key);
        await once(socket, 'close');
        assert.equal(socket.received(), '', 'nothing reached the client');
        await waitFor(
          async () => (await auditsOf(live)).some((r) => r.response.includes(vat) && r.undelivered_at),
          'the record is marked as not delivered',
        );
        const record = (await auditsOf(live)).find((r) => r.response.includes(vat));
        assert.ok(record);
        const audit = await fetch(`http://127.0.0.1:${port}/v1/audits/${record.request_id}`, {
          headers: live.headers,
        });
        assert.equal(audit.status, 200);
        const body = (await audit.json()) as { data: { delivered: boolean; status_code: number } };
        assert.equal(body.data.delivered, false);
        assert.equal(body.data.status_code, 200);
      } finally {
        await app.close();
      }
    });
  });
}

describe('a registry that never answers, over real connections', () => {
  let registry: FixtureServer;
  let t: TestApp;
  let port: number;
  let live: TestKey;

  before(async () => {
    registry = await startFixtureServer(() => 'hang');
    t = await buildTestApp({
      VIES_URL: `${registry.url}/rest-api`,
      OPENVAT_PLAYGROUND: 'false',
      OPENVAT_STATUS_POLL_MS: '0',
      OPENVAT_REGISTRY_CONCURRENCY: '1',
      OPENVAT_REGISTRY_TIMEOUT_MS: '400',
      OPENVAT_REGISTRY_PERMIT_WAIT_MS: '300',
      OPENVAT_REGISTRY_DEADLINE_MS: '0',
      OPENVAT_BREAKER_THRESHOLD: '1000',
      OPENVAT_RATE_LIMIT_BUSINESS: '100000',
      // The smallest idle timeout the registry settings allow: max(300, 0) + 400 + 2000.
      OPENVAT_IDLE_TIMEOUT_MS: '2700',
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
    live = await t.key('business', 'live');
  });
  after(async () => {
    await t.close();
    await registry.close();
  });

  it('every request gets an HTTP answer before the idle timeout cuts its connection', async () => {
    const outcomes = await Promise.all(
      DE.slice(10, 22).map(async (vat) => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/v1/validate?vat_number=${vat}`, {
            headers: live.headers,
            signal: AbortSignal.timeout(20_000),
          });
          const body = (await res.json()) as { error?: { code: string } };
          return `${res.status} ${body.error?.code ?? ''} ${res.headers.get('retry-after') ? 'retry-after' : ''}`;
        } catch (error) {
          return `no answer: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`;
        }
      }),
    );
    assert.deepEqual(
      outcomes,
      outcomes.map(() => '502 registry_unavailable retry-after'),
      'each request is answered 502 with Retry-After, none is reset',
    );
  });

  it('a synchronous batch and decisions waiting on the same registry are answered before the idle timeout too', async () => {
    const post = async (path: string, body: unknown) => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { ...live.headers, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      } catch (error) {
        return {
          status: 0,
          body: { reset: ((error as Error).cause as Error | undefined)?.message ?? String(error) },
        };
      }
    };
    // Twelve numbers of one member state behind one permit: without a bound on each item's wait the
    // batch would take twelve registry timeouts, past the idle timeout.
    const [batch, ...decisions] = await Promise.all([
      post('/v1/validate/batch', { vat_numbers: DE.slice(0, 12) }),
      ...DE.slice(22, 25).map((buyer) => post('/v1/decide', { seller_vat: DE[25], buyer_vat: buyer })),
    ]);
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
    const results = (batch.body.data as { results: { ok: boolean; error?: { code: string } }[] }).results;
    assert.equal(results.length, 12);
    assert.ok(
      results.every((r) => !r.ok && r.error?.code === 'registry_unavailable'),
      JSON.stringify(results),
    );
    for (const decision of decisions) {
      assert.equal(decision.status, 502, JSON.stringify(decision.body));
      assert.equal((decision.body.error as { code: string }).code, 'registry_unavailable');
    }
  });
});
