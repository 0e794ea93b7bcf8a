import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { WebhookDeliveriesTable } from '../../src/db/schema.js';
import { createWorker } from '../../src/jobs/worker.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createIdGenerator } from '../../src/lib/ids.js';
import { createEventsRepository } from '../../src/modules/events/repository.js';
import { createEventsService } from '../../src/modules/events/service.js';
import { createKeysRepository } from '../../src/modules/keys/repository.js';
import { type ApiKeyPrincipal, createKeysService } from '../../src/modules/keys/service.js';
import { createWebhooksRepository } from '../../src/modules/webhooks/repository.js';
import {
  createWebhooksService,
  MAX_IN_FLIGHT_PER_ENDPOINT,
  MAX_IN_FLIGHT_PER_KEY,
  type WebhooksService,
} from '../../src/modules/webhooks/service.js';
import { createHttpTransport, type WebhookTransport } from '../../src/modules/webhooks/transport.js';
import { verifyWebhook } from '../../src/modules/webhooks/verify.js';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { isUuidV7 } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const BACKOFF = 1_000;
const PAYLOAD =
  '{"data": {"valid":true,"vat_number":"DE136695976"},  "meta":{"request_id":"r-1","latency_ms":1.25}}';

for (const target of await databaseTargets()) {
  describe(`webhooks on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let receiver: WebhookReceiver;
    const clock = createManualClock('2026-11-22T10:00:00.000Z');
    const ids = createIdGenerator();
    const dns = createFakeDns({ 'hooks.example.test': '93.184.216.34' });
    const transports: WebhookTransport[] = [];
    let events: ReturnType<typeof createEventsService>;
    let webhooks: WebhooksService;
    let principal: ApiKeyPrincipal;

    function service(
      options: { workerId?: string; timeoutMs?: number; allowPrivate?: boolean } = {},
    ): WebhooksService {
      const transport = createHttpTransport();
      transports.push(transport);
      return createWebhooksService({
        db: db.kysely,
        repository: createWebhooksRepository(db.kysely, db.dialect),
        clock,
        ids,
        dns,
        transport,
        allowPrivate: options.allowPrivate ?? true,
        backoffMs: BACKOFF,
        random: () => 0.5,
        workerId: options.workerId ?? 'worker-a',
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      });
    }

    async function newKey(): Promise<ApiKeyPrincipal> {
      const keys = createKeysService({
        db: db.kysely,
        repository: createKeysRepository(db.kysely),
        clock,
        ids,
      });
      const created = await keys.createKey({ plan: 'pro', mode: 'live' });
      const found = await keys.authenticate(created.key);
      assert.ok(found.kind === 'ok', 'the key is accepted');
      return found.principal;
    }

    async function register(url: string, owner = principal, svc = webhooks) {
      const result = await svc.register(owner, url);
      assert.ok(result.kind === 'ok', JSON.stringify(result));
      return result.endpoint;
    }

    /** The latest deliveries of one of the principal's endpoints, with their attempts. */
    async function deliveryLog(endpointId: string) {
      const listed = await webhooks.deliveries(principal, endpointId, 10);
      assert.ok(listed.kind === 'ok', JSON.stringify(listed));
      return listed.deliveries;
    }

    /** Records an event and queues its deliveries in one transaction, as the outbox does. */
    function emit(payload = PAYLOAD, owner = principal): Promise<string> {
      return db.kysely.transaction().execute(async (trx) => {
        const event = await events.record(
          { accountId: owner.accountId, keyId: owner.id, type: 'validation.completed', payload },
          trx,
        );
        await webhooks.enqueue(event, trx);
        return event.id;
      });
    }

    function deliveryRows() {
      return db.kysely
        .selectFrom('webhook_deliveries')
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    }

    before(async () => {
      db = await target.open();
      receiver = await startWebhookReceiver();
      events = createEventsService({ repository: createEventsRepository(db.kysely), clock, ids });
      webhooks = service();
    });
    after(async () => {
      for (const t of transports) t.close();
      await receiver.close();
      await db.dispose();
    });
    beforeEach(async () => {
      principal = await newKey();
      receiver.received.length = 0;
      receiver.behave(() => 200);
    });
    afterEach(async () => {
      // Each test starts with an empty queue.
      await db.kysely.deleteFrom('webhook_attempts').execute();
      await db.kysely.deleteFrom('webhook_deliveries').execute();
      await db.kysely.deleteFrom('webhook_endpoints').execute();
    });

    it('delivers the event body verbatim with byte-exact headers and an independently checkable signature', async () => {
      const endpoint = await register(`${receiver.origin}/hooks/a?x=1`);
      assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.equal(Buffer.from(endpoint.secret.slice(6), 'base64').length, 24);
      const eventId = await emit();
      const event = await db.kysely
        .selectFrom('events')
        .selectAll()
        .where('id', '=', eventId)
        .executeTakeFirstOrThrow();

      assert.equal(
        await service()
          .claimDue(0)
          .then((r) => r.length),
        0,
      );
      const delivered = await createWorker({
        name: 't',
        claim: (n) => webhooks.claimDue(n),
        handle: (row, signal) => webhooks.deliver(row, signal),
        concurrency: 4,
        idleDelayMs: 1_000,
        onError: (error) => assert.fail(String(error)),
      }).drain();
      assert.equal(delivered, 1);

      assert.equal(receiver.received.length, 1);
      const got = receiver.received[0]!;
      const body = `{"event":"validation.completed","created_at":"${event.created_at}","data":${PAYLOAD}}`;
      assert.equal(got.method, 'POST');
      assert.equal(got.path, '/hooks/a?x=1');
      assert.equal(got.body, body);
      const timestamp = String(Math.floor(clock.now().getTime() / 1000));
      const expected = `sha256=${createHmac('sha256', endpoint.secret).update(`${timestamp}.${body}`).digest('hex')}`;
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(got.headers['service-event'], 'validation.completed');
      assert.equal(got.headers['service-timestamp'], timestamp);
      assert.equal(got.headers['service-signature'], expected);
      assert.match(expected, /^sha256=[0-9a-f]{64}$/);
      assert.ok(isUuidV7(got.headers['service-delivery-id']));
      assert.equal(got.headers['content-length'], String(Buffer.byteLength(body)));
      for (const name of [
        'Content-Type',
        'Service-Event',
        'Service-Timestamp',
        'Service-Signature',
        'Service-Delivery-Id',
      ]) {
        assert.ok(got.rawHeaders.includes(name), `${name} is sent with that spelling`);
      }
      assert.deepEqual(
        verifyWebhook({ secret: endpoint.secret, headers: got.headers, rawBody: got.body, now: clock.now() }),
        {
          ok: true,
          event: JSON.parse(body),
        },
      );

      const [row] = await deliveryRows();
      assert.equal(row?.status, 'delivered');
      assert.equal(row?.attempts, 1);
      assert.equal(row?.claimed_by, null);
      const log = await deliveryLog(endpoint.id);
      assert.equal(log[0]?.attempts[0]?.id, got.headers['service-delivery-id']);
      assert.equal(log[0]?.event_id, eventId);
    });

    it('retries with exponential backoff: 3 failures then success on the 4th attempt with 4 distinct delivery ids', async () => {
      const endpoint = await register(`${receiver.origin}/retry`);
      receiver.behave((_req, i) => (i < 3 ? 500 : 200));
      await emit();
      const start = clock.now().getTime();
      assert.equal(
        await webhooks
          .claimDue(10)
          .then((rows) => Promise.all(rows.map((r) => webhooks.deliver(r))))
          .then((x) => x.length),
        1,
      );

      const waits = [BACKOFF, 2 * BACKOFF, 4 * BACKOFF];
      let elapsed = 0;
      for (const wait of waits) {
        const [pending] = await deliveryRows();
        assert.equal(pending?.status, 'pending');
        assert.equal(pending?.next_attempt_at, new Date(start + elapsed + wait).toISOString());
        clock.advance(wait - 1);
        assert.deepEqual(await webhooks.claimDue(10), [], 'not due before its backoff');
        clock.advance(1);
        elapsed += wait;
        const rows = await webhooks.claimDue(10);
        assert.equal(rows.length, 1);
        await webhooks.deliver(rows[0]!);
      }

      assert.equal(receiver.received.length, 4);
      const deliveryIds = new Set(receiver.received.map((r) => r.headers['service-delivery-id']));
      assert.equal(deliveryIds.size, 4);
      assert.equal(new Set(receiver.received.map((r) => r.body)).size, 1, 'the same body every time');
      const [row] = await deliveryRows();
      assert.equal(row?.status, 'delivered');
      assert.equal(row?.attempts, 4);
      const log = (await deliveryLog(endpoint.id))[0];
      assert.deepEqual(
        log?.attempts.map((a) => [a.attempt, a.status, a.http_status]),
        [
          [1, 'failed', 500],
          [2, 'failed', 500],
          [3, 'failed', 500],
          [4, 'succeeded', 200],
        ],
      );
      assert.deepEqual([...deliveryIds].sort(), log?.attempts.map((a) => a.id).sort());
      const [view] = await webhooks.list(principal);
      assert.equal(view?.failing, false);
      assert.equal(view?.last_delivery?.status, 'succeeded');
    });

    it('marks a delivery failed after 4 failed attempts, flags the endpoint failing, and replays it', async () => {
      const endpoint = await register(`${receiver.origin}/fail`);
      receiver.behave(() => 503);
      await emit();
      for (let i = 0; i < 4; i += 1) {
        const rows = await webhooks.claimDue(10);
        assert.equal(rows.length, 1, `attempt ${i + 1} is due`);
        await webhooks.deliver(rows[0]!);
        clock.advance(10 * BACKOFF);
      }
      clock.advance(3_600_000);
      assert.deepEqual(await webhooks.claimDue(10), [], 'no fifth attempt');
      assert.equal(receiver.received.length, 4);
      const [row] = await deliveryRows();
      assert.equal(row?.status, 'failed');
      assert.equal(row?.attempts, 4);
      assert.equal(row?.next_attempt_at, null);
      assert.match(row?.last_error ?? '', /HTTP 503/);
      const [view] = await webhooks.list(principal);
      assert.equal(view?.failing, true);
      assert.deepEqual(
        { status: view?.last_delivery?.status, http: view?.last_delivery?.http_status },
        { status: 'failed', http: 503 },
      );

      const replay = await webhooks.replay(principal, endpoint.id, row!.id);
      assert.ok(replay.kind === 'ok');
      assert.equal(replay.delivery.status, 'pending');
      assert.deepEqual(await webhooks.replay(principal, endpoint.id, row!.id), {
        kind: 'refused',
        reason: 'invalid_format',
        message: 'This delivery is still queued; only finished deliveries can be replayed.',
      });
      // The replay's first attempt still fails: its retry waits the base delay again, not 2^4 times it.
      let rows = await webhooks.claimDue(10);
      await webhooks.deliver(rows[0]!);
      const [retry] = await deliveryRows();
      assert.equal(retry?.status, 'pending');
      assert.equal(retry?.attempts, 5);
      assert.equal(retry?.next_attempt_at, new Date(clock.millis() + BACKOFF).toISOString());
      receiver.behave(() => 200);
      clock.advance(BACKOFF);
      rows = await webhooks.claimDue(10);
      await webhooks.deliver(rows[0]!);
      const log = (await deliveryLog(endpoint.id))[0];
      assert.equal(log?.status, 'delivered');
      assert.deepEqual(log?.attempts.at(-1)?.attempt, 6);
      assert.equal((await webhooks.list(principal))[0]?.failing, false);
    });

    it('counts an attempt that gets no answer within the timeout as failed', async () => {
      const quick = service({ timeoutMs: 200 });
      await register(`${receiver.origin}/slow`);
      receiver.behave(() => 'hang');
      await emit();
      const rows = await quick.claimDue(10);
      await quick.deliver(rows[0]!);
      assert.equal(receiver.received.length, 1);
      const [row] = await deliveryRows();
      assert.equal(row?.status, 'pending');
      assert.equal(row?.attempts, 1);
      const attempt = await db.kysely.selectFrom('webhook_attempts').selectAll().executeTakeFirstOrThrow();
      assert.equal(attempt.status, 'failed');
      assert.equal(attempt.http_status, null);
      assert.match(attempt.error ?? '', /No answer within 200 ms/);
    });

    it('does not follow redirects: a 3xx is a failed attempt', async () => {
      await register(`${receiver.origin}/moved`);
      receiver.behave(() => 302);
      await emit();
      const rows = await webhooks.claimDue(10);
      await webhooks.deliver(rows[0]!);
      assert.equal(receiver.received.length, 1);
      const [row] = await deliveryRows();
      assert.equal(row?.status, 'pending');
      assert.match(row?.last_error ?? '', /redirects are not followed/);
    });

    it('re-checks the address at connect time: a name that turned private is refused and nothing is sent', async () => {
      const strict = service({ allowPrivate: false });
      dns.set('hooks.example.test', '93.184.216.34');
      await register(`https://hooks.example.test:${receiver.port}/x`, principal, strict);
      const connectionsBefore = receiver.connections();
      const rebounds = ['127.0.0.1', '::ffff:127.0.0.1', '::7f00:1', '::a9fe:a9fe'];
      for (const rebound of rebounds) {
        dns.set('hooks.example.test', rebound);
        await emit();
        const rows = await strict.claimDue(10);
        assert.equal(rows.length, 1);
        await strict.deliver(rows[0]!);
      }
      assert.equal(receiver.connections(), connectionsBefore, 'no connection was even opened');
      assert.equal(receiver.received.length, 0);
      const attempts = await db.kysely
        .selectFrom('webhook_attempts')
        .selectAll()
        .orderBy('created_at')
        .execute();
      assert.equal(attempts.length, rebounds.length);
      for (const a of attempts) {
        assert.equal(a.status, 'failed');
        assert.match(a.error ?? '', /^Refused: .*not a public address/);
        // The attempt log is shown to the key's owner: it does not say what the name resolved to.
        assert.doesNotMatch(a.error ?? '', /127\.0\.0\.1|7f00|a9fe/);
      }
      dns.set('hooks.example.test', '93.184.216.34');
    });

    it('writes delivery rows in the transaction of the event: rolled back, nothing is queued', async () => {
      const a = await register(`${receiver.origin}/a`);
      const b = await register(`${receiver.origin}/b`);
      const off = await register(`${receiver.origin}/off`);
      assert.equal((await webhooks.update(principal, off.id, { disabled: true })).kind, 'ok');
      const other = await newKey();
      await register(`${receiver.origin}/other`, other);

      await assert.rejects(
        db.kysely.transaction().execute(async (trx) => {
          const event = await events.record(
            {
              accountId: principal.accountId,
              keyId: principal.id,
              type: 'validation.completed',
              payload: PAYLOAD,
            },
            trx,
          );
          await webhooks.enqueue(event, trx);
          const inside = await trx.selectFrom('webhook_deliveries').select('id').execute();
          assert.equal(inside.length, 2, 'visible inside the transaction');
          throw new Error('the call failed');
        }),
        /the call failed/,
      );
      assert.deepEqual(await deliveryRows(), []);

      await emit();
      const rows = await deliveryRows();
      assert.deepEqual(
        rows.map((r) => r.endpoint_id).sort(),
        [a.id, b.id].sort(),
        'one per enabled endpoint of the key',
      );
      assert.ok(rows.every((r) => r.status === 'pending' && r.attempts === 0 && r.locked_until === null));
    });

    it('a claim whose worker died is claimed again once its lease expires (at least once)', async () => {
      await register(`${receiver.origin}/lease`);
      await emit();
      const a = service({ workerId: 'worker-dead' });
      const b = service({ workerId: 'worker-b' });
      const claimed = await a.claimDue(10);
      assert.equal(claimed.length, 1);
      assert.equal(claimed[0]?.claimed_by, 'worker-dead');
      assert.deepEqual(await b.claimDue(10), [], 'leased rows are not claimed twice');
      clock.advance(30_000 + 1);
      const again = await b.claimDue(10);
      assert.equal(again.length, 1);
      await b.deliver(again[0]!);
      // The dead worker's late result (if it ever came) must not overwrite the newer state.
      await a.deliver(claimed[0]!);
      const [row] = await deliveryRows();
      assert.equal(row?.status, 'delivered');
      assert.equal(row?.attempts, 1);
      assert.equal(row?.claimed_by, null);
    });

    it('two workers on one database share the queue without sending anything twice', async () => {
      await register(`${receiver.origin}/shared`);
      const total = 60;
      for (let i = 0; i < total; i += 1) await emit(`{"data":{"n":${i}},"meta":{"request_id":"r-${i}"}}`);
      const workers = ['w1', 'w2'].map((id) => {
        const svc = service({ workerId: id });
        return createWorker({
          name: id,
          claim: (n) => svc.claimDue(n),
          handle: (row, signal) => svc.deliver(row, signal),
          concurrency: 5,
          idleDelayMs: 1_000,
          onError: (error) => assert.fail(String(error)),
        });
      });
      const counts = await Promise.all(workers.map((w) => w.drain()));
      assert.equal(counts[0]! + counts[1]!, total);
      assert.equal(receiver.received.length, total);
      assert.equal(new Set(receiver.received.map((r) => r.body)).size, total, 'each event exactly once');
      const rows = await deliveryRows();
      assert.ok(rows.every((r) => r.status === 'delivered' && r.attempts === 1));
    });

    it('an endpoint that hangs takes at most its share of the slots: another key is delivered on the first pass', async () => {
      const quick = service({ timeoutMs: 300 });
      receiver.behave((req) => (req.path === '/stuck' ? 'hang' : 200));
      const stuck = await register(`${receiver.origin}/stuck`);
      const queued = 40;
      for (let i = 0; i < queued; i += 1) await emit(`{"data":{"n":${i}},"meta":{}}`);
      clock.advance(1_000);
      const other = await newKey();
      const waiting = await register(`${receiver.origin}/other`, other);
      await emit('{"data":{"n":"other"},"meta":{}}', other);

      const worker = createWorker({
        name: 'fair',
        claim: (n) => quick.claimDue(n),
        handle: (row, signal) => quick.deliver(row, signal),
        concurrency: 32,
        idleDelayMs: 1_000,
        onError: (error) => assert.fail(String(error)),
      });
      assert.equal(await worker.runOnce(), MAX_IN_FLIGHT_PER_ENDPOINT + 1);
      assert.deepEqual(
        receiver.received.filter((r) => r.path === '/other').map((r) => r.body),
        [
          `{"event":"validation.completed","created_at":"${clock.now().toISOString()}","data":{"data":{"n":"other"},"meta":{}}}`,
        ],
      );
      assert.equal(receiver.received.filter((r) => r.path === '/stuck').length, MAX_IN_FLIGHT_PER_ENDPOINT);
      const rows = await deliveryRows();
      assert.equal(rows.find((r) => r.endpoint_id === waiting.id)?.status, 'delivered');
      const tried = rows.filter((r) => r.endpoint_id === stuck.id && r.attempts > 0);
      assert.equal(tried.length, MAX_IN_FLIGHT_PER_ENDPOINT, 'the timed-out attempts are recorded');
      assert.ok(tried.every((r) => r.status === 'pending' && r.claimed_by === null));
      assert.deepEqual(
        tried.map((r) => r.body),
        rows
          .filter((r) => r.endpoint_id === stuck.id)
          .slice(0, MAX_IN_FLIGHT_PER_ENDPOINT)
          .map((r) => r.body),
        'the oldest deliveries of the endpoint went first',
      );

      // Once the endpoint answers again, its whole queue is delivered, each event once.
      receiver.behave(() => 200);
      clock.advance(2 * BACKOFF);
      assert.equal(await worker.drain(), queued);
      const after = await deliveryRows();
      assert.ok(after.every((r) => r.status === 'delivered'));
      const bodies = receiver.received.filter((r) => r.path === '/stuck').map((r) => r.body);
      assert.equal(bodies.length, queued + MAX_IN_FLIGHT_PER_ENDPOINT);
      assert.equal(new Set(bodies).size, queued);
    });

    it('the per-endpoint share counts every worker’s leases: workers claiming at once take no more between them', async () => {
      const full = await register(`${receiver.origin}/full`);
      for (let i = 0; i < 20; i += 1) await emit(`{"data":{"n":${i}},"meta":{}}`);
      const other = await newKey();
      const second = await register(`${receiver.origin}/second`, other);
      for (let i = 0; i < 3; i += 1) await emit(`{"data":{"m":${i}},"meta":{}}`, other);
      const workers = ['w1', 'w2', 'w3', 'w4'].map((workerId) => service({ workerId }));

      const claims = await Promise.all(workers.map((w) => w.claimDue(10)));
      const claimed = claims.flat();
      assert.equal(new Set(claimed.map((r) => r.id)).size, claimed.length, 'no row claimed twice');
      assert.equal(claimed.filter((r) => r.endpoint_id === full.id).length, MAX_IN_FLIGHT_PER_ENDPOINT);
      assert.equal(claimed.filter((r) => r.endpoint_id === second.id).length, 3);
      const rows = await deliveryRows();
      const leased = (endpointId: string) =>
        rows.filter((r) => r.endpoint_id === endpointId && r.claimed_by !== null).map((r) => r.id);
      assert.deepEqual(
        leased(full.id),
        rows
          .filter((r) => r.endpoint_id === full.id)
          .slice(0, MAX_IN_FLIGHT_PER_ENDPOINT)
          .map((r) => r.id),
        'the oldest of the endpoint, whoever holds them',
      );
      for (const w of workers)
        assert.deepEqual(await w.claimDue(10), [], 'nothing more while the share is held');

      // One delivery finishes: exactly one more of that endpoint may be claimed, the next oldest.
      const done = claimed.find((r) => r.endpoint_id === full.id)!;
      await workers[claims.findIndex((c) => c.includes(done))]!.deliver(done);
      const next = await workers[3]!.claimDue(10);
      assert.deepEqual(
        next.map((r) => r.id),
        [rows.filter((r) => r.endpoint_id === full.id)[MAX_IN_FLIGHT_PER_ENDPOINT]!.id],
      );

      // Leases that expired (their worker died) no longer count: the share is free again.
      clock.advance(30_000 + 1);
      const retaken = await workers[0]!.claimDue(10);
      assert.equal(retaken.filter((r) => r.endpoint_id === full.id).length, MAX_IN_FLIGHT_PER_ENDPOINT);
    });

    it('four keys whose five endpoints all hang hold at most their share each: another key is delivered while they hang, from the first claim after it is queued', async () => {
      const patient = service({ timeoutMs: 120_000 });
      receiver.behave((req) => (req.path.startsWith('/hang/') ? 'hang' : 200));
      const stuck: ApiKeyPrincipal[] = [];
      for (let k = 0; k < 4; k += 1) {
        const key = await newKey();
        for (let e = 0; e < 5; e += 1) await register(`${receiver.origin}/hang/${k}/${e}`, key);
        for (let i = 0; i < 3; i += 1) await emit(`{"data":{"k":${k},"n":${i}},"meta":{}}`, key);
        stuck.push(key);
      }
      const other = await newKey();
      await register(`${receiver.origin}/other`, other);

      let queued = false;
      const claims: Array<{ afterQueued: boolean; rows: WebhookDeliveriesTable[] }> = [];
      const worker = createWorker({
        name: 'keys',
        claim: async (n) => {
          const afterQueued = queued;
          const rows = await patient.claimDue(n);
          claims.push({ afterQueued, rows });
          return rows;
        },
        handle: (row, signal) => patient.deliver(row, signal),
        concurrency: 32,
        idleDelayMs: 20,
        onError: (error) => assert.fail(String(error)),
      });
      worker.start();
      try {
        await receiver.waitFor(4 * MAX_IN_FLIGHT_PER_KEY);
        await emit('{"data":{"n":"other"},"meta":{}}', other);
        queued = true;
        worker.notify();
        await receiver.waitFor(4 * MAX_IN_FLIGHT_PER_KEY + 1);
        assert.equal(receiver.received.at(-1)?.path, '/other');
        let rows = await deliveryRows();
        for (let i = 0; rows.find((r) => r.key_id === other.id)?.status !== 'delivered'; i += 1) {
          assert.ok(i < 200, 'the delivery is recorded as delivered');
          await new Promise((resolve) => setTimeout(resolve, 25));
          rows = await deliveryRows();
        }
        // Claims run one after another. A claim that began while the delivery was being queued may
        // take it (marked as begun before); any claim begun after it was queued would see it.
        const taker = claims.findIndex((c) => c.rows.some((r) => r.key_id === other.id));
        assert.ok(taker >= 0, 'a claim took it');
        assert.ok(
          claims.slice(0, taker).every((c) => !c.afterQueued),
          'the first claim after it was queued took it',
        );
        assert.ok(
          claims.slice(taker + 1).every((c) => c.rows.length === 0),
          'no claim after it took a stuck key’s delivery',
        );
        assert.deepEqual(
          claims[taker]!.rows.map((r) => r.key_id),
          [other.id],
          'the claim that took it took nothing of the stuck keys',
        );
        stuck.forEach((key, k) => {
          const sent = receiver.received.filter((r) => r.path.startsWith(`/hang/${k}/`)).length;
          assert.equal(sent, MAX_IN_FLIGHT_PER_KEY, `key ${k} holds its share of the slots, no more`);
          const leased = rows.filter((r) => r.key_id === key.id && r.claimed_by !== null);
          assert.equal(leased.length, MAX_IN_FLIGHT_PER_KEY);
          assert.ok(
            leased.every((r) => r.status === 'pending' && r.attempts === 0),
            'still hanging',
          );
          assert.equal(new Set(leased.map((r) => r.endpoint_id)).size, 5, "the key's endpoints take turns");
        });
      } finally {
        await worker.stop();
      }
    });

    it('the per-key share counts every worker’s leases: workers claiming at once take no more between them for a key with five endpoints', async () => {
      for (let e = 0; e < 5; e += 1) await register(`${receiver.origin}/many/${e}`);
      for (let i = 0; i < 10; i += 1) await emit(`{"data":{"n":${i}},"meta":{}}`);
      const other = await newKey();
      await register(`${receiver.origin}/else`, other);
      for (let i = 0; i < 3; i += 1) await emit(`{"data":{"m":${i}},"meta":{}}`, other);
      const workers = ['w1', 'w2', 'w3', 'w4'].map((workerId) => service({ workerId }));

      const claims = await Promise.all(workers.map((w) => w.claimDue(10)));
      const claimed = claims.flat();
      assert.equal(new Set(claimed.map((r) => r.id)).size, claimed.length, 'no row claimed twice');
      const mine = claimed.filter((r) => r.key_id === principal.id);
      assert.equal(mine.length, MAX_IN_FLIGHT_PER_KEY);
      assert.equal(new Set(mine.map((r) => r.endpoint_id)).size, 5, "the key's endpoints take turns");
      assert.equal(claimed.filter((r) => r.key_id === other.id).length, 3, 'another key is not held back');
      for (const w of workers)
        assert.deepEqual(await w.claimDue(10), [], 'nothing more while the share is held');

      // One delivery finishes: exactly one more of that key may be claimed.
      const done = mine[0]!;
      await workers[claims.findIndex((c) => c.includes(done))]!.deliver(done);
      const next = await workers[3]!.claimDue(10);
      assert.equal(next.length, 1);
      assert.equal(next[0]?.key_id, principal.id);

      // Leases that expired (their worker died) no longer count: the share is free again.
      clock.advance(30_000 + 1);
      const retaken = await workers[0]!.claimDue(20);
      assert.equal(retaken.filter((r) => r.key_id === principal.id).length, MAX_IN_FLIGHT_PER_KEY);
    });

    it('a slow endpoint with a long queue is sent at most its share at a time, all of it in the end, while another key passes it', async () => {
      receiver.behave((req) => (req.path === '/slow' ? { status: 200, afterMs: 100 } : 200));
      await register(`${receiver.origin}/slow`);
      const queued = 24;
      for (let i = 0; i < queued; i += 1) await emit(`{"data":{"n":${i}},"meta":{}}`);
      clock.advance(1_000);
      const other = await newKey();
      await register(`${receiver.origin}/fast`, other);
      for (let i = 0; i < 5; i += 1) await emit(`{"data":{"fast":${i}},"meta":{}}`, other);

      const worker = createWorker({
        name: 'slow',
        claim: (n) => webhooks.claimDue(n),
        handle: (row, signal) => webhooks.deliver(row, signal),
        concurrency: 32,
        idleDelayMs: 20,
        onError: (error) => assert.fail(String(error)),
      });
      worker.start();
      try {
        await receiver.waitFor(queued + 5);
        for (let i = 0; ; i += 1) {
          const pending = await db.kysely
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('status', '!=', 'delivered')
            .execute();
          if (pending.length === 0) break;
          assert.ok(i < 200, `${pending.length} deliveries still not delivered`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      } finally {
        await worker.stop();
      }
      assert.equal(receiver.peakOpen('/slow'), MAX_IN_FLIGHT_PER_ENDPOINT);
      const paths = receiver.received.map((r) => r.path);
      const slowIndexes = paths.flatMap((path, i) => (path === '/slow' ? [i] : []));
      assert.ok(
        paths.lastIndexOf('/fast') < slowIndexes[MAX_IN_FLIGHT_PER_ENDPOINT]!,
        `the other key's deliveries went out with the first slow ones: ${paths.join(' ')}`,
      );
      const order = receiver.received
        .filter((r) => r.path === '/slow')
        .map((r) => (JSON.parse(r.body) as { data: { data: { n: number } } }).data.data.n);
      assert.deepEqual(
        [...order].sort((a, b) => a - b),
        [...Array(queued).keys()],
        'each event once',
      );
      order.forEach((n, k) => {
        assert.ok(n < k + MAX_IN_FLIGHT_PER_ENDPOINT, `oldest first: event ${n} was sent ${k + 1}th`);
      });
    });

    it('the worker loop delivers in the background and stops cleanly, giving back an unanswered claim', async () => {
      await register(`${receiver.origin}/loop`);
      const worker = createWorker({
        name: 'loop',
        claim: (n) => webhooks.claimDue(n),
        handle: (row, signal) => webhooks.deliver(row, signal),
        concurrency: 4,
        idleDelayMs: 20,
        onError: (error) => assert.fail(String(error)),
      });
      worker.start();
      for (let i = 0; i < 5; i += 1) await emit(`{"data":{"n":${i}},"meta":{}}`);
      worker.notify();
      await receiver.waitFor(5);
      receiver.behave(() => 'hang');
      await emit('{"data":{"n":"last"},"meta":{}}');
      await receiver.waitFor(6);
      await worker.stop();
      const rows = await deliveryRows();
      assert.equal(rows.filter((r) => r.status === 'delivered').length, 5);
      const last = rows.find((r) => r.body.includes('"last"'));
      assert.equal(last?.status, 'pending');
      assert.equal(last?.attempts, 0, 'an aborted attempt is not counted');
      assert.equal(last?.claimed_by, null, 'the claim is released for the next worker');
    });
  });
}
