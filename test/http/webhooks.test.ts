import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createManualClock } from '../../src/lib/clock.js';
import { verifyWebhook } from '../../src/modules/webhooks/verify.js';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp, isUuidV7, type TestApp, type TestKey } from '../helpers/app.js';
import { assertErrorBody } from '../helpers/error-body.js';

type Res = { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string };

function errorCode(res: Res): string {
  return (res.json() as { error: { code: string } }).error.code;
}

describe('webhook endpoints (HTTPS only, public targets only)', () => {
  let t: TestApp;
  let pro: TestKey;
  const dns = createFakeDns({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'internal.example.com': '192.168.1.10',
    'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
  });

  before(async () => {
    t = await buildTestApp({}, { dns });
    pro = await t.key('pro', 'live');
  });
  after(() => t.close());

  function post(key: TestKey | null, body: unknown) {
    return t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: key ? key.headers : {},
      payload: body as object,
    });
  }

  it('refuses an invalid url, an unknown endpoint and an unknown delivery in the envelope, with their messages', async () => {
    const unknown = '0196f000-0000-7000-8000-00000000beef';
    const cases: Array<[string, () => Promise<Res>, number, string, string | RegExp]> = [
      [
        'plain http',
        () => post(pro, { url: 'http://hooks.example.com/x' }),
        400,
        'invalid_format',
        /^Invalid webhook url: ./,
      ],
      [
        'test of an unknown endpoint',
        () => t.app.inject({ method: 'POST', url: `/v1/webhooks/${unknown}/test`, headers: pro.headers }),
        404,
        'not_found',
        'No webhook endpoint with this id for this key.',
      ],
      [
        'replay of an unknown delivery',
        () =>
          t.app.inject({
            method: 'POST',
            url: `/v1/webhooks/${unknown}/deliveries/${unknown}/replay`,
            headers: pro.headers,
          }),
        404,
        'not_found',
        'No such delivery for this key.',
      ],
    ];
    for (const [what, send, status, code, message] of cases) {
      const res = await send();
      assert.equal(res.statusCode, status, what);
      const { error } = res.json() as { error: { code: string; message: string; details?: unknown } };
      assert.equal(error.code, code, what);
      if (typeof message === 'string') assert.equal(error.message, message, what);
      else assert.match(error.message, message, what);
      assert.equal(error.details, undefined, what);
    }
  });

  it('registers an https endpoint: 201 without envelope, secret shown once, request id header', async () => {
    const res = await post(pro, { url: 'https://hooks.example.com/openvat' });
    assert.equal(res.statusCode, 201);
    const body = res.json() as Record<string, string>;
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'id', 'secret', 'url']);
    assert.ok(isUuidV7(body.id));
    assert.equal(body.url, 'https://hooks.example.com/openvat');
    assert.match(body.secret ?? '', /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.ok(!Number.isNaN(Date.parse(body.created_at ?? '')));
    assert.ok(isUuidV7(res.headers['service-request-id']));

    const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: pro.headers });
    assert.equal(list.statusCode, 200);
    const listed = list.json() as { data: Array<Record<string, unknown>>; meta: { request_id: string } };
    assert.deepEqual(listed.data, [
      {
        id: body.id,
        url: body.url,
        created_at: body.created_at,
        events: null,
        disabled: false,
        failing: false,
        last_delivery: null,
      },
    ]);
    assert.ok(!list.body.includes('whsec_'), 'the secret is never listed');
    assert.equal(listed.meta.request_id, list.headers['service-request-id']);
    await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${body.id}`, headers: pro.headers });
  });

  it('needs a key (401) on a plan with webhooks (402 for Free and Starter)', async () => {
    assert.equal((await post(null, { url: 'https://hooks.example.com/' })).statusCode, 401);
    for (const plan of ['free', 'starter'] as const) {
      const res = await post(await t.key(plan, 'live'), { url: 'https://hooks.example.com/' });
      assert.equal(res.statusCode, 402);
      assert.equal(errorCode(res), 'plan_required');
    }
    const list = await t.app.inject({
      method: 'GET',
      url: '/v1/webhooks',
      headers: (await t.key('starter')).headers,
    });
    assert.equal(list.statusCode, 402);
    const business = await post(await t.key('business', 'test'), { url: 'https://hooks.example.com/' });
    assert.equal(business.statusCode, 201);
  });

  it('validates the body strictly', async () => {
    const cases: unknown[] = [
      {},
      { url: 42 },
      { url: '' },
      { url: `https://hooks.example.com/${'a'.repeat(2048)}` },
      { url: 'not a url' },
      { url: 'ftp://hooks.example.com/' },
      { url: 'http://hooks.example.com/' },
      { url: 'https://user:pass@hooks.example.com/' },
      { url: 'https://hooks.example.com/a"><script>alert(1)</script>' },
      { url: 'https://hooks.example.com/a b' },
    ];
    for (const body of cases) {
      const res = await post(pro, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(errorCode(res), 'invalid_format');
    }
    const http = await post(pro, { url: 'http://hooks.example.com/' });
    assert.match((http.json() as { error: { message: string } }).error.message, /https:\/\//);
    // Unknown fields are ignored, not refused, as by the hosted contract.
    const extra = await post(pro, { url: 'https://hooks.example.com/', extra: true });
    assert.equal(extra.statusCode, 201, extra.body);
    const { id } = extra.json() as { id: string };
    const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${id}`, headers: pro.headers });
    assert.equal(deleted.statusCode, 204);
  });

  it('refuses targets that are not public addresses', async () => {
    const refused = [
      'https://127.0.0.1/hook',
      'https://localhost/hook', // unknown to the resolver: cannot be resolved
      'https://10.1.2.3/hook',
      'https://172.16.5.4/hook',
      'https://192.168.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://2130706433/hook', // 127.0.0.1 as a number
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook',
      // IPv4-compatible IPv6 (::/96, deprecated): loopback, loopback again, cloud metadata.
      'https://[::127.0.0.1]/hook',
      'https://[::7f00:1]/hook',
      'https://[::a9fe:a9fe]/hook',
      'https://[fc00::1]/hook',
      'https://[fe80::1]/hook',
      'https://[::]/hook',
      'https://224.0.0.1/hook',
      'https://internal.example.com/hook',
      'https://mixed.example.com/hook',
    ];
    for (const url of refused) {
      const res = await post(pro, { url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(errorCode(res), 'invalid_format', url);
    }
    // The refusal says the host is not public, never what an internal name resolves to.
    for (const host of ['internal.example.com', 'mixed.example.com']) {
      const named = await post(pro, { url: `https://${host}/hook` });
      const { message } = (named.json() as { error: { message: string } }).error;
      assert.match(message, new RegExp(`${host.replaceAll('.', '\\.')}.*public`));
      assert.doesNotMatch(message, /192\.168|10\.0\.0\.7|93\.184/);
    }
    const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: pro.headers });
    assert.deepEqual((list.json() as { data: unknown[] }).data, []);
  });

  it('caps endpoints at 5 per key: disabled ones and duplicate URLs count; test keys too; delete frees a slot', async () => {
    for (const mode of ['live', 'test'] as const) {
      const key = await t.key('pro', mode);
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await post(key, { url: 'https://hooks.example.com/same' });
        assert.equal(res.statusCode, 201);
        ids.push((res.json() as { id: string }).id);
      }
      assert.equal(new Set(ids).size, 5, 'the same URL makes distinct registrations');
      const patch = await t.app.inject({
        method: 'PATCH',
        url: `/v1/webhooks/${ids[0]}`,
        headers: key.headers,
        payload: { disabled: true },
      });
      assert.equal(patch.statusCode, 200);
      const sixth = await post(key, { url: 'https://hooks.example.com/other' });
      assert.equal(sixth.statusCode, 400);
      const error = (sixth.json() as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'webhook_limit_reached');
      assert.match(error.message, /maximum of 5 webhook endpoints per key/);
      assert.deepEqual((sixth.json() as { error: { details: unknown } }).error.details, { max_endpoints: 5 });

      const del = await t.app.inject({
        method: 'DELETE',
        url: `/v1/webhooks/${ids[0]}`,
        headers: key.headers,
      });
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      assert.equal((await post(key, { url: 'https://hooks.example.com/other' })).statusCode, 201);
    }
    // The cap is per key: another key of the same account has its own five.
    const first = await t.key('pro', 'live');
    const sibling = await t.key('pro', 'live', { accountId: first.accountId });
    for (let i = 0; i < 5; i += 1)
      assert.equal((await post(first, { url: 'https://hooks.example.com/' })).statusCode, 201);
    assert.equal((await post(sibling, { url: 'https://hooks.example.com/' })).statusCode, 201);
  });

  it('disables and re-enables an endpoint; other keys and unknown ids get 404', async () => {
    const owner = await t.key('business', 'live');
    const stranger = await t.key('business', 'live');
    const id = ((await post(owner, { url: 'https://hooks.example.com/x' })).json() as { id: string }).id;

    const off = await t.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${id}`,
      headers: owner.headers,
      payload: { disabled: true },
    });
    assert.equal(off.statusCode, 200);
    const offBody = off.json() as { data: { id: string; disabled: boolean }; meta: { request_id: string } };
    assert.equal(offBody.data.id, id);
    assert.equal(offBody.data.disabled, true);
    assert.ok(isUuidV7(offBody.meta.request_id));
    const bad = await t.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${id}`,
      headers: owner.headers,
      payload: { disabled: 'yes' },
    });
    assert.equal(bad.statusCode, 400);

    const foreign = [
      { method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { disabled: false } },
      { method: 'DELETE', url: `/v1/webhooks/${id}` },
      { method: 'POST', url: `/v1/webhooks/${id}/test` },
      { method: 'GET', url: `/v1/webhooks/${id}/deliveries` },
      { method: 'POST', url: `/v1/webhooks/${id}/deliveries/${id}/replay` },
      { method: 'DELETE', url: '/v1/webhooks/not-a-uuid' },
      { method: 'PATCH', url: '/v1/webhooks/not-a-uuid', payload: { disabled: true } },
      { method: 'GET', url: '/v1/webhooks/not-a-uuid/deliveries' },
      { method: 'GET', url: '/v1/webhooks/0190b6a5-0000-7000-8000-000000000000/deliveries' },
      {
        method: 'PATCH',
        url: '/v1/webhooks/0190b6a5-0000-7000-8000-000000000000',
        payload: { events: null },
      },
      { method: 'DELETE', url: '/v1/webhooks/0190b6a5-0000-7000-8000-000000000000' },
    ] as const;
    for (const req of foreign) {
      const res = await t.app.inject({ ...req, headers: stranger.headers } as InjectOptions);
      const message = req.url.endsWith('/replay')
        ? 'No such delivery for this key.'
        : 'No webhook endpoint with this id for this key.';
      assertErrorBody(res, 404, { code: 'not_found', message }, `${req.method} ${req.url}`);
    }
    const strangerList = await t.app.inject({
      method: 'GET',
      url: '/v1/webhooks',
      headers: stranger.headers,
    });
    assert.deepEqual((strangerList.json() as { data: unknown[] }).data, []);
    const ownerList = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: owner.headers });
    assert.equal((ownerList.json() as { data: Array<{ disabled: boolean }> }).data[0]?.disabled, true);
  });

  it('documents every webhook route in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    assert.ok(doc.paths['/v1/webhooks']?.post);
    assert.ok(doc.paths['/v1/webhooks']?.get);
    assert.ok(doc.paths['/v1/webhooks/{id}']?.delete);
    assert.ok(doc.paths['/v1/webhooks/{id}']?.patch);
    assert.ok(doc.paths['/v1/webhooks/{id}/test']?.post);
    assert.ok(doc.paths['/v1/webhooks/{id}/deliveries']?.get);
    assert.ok(doc.paths['/v1/webhooks/{id}/deliveries/{delivery_id}/replay']?.post);
  });
});

