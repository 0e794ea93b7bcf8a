import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { assertErrorBody } from '../helpers/error-body.js';

type Json = Record<string, unknown>;

describe('monitors API (test keys)', () => {
  let t: TestApp;
  const clock = createManualClock('2026-11-23T10:00:00.000Z');

  before(async () => {
    t = await buildTestApp({ OPENVAT_MONITORS_PRO: '5', OPENVAT_STATUS_POLL_MS: '0' }, { clock });
    await t.key('pro', 'test');
  });
  after(() => t.close());

  const create = (key: TestKey, payload: Json) =>
    t.app.inject({ method: 'POST', url: '/v1/monitors', headers: key.headers, payload });
  const checkNow = (key: TestKey, id: string) =>
    t.app.inject({ method: 'POST', url: `/v1/monitors/${id}/check`, headers: key.headers });
  const events = (keyId: string, type: string) =>
    t.container.db.kysely
      .selectFrom('events')
      .selectAll()
      .where('key_id', '=', keyId)
      .where('type', '=', type)
      .execute();

  it('needs a plan with monitoring', async () => {
    const starter = await t.key('starter', 'test');
    const res = await create(starter, { vat_number: 'DE100000008', interval: 'daily' });
    assert.equal(res.statusCode, 402);
    assert.equal(res.json().error.code, 'plan_required');
    assert.deepEqual(res.json().error.details.required_plans, ['pro', 'business']);
  });

  it('creates a monitor with its first check, and returns the existing one for the same number', async () => {
    const key = await t.key('business', 'test');
    const res = await create(key, {
      vat_number: 'de 100 000 008',
      interval: 'weekly',
      reference: 'CUST-1',
      metadata: { customer_id: 42 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.monitor.vat_number, 'DE100000008');
    assert.equal(data.monitor.country_code, 'DE');
    assert.equal(data.monitor.status, 'valid');
    assert.equal(data.monitor.interval, 'weekly');
    assert.equal(data.monitor.reference, 'CUST-1');
    assert.deepEqual(data.monitor.metadata, { customer_id: 42 });
    assert.deepEqual(data.monitor.company, {
      name: 'Testfirma Muster GmbH',
      address: 'Teststraße 1\n10115 Berlin',
    });
    assert.equal(data.check.trigger, 'created');
    assert.equal(data.check.outcome, 'valid');
    assert.deepEqual(data.changes, []);
    assert.ok(
      Date.parse(data.monitor.next_check_at) > clock.millis() + 3.5 * 86_400_000,
      'next check half an interval on at least',
    );

    const again = await create(key, { vat_number: 'DE100000008', interval: 'daily' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.monitor.id, data.monitor.id);
    assert.equal(again.json().data.monitor.interval, 'weekly', 'the existing monitor is returned as it is');
    assert.equal(again.json().data.check.id, data.check.id);
  });

  it('refuses malformed numbers with the errors of validate, and bad bodies', async () => {
    const key = await t.key('pro', 'test');
    const bad = await create(key, { vat_number: 'DE12345678', interval: 'daily' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'invalid_format');
    assert.equal(bad.json().error.details.reason, 'length');
    const validate = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE12345678',
      headers: key.headers,
    });
    assert.equal(bad.json().error.message, validate.json().error.message);
    const country = await create(key, { vat_number: 'US123456789', interval: 'daily' });
    assert.equal(country.statusCode, 400);
    assert.match(country.json().error.code, /invalid_format|country_unsupported/);
    const interval = await create(key, { vat_number: 'DE100000008', interval: 'hourly' });
    assert.equal(interval.statusCode, 400);
    assert.equal(interval.json().error.code, 'invalid_format');
    const metadata = await create(key, {
      vat_number: 'DE100000008',
      interval: 'daily',
      metadata: { x: 'y'.repeat(5000) },
    });
    assert.equal(metadata.statusCode, 400);
    assert.match(metadata.json().error.message, /4,096/);
    const list = await t.app.inject({ method: 'GET', url: '/v1/monitors', headers: key.headers });
    assert.deepEqual(list.json().data, [], 'nothing stored by refused requests');
  });

  it('caps the monitors of a key by plan with a clear 403', async () => {
    const key = await t.key('pro', 'test');
    const numbers = ['DE100000008', 'DE200000005', 'DE300000002', 'DE700000001', 'DE910000000'];
    for (const vat of numbers)
      assert.equal((await create(key, { vat_number: vat, interval: 'daily' })).statusCode, 201);
    const over = await create(key, { vat_number: 'DE920000003', interval: 'daily' });
    assert.equal(over.statusCode, 403);
    assert.equal(over.json().error.code, 'monitor_limit_reached');
    assert.equal(over.json().error.details.max, 5);
    assert.equal(
      (await create(key, { vat_number: 'DE100000008', interval: 'daily' })).statusCode,
      200,
      'an existing number still answers',
    );
  });

  it('bulk: more than 10,000 rows is 400 batch_too_large naming the limit, as for batches', async () => {
    const key = await t.key('pro', 'test');
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/monitors/bulk',
      headers: key.headers,
      payload: { monitors: Array.from({ length: 10_001 }, () => ({ vat_number: 'DE100000008' })) },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error.code, 'batch_too_large');
    assert.match(res.json().error.message, /at most 10,000 numbers \(got 10,001\)/);
    assert.deepEqual(res.json().error.details, { max: 10_000, got: 10_001 });
  });

  it('bulk: creates the good rows, lists the bad ones with reasons, marks duplicates and rows over the cap', async () => {
    const key = await t.key('pro', 'test');
    await create(key, { vat_number: 'DE100000008', interval: 'daily' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/monitors/bulk',
      headers: key.headers,
      payload: {
        interval: 'monthly',
        monitors: [
          { vat_number: 'DE200000005', reference: 'A' },
          { vat_number: 'DE1' },
          { vat_number: 'DE100000008' },
          { vat_number: 'de200000005' },
          { vat_number: 'DE300000002', interval: 'daily' },
          { vat_number: 'DE700000001' },
          { vat_number: 'DE910000000' },
          { vat_number: 'DE920000003' },
        ],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { summary, results } = res.json().data;
    assert.deepEqual(summary, { total: 8, created: 4, existing: 2, failed: 2 });
    assert.equal(results[0].ok, true);
    assert.equal(results[0].created, true);
    assert.equal(results[1].ok, false);
    assert.equal(results[1].error.code, 'invalid_format');
    assert.equal(results[2].created, false);
    assert.equal(results[3].id, results[0].id);
    assert.equal(results[3].created, false);
    assert.equal(results[7].ok, false);
    assert.equal(results[7].error.code, 'monitor_limit_reached');

    const list = await t.app.inject({ method: 'GET', url: '/v1/monitors?limit=2', headers: key.headers });
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data.length, 2);
    const next = list.json().meta.next_cursor;
    assert.ok(next);
    const rest = await t.app.inject({
      method: 'GET',
      url: `/v1/monitors?limit=10&cursor=${next}`,
      headers: key.headers,
    });
    assert.equal(rest.json().data.length, 3);
    assert.equal(rest.json().meta.next_cursor, null);
    const all = [...list.json().data, ...rest.json().data];
    assert.equal(new Set(all.map((m: { id: string; vat_number: string }) => m.id)).size, 5);
    const daily = all.find((m: { id: string; vat_number: string }) => m.vat_number === 'DE300000002');
    assert.equal(daily.interval, 'daily');
    assert.equal(
      all.find((m: { id: string; vat_number: string }) => m.vat_number === 'DE200000005').interval,
      'monthly',
    );
    assert.equal(
      all.find((m: { id: string; vat_number: string }) => m.vat_number === 'DE200000005').status,
      'unknown',
      'checked later',
    );

    // The scheduler checks the new monitors progressively.
    assert.equal(await t.container.monitorScheduler.drain(), 4);
    const checked = await t.app.inject({
      method: 'GET',
      url: '/v1/monitors?status=invalid',
      headers: key.headers,
    });
    assert.deepEqual(
      checked.json().data.map((m: { id: string; vat_number: string }) => m.vat_number),
      ['DE300000002'],
    );
  });

  it('test mode: magic numbers change on their second check, with history, webhook event and audit record', async () => {
    const key = await t.key('pro', 'test');
    const cases = [
      { vat: 'DE910000000', type: 'became_invalid', before: 'valid', after: 'invalid', status: 'invalid' },
      { vat: 'DE920000003', type: 'became_valid', before: 'invalid', after: 'valid', status: 'valid' },
      {
        vat: 'DE930000007',
        type: 'name_changed',
        before: 'Testfirma Alt GmbH',
        after: 'Testfirma Neu GmbH',
        status: 'valid',
      },
      {
        vat: 'DE940000004',
        type: 'address_changed',
        before: 'Teststraße 1\n10115 Berlin',
        after: 'Testweg 2\n20095 Hamburg',
        status: 'valid',
      },
    ];
    for (const c of cases) {
      const created = await create(key, { vat_number: c.vat, interval: 'daily' });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(created.json().data.changes, []);
      const id = created.json().data.monitor.id;
      const res = await checkNow(key, id);
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.equal(data.check.trigger, 'manual');
      assert.equal(data.monitor.status, c.status, c.vat);
      assert.equal(data.changes.length, 1, c.vat);
      assert.equal(data.changes[0].type, c.type);
      assert.equal(data.changes[0].before, c.before);
      assert.equal(data.changes[0].after, c.after);
      assert.equal(data.monitor.last_change_at, clock.now().toISOString());

      const third = await checkNow(key, id);
      assert.deepEqual(third.json().data.changes, [], 'a state seen before is no change');

      const got = await t.app.inject({ method: 'GET', url: `/v1/monitors/${id}`, headers: key.headers });
      assert.equal(got.json().data.checks.length, 3);
      assert.deepEqual(
        got.json().data.checks.map((k: { trigger: string }) => k.trigger),
        ['manual', 'manual', 'created'],
      );
      assert.equal(got.json().data.changes.length, 1);

      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${data.check.request_id}`,
        headers: key.headers,
      });
      assert.equal(audit.statusCode, 200, audit.body);
      assert.equal(audit.json().data.endpoint, 'monitor_check');
      assert.equal(audit.json().data.response.data.vat_number, c.vat);
      assert.equal(audit.json().data.response.data.valid, c.status === 'valid');
    }
    const changed = await events(key.id, 'vat_number.changed');
    assert.equal(changed.length, 4, 'one event per change');
    const payload = JSON.parse(changed[0]?.payload ?? '{}');
    assert.equal(payload.data.changes[0].type, 'became_invalid');
    assert.equal(payload.data.monitor.vat_number, 'DE910000000');
    assert.equal(typeof payload.meta.request_id, 'string');

    const since = await t.app.inject({
      method: 'GET',
      url: `/v1/monitors?changed_since=${encodeURIComponent(clock.now().toISOString())}`,
      headers: key.headers,
    });
    assert.equal(since.json().data.length, 4);

    const recent = await t.app.inject({
      method: 'GET',
      url: '/v1/monitors/changes?limit=3',
      headers: key.headers,
    });
    assert.equal(recent.statusCode, 200, recent.body);
    assert.deepEqual(
      recent.json().data.map((c: { type: string; vat_number: string }) => [c.type, c.vat_number]),
      [
        ['address_changed', 'DE940000004'],
        ['name_changed', 'DE930000007'],
        ['became_valid', 'DE920000003'],
      ],
    );
    const none = await t.app.inject({
      method: 'GET',
      url: '/v1/monitors/changes?since=2030-01-01',
      headers: key.headers,
    });
    assert.deepEqual(none.json().data, []);
    const summary = await t.app.inject({ method: 'GET', url: '/v1/monitors/summary', headers: key.headers });
    assert.deepEqual(summary.json().data, { total: 4, valid: 3, invalid: 1, unknown: 0, stale: 0, max: 5 });
    const later = await t.app.inject({
      method: 'GET',
      url: '/v1/monitors?changed_since=2027-01-01',
      headers: key.headers,
    });
    assert.equal(later.json().data.length, 0);
    const badSince = await t.app.inject({
      method: 'GET',
      url: '/v1/monitors?changed_since=yesterday',
      headers: key.headers,
    });
    assert.equal(badSince.statusCode, 400);
  });

  it('test mode: a registry that goes down is no change; the monitor turns stale and check_failed is sent once', async () => {
    const key = await t.key('pro', 'test');
    const created = await create(key, { vat_number: 'DE950000008', interval: 'daily' });
    const id = created.json().data.monitor.id;
    assert.equal(created.json().data.monitor.status, 'valid');
    for (let i = 0; i < 3; i++) {
      const res = await checkNow(key, id);
      assert.equal(res.statusCode, 200);
      const data = res.json().data;
      assert.equal(data.check.outcome, 'unavailable');
      assert.equal(data.check.request_id, null);
      assert.match(data.check.error, /unavailable/);
      assert.equal(data.monitor.status, 'valid', 'the last known state is kept');
      assert.equal(data.monitor.stale, true);
      assert.deepEqual(data.changes, []);
      assert.ok(Date.parse(data.monitor.next_check_at) > clock.millis(), 'retried later');
    }
    assert.equal((await events(key.id, 'vat_number.changed')).length, 0);
    const failed = await events(key.id, 'vat_number.check_failed');
    assert.equal(failed.length, 1, 'once, not every retry');
    const stale = await t.app.inject({ method: 'GET', url: '/v1/monitors?stale=true', headers: key.headers });
    assert.deepEqual(
      stale.json().data.map((m: { id: string; vat_number: string }) => m.id),
      [id],
    );

    const down = await create(key, { vat_number: 'DE400000000', interval: 'daily' });
    assert.equal(down.statusCode, 201);
    assert.equal(down.json().data.monitor.status, 'unknown');
    assert.equal(down.json().data.check.outcome, 'unavailable');
  });

  it('changes a monitor’s interval, reference and metadata, keeping its history', async () => {
    const key = await t.key('pro', 'test');
    const other = await t.key('pro', 'test');
    const created = await create(key, {
      vat_number: 'DE100000008',
      interval: 'daily',
      reference: 'R-1',
      metadata: { a: 1 },
    });
    const id = created.json().data.monitor.id;
    const patch = (k: TestKey, payload: Json) =>
      t.app.inject({ method: 'PATCH', url: `/v1/monitors/${id}`, headers: k.headers, payload });
    const res = await patch(key, { interval: 'monthly', reference: null, metadata: { crm: 'x-9' } });
    assert.equal(res.statusCode, 200, res.body);
    const monitor = res.json().data;
    assert.equal(monitor.interval, 'monthly');
    assert.equal(monitor.reference, null);
    assert.deepEqual(monitor.metadata, { crm: 'x-9' });
    const next = Date.parse(monitor.next_check_at) - clock.millis();
    assert.ok(next >= 15 * 86_400_000 && next < 45 * 86_400_000, 'on the monthly grid');
    const got = await t.app.inject({ method: 'GET', url: `/v1/monitors/${id}`, headers: key.headers });
    assert.deepEqual(got.json().data.monitor, monitor);
    assert.equal(got.json().data.checks.length, 1, 'the history stays');
    assert.equal((await patch(other, { reference: 'mine' })).statusCode, 404);
    const empty = await patch(key, {});
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json().error.code, 'invalid_format');
    assert.equal((await patch(key, { interval: 'yearly' })).statusCode, 400);
    assert.equal((await patch(key, { status: 'valid' })).statusCode, 400, 'the state is not writable');
  });

  it('delete removes the monitor and its history; other keys get 404 and touch nothing of it', async () => {
    const key = await t.key('pro', 'test');
    const other = await t.key('pro', 'test');
    // Its second check finds a change: the monitor has two checks and one change.
    const id = (await create(key, { vat_number: 'DE930000007', interval: 'daily' })).json().data.monitor.id;
    assert.equal((await checkNow(key, id)).statusCode, 200);
    const history = async () => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/monitors/${id}`, headers: key.headers });
      assert.equal(res.statusCode, 200);
      const data = res.json().data;
      return { checks: data.checks.length, changes: data.changes.length };
    };
    assert.deepEqual(await history(), { checks: 2, changes: 1 });
    for (const req of [
      { method: 'GET' as const, url: `/v1/monitors/${id}` },
      { method: 'PATCH' as const, url: `/v1/monitors/${id}`, payload: { reference: 'theirs' } },
      { method: 'POST' as const, url: `/v1/monitors/${id}/check` },
      { method: 'DELETE' as const, url: `/v1/monitors/${id}` },
    ]) {
      const res = await t.app.inject({ ...req, headers: other.headers });
      const message = `No monitor ${id} for this API key.`;
      assertErrorBody(res, 404, { code: 'not_found', message }, `${req.method} ${req.url}`);
    }
    assert.deepEqual(
      await history(),
      { checks: 2, changes: 1 },
      "another key's delete left the history alone",
    );
    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: `/v1/monitors/${id}`, headers: key.headers })).statusCode,
      204,
    );
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/v1/monitors/${id}`, headers: key.headers })).statusCode,
      404,
    );
    const checks = await t.container.db.kysely
      .selectFrom('monitor_checks')
      .selectAll()
      .where('monitor_id', '=', id)
      .execute();
    assert.equal(checks.length, 0);
    const changes = await t.container.db.kysely
      .selectFrom('monitor_changes')
      .selectAll()
      .where('monitor_id', '=', id)
      .execute();
    assert.equal(changes.length, 0);
    for (const req of [
      { method: 'GET' as const, url: `/v1/monitors/${id}` },
      { method: 'PATCH' as const, url: `/v1/monitors/${id}`, payload: { reference: 'gone' } },
      { method: 'POST' as const, url: `/v1/monitors/${id}/check` },
      { method: 'DELETE' as const, url: `/v1/monitors/${id}` },
      { method: 'GET' as const, url: '/v1/monitors/not-a-uuid' },
      { method: 'PATCH' as const, url: '/v1/monitors/not-a-uuid', payload: { reference: 'x' } },
      { method: 'POST' as const, url: '/v1/monitors/not-a-uuid/check' },
      { method: 'DELETE' as const, url: '/v1/monitors/not-a-uuid' },
    ]) {
      const res = await t.app.inject({ ...req, headers: key.headers });
      const shown = req.url.split('/')[3];
      const message = `No monitor ${shown} for this API key.`;
      assertErrorBody(res, 404, { code: 'not_found', message }, `deleted: ${req.method} ${req.url}`);
    }
  });
});

describe('checking a monitor now counts against the key rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ OPENVAT_RATE_LIMIT_PRO: '3', OPENVAT_STATUS_POLL_MS: '0' });
  });
  after(() => t.close());

  it('answers 429 rate_limited once the minute’s requests are used', async () => {
    const key = await t.key('pro', 'test');
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/monitors',
      headers: key.headers,
      payload: { vat_number: 'DE100000008', interval: 'daily' },
    });
    assert.equal(created.statusCode, 201);
    const id = created.json().data.monitor.id;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await t.app.inject({ method: 'POST', url: `/v1/monitors/${id}/check`, headers: key.headers }))
          .statusCode,
      );
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const checks = await t.container.db.kysely
      .selectFrom('monitor_checks')
      .select('id')
      .where('monitor_id', '=', id)
      .execute();
    assert.equal(checks.length, 4, 'the first check and three of four check-now requests');
  });
});