describe('webhook test events, deliveries and replay (private targets allowed)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let key: TestKey;
  const clock = createManualClock('2026-11-22T12:00:00.000Z');

  before(async () => {
    t = await buildTestApp(
      { OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true', OPENVAT_WEBHOOK_BACKOFF_MS: '1000' },
      { clock },
    );
    receiver = await startWebhookReceiver();
    key = await t.key('pro', 'live');
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  async function register(path: string) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: key.headers,
      payload: { url: `${receiver.origin}${path}` },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; secret: string };
  }

  it('sends a signed test event at once, outside the queue, and reports the outcome', async () => {
    const endpoint = await register('/test-ok');
    receiver.received.length = 0;
    receiver.behave(() => 204);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${endpoint.id}/test`,
      headers: key.headers,
    });
    assert.equal(res.statusCode, 200);
    const body = res.json() as { delivered: boolean; status: number | null; latency_ms: number };
    assert.deepEqual(Object.keys(body).sort(), ['delivered', 'latency_ms', 'status']);
    assert.equal(body.delivered, true);
    assert.equal(body.status, 204);
    assert.ok(Number.isInteger(body.latency_ms), `latency_ms is a whole number: ${body.latency_ms}`);
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0]!;
    assert.equal(got.headers['service-event'], 'test');
    const verified = verifyWebhook({
      secret: endpoint.secret,
      headers: got.headers,
      rawBody: got.body,
      now: clock.now(),
    });
    assert.ok(verified.ok);
    assert.equal(verified.event.event, 'test');
    assert.deepEqual(
      (verified.event.data as { meta: { request_id: string } }).meta.request_id,
      res.headers['service-request-id'],
    );
    const queued = await t.container.db.kysely.selectFrom('webhook_deliveries').selectAll().execute();
    assert.equal(queued.length, 0, 'the test event bypasses the queue');

    receiver.behave(() => 500);
    const failed = (
      await t.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/test`, headers: key.headers })
    ).json() as { delivered: boolean; status: number | null };
    assert.deepEqual(
      { delivered: failed.delivered, status: failed.status },
      { delivered: false, status: 500 },
    );
  });

  it('reports status 0 and the error when the receiver cannot be reached', async () => {
    const closed = await startWebhookReceiver();
    const port = closed.port;
    await closed.close();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: key.headers,
      payload: { url: `http://127.0.0.1:${port}/gone` },
    });
    const { id } = res.json() as { id: string };
    const test = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers: key.headers });
    const answer = test.json() as { error?: string };
    assert.match(String(answer.error), /ECONNREFUSED/);
    assert.deepEqual(
      { ...answer, latency_ms: 0, error: 'x' },
      { delivered: false, status: 0, latency_ms: 0, error: 'x' },
    );
    await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${id}`, headers: key.headers });
  });

  it('lists deliveries with their attempts and replays a failed one', async () => {
    const endpoint = await register('/queue');
    receiver.received.length = 0;
    receiver.behave(() => 500);
    const payload = '{"data":{"valid":true},"meta":{"request_id":"r-http"}}';
    await t.container.outbox.record({
      events: [{ accountId: key.accountId, keyId: key.id, type: 'validation.completed', payload }],
    });
    for (let i = 0; i < 4; i += 1) {
      await t.container.webhookWorker.drain();
      clock.advance(60_000);
    }
    const list = await t.app.inject({
      method: 'GET',
      url: `/v1/webhooks/${endpoint.id}/deliveries?limit=10`,
      headers: key.headers,
    });
    assert.equal(list.statusCode, 200);
    const deliveries = (list.json() as { data: Array<Record<string, unknown>> }).data;
    const mine = deliveries.filter((d) => d.event === 'validation.completed');
    assert.equal(mine.length, 1);
    const delivery = mine[0] as {
      id: string;
      status: string;
      next_attempt_at: string | null;
      attempts: Array<{ id: string; attempt: number; status: string; http_status: number; error: string }>;
    };
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.next_attempt_at, null);
    assert.deepEqual(
      delivery.attempts.map((a) => [a.attempt, a.status, a.http_status]),
      [1, 2, 3, 4].map((n) => [n, 'failed', 500]),
    );
    assert.deepEqual(
      delivery.attempts.map((a) => a.id),
      receiver.received.filter((r) => r.path === '/queue').map((r) => r.headers['service-delivery-id']),
    );
    const hooks = (
      await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: key.headers })
    ).json() as {
      data: Array<{
        id: string;
        failing: boolean;
        last_delivery: { status: string; http_status: number } | null;
      }>;
    };
    const view = hooks.data.find((h) => h.id === endpoint.id);
    assert.equal(view?.failing, true);
    assert.deepEqual(
      view?.last_delivery && { s: view.last_delivery.status, h: view.last_delivery.http_status },
      {
        s: 'failed',
        h: 500,
      },
    );

    receiver.behave(() => 200);
    const replay = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`,
      headers: key.headers,
    });
    assert.equal(replay.statusCode, 202);
    assert.equal((replay.json() as { data: { status: string } }).data.status, 'pending');
    const again = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`,
      headers: key.headers,
    });
    assert.equal(again.statusCode, 400, 'a queued delivery is not replayed twice');
    await t.container.webhookWorker.drain();
    const after = (
      await t.app.inject({
        method: 'GET',
        url: `/v1/webhooks/${endpoint.id}/deliveries`,
        headers: key.headers,
      })
    ).json() as { data: Array<{ id: string; status: string; attempts: Array<{ attempt: number }> }> };
    const replayed = after.data.find((d) => d.id === delivery.id);
    assert.equal(replayed?.status, 'delivered');
    assert.equal(replayed?.attempts.at(-1)?.attempt, 5);

    // A disabled endpoint's delivery is not replayed: it would only end as failed, unsent.
    const off = await t.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${endpoint.id}`,
      headers: key.headers,
      payload: { disabled: true },
    });
    assert.equal(off.statusCode, 200, off.body);
    const refused = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`,
      headers: key.headers,
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual(refused.json().error.details, { reason: 'endpoint_disabled' });
    assert.match(refused.json().error.message, /replays included/);
    const still = (
      await t.app.inject({
        method: 'GET',
        url: `/v1/webhooks/${endpoint.id}/deliveries`,
        headers: key.headers,
      })
    ).json() as { data: Array<{ id: string; status: string }> };
    assert.equal(still.data.find((d) => d.id === delivery.id)?.status, 'delivered', 'not queued again');

    const badLimit = await t.app.inject({
      method: 'GET',
      url: `/v1/webhooks/${endpoint.id}/deliveries?limit=1000`,
      headers: key.headers,
    });
    assert.equal(badLimit.statusCode, 400);
  });
});

describe('a disabled endpoint is sent no test event', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let key: TestKey;

  before(async () => {
    t = await buildTestApp({ OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    receiver = await startWebhookReceiver({ port: 19151 });
    key = await t.key('pro', 'live');
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const test = (id: string, headers = key.headers) =>
    t.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers });
  const setDisabled = (id: string, disabled: boolean) =>
    t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${id}`, headers: key.headers, payload: { disabled } });

  it('refuses in the error envelope, naming how to enable it, and sends once it is enabled again', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: key.headers,
      payload: { url: `${receiver.origin}/disabled` },
    });
    assert.equal(created.statusCode, 201, created.body);
    const { id } = created.json() as { id: string };
    assert.equal((await setDisabled(id, true)).statusCode, 200);

    const refused = await test(id);
    assert.equal(refused.statusCode, 400, refused.body);
    const body = refused.json() as {
      error: { code: string; message: string; details?: Record<string, unknown> };
      meta: { request_id: string };
    };
    assert.deepEqual(Object.keys(body).sort(), ['error', 'meta']);
    assert.equal(body.error.code, 'invalid_format');
    assert.deepEqual(body.error.details, { reason: 'endpoint_disabled' });
    assert.match(body.error.message, /disabled/);
    assert.ok(body.error.message.includes(`PATCH /v1/webhooks/${id}`), body.error.message);
    assert.ok(body.error.message.includes('{"disabled": false}'), body.error.message);
    assert.equal(body.meta.request_id, refused.headers['service-request-id']);
    assert.equal(receiver.received.length, 0, 'nothing was sent');

    // Another key still gets the 404 of an endpoint that is not its own, whatever its state.
    const other = await t.key('pro', 'live');
    const foreign = await test(id, other.headers);
    assert.equal(foreign.statusCode, 404);
    assert.equal(errorCode(foreign), 'not_found');

    assert.equal((await setDisabled(id, false)).statusCode, 200);
    const sent = await test(id);
    assert.equal(sent.statusCode, 200, sent.body);
    assert.equal((sent.json() as { delivered: boolean }).delivered, true);
    assert.equal(receiver.received.length, 1);
    assert.equal(receiver.received[0]?.headers['service-event'], 'test');
  });

  it('the OpenAPI description of the test route says so', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { description: string }>>;
    };
    const description = doc.paths['/v1/webhooks/{id}/test']?.post?.description ?? '';
    assert.match(description, /A disabled endpoint receives no events/);
    assert.match(description, /`endpoint_disabled`/);
  });
});
