import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

describe('POST /v1/validate/batch (synchronous) with test keys', () => {
  let t: TestApp;
  let pro: TestKey;
  let business: TestKey;
  const clock = createManualClock('2026-11-22T12:00:00.000Z');

  before(async () => {
    t = await buildTestApp({}, { clock });
    pro = await t.key('pro');
    business = await t.key('business');
  });
  after(() => t.close());

  const batch = (key: TestKey, payload: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: key.headers,
      payload: payload as object,
    });

  it('answers every magic number in input order, each as the single validate would', async () => {
    const input = [
      'DE100000008',
      'DE200000005',
      'DE300000002',
      'DE400000000',
      'DE500000007',
      'DE600000004',
      'DE800000009',
      'ATU13585627',
    ];
    const res = await batch(pro, { vat_numbers: input });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.data.summary, { total: 8, successful: 5, failed: 3 });
    const results = body.data.results;
    assert.equal(results.length, 8);
    assert.equal(results[0].ok, true);
    assert.equal(results[0].data.vat_number, 'DE100000008');
    assert.equal(results[0].data.valid, true);
    assert.ok(results[0].data.company.name);
    assert.equal(results[1].ok, true);
    assert.equal(results[1].data.company, null);
    assert.equal(results[2].ok, true);
    assert.equal(results[2].data.valid, false);
    assert.deepEqual(Object.keys(results[3]), ['ok', 'error']);
    assert.equal(results[3].error.code, 'registry_unavailable');
    assert.equal(typeof results[3].error.message, 'string');
    assert.equal(results[4].ok, true, 'a degraded answer is still an answer');
    assert.equal(results[4].data.valid, true);
    assert.equal(results[5].error.code, 'registry_unavailable');
    // The throttled magic number is "retry later" for one item: the hosted contract's item codes have no rate_limited.
    assert.equal(results[6].error.code, 'registry_unavailable');
    assert.equal(results[7].data.vat_number, 'ATU13585627');
    assert.deepEqual(body.meta.sources, { vies: { live: 4, cached: 0, degraded: 1 } });
    assert.deepEqual(Object.keys(body.meta).sort(), [
      'cached',
      'latency_ms',
      'request_id',
      'source',
      'source_status',
      'sources',
    ]);
    // Rolled up: one live answer makes the batch not cached, one degraded answer makes it degraded.
    assert.equal(body.meta.cached, false);
    assert.equal(body.meta.source, 'vies');
    assert.equal(body.meta.source_status, 'degraded');
  });

  it('each item carries exactly the data the single validate gives', async () => {
    const single = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE100000008',
      headers: pro.headers,
    });
    const res = await batch(pro, { vat_numbers: ['DE100000008'] });
    assert.deepEqual(res.json().data.results[0].data, single.json().data);
  });

  it('looks duplicates up once (after normalisation) and answers every position', async () => {
    const seen: string[] = [];
    const original = t.container.validation.validate;
    t.container.validation.validate = (request, principal, signal) => {
      seen.push(request.vatNumber);
      return original(request, principal, signal);
    };
    try {
      const res = await batch(pro, {
        vat_numbers: ['DE 136 695 976', 'de136695976', 'DE136.695.976', 'FR40303265045'],
      });
      assert.equal(res.statusCode, 200);
      const results = res.json().data.results;
      assert.equal(results.length, 4);
      for (const r of results.slice(0, 3)) assert.equal(r.data.vat_number, 'DE136695976');
      assert.equal(results[3].data.vat_number, 'FR40303265045');
      assert.equal(seen.length, 2, seen.join());
    } finally {
      t.container.validation.validate = original;
    }
  });

  it('malformed items fail alone with the code a single validate would give', async () => {
    const res = await batch(pro, { vat_numbers: ['DE123', 'DE100000008', 'QQ123456789', '', 'DE136695977'] });
    assert.equal(res.statusCode, 200, res.body);
    const { results, summary } = res.json().data;
    assert.deepEqual(summary, { total: 5, successful: 1, failed: 4 });
    assert.equal(results[0].error.code, 'invalid_format');
    assert.equal(results[1].ok, true);
    assert.ok(['invalid_format', 'country_unsupported'].includes(results[2].error.code));
    assert.equal(results[3].error.code, 'invalid_format');
    assert.equal(results[4].error.code, 'invalid_format');
    const single = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE123',
      headers: pro.headers,
    });
    assert.equal(single.json().error.code, results[0].error.code);
    assert.equal(single.json().error.message, results[0].error.message);
  });

  it('101 numbers are 400 batch_too_large naming the limit and async; an empty list is 400', async () => {
    const res = await batch(pro, { vat_numbers: Array.from({ length: 101 }, () => 'DE100000008') });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'batch_too_large');
    assert.match(res.json().error.message, /100/);
    assert.match(res.json().error.message, /"async": true/);
    const empty = await batch(pro, { vat_numbers: [] });
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json().error.code, 'invalid_format');
    const exactly = await batch(pro, { vat_numbers: Array.from({ length: 100 }, () => 'DE100000008') });
    assert.equal(exactly.statusCode, 200);
  });

  it('ignores unknown fields; an over-long item fails alone; refuses non-string items and a malformed requester', async () => {
    const extra = await batch(pro, { vat_numbers: ['DE100000008'], extra: 1 });
    assert.equal(extra.statusCode, 200, extra.body);
    assert.equal(extra.json().data.results[0].ok, true);
    const long = await batch(pro, { vat_numbers: ['D'.repeat(257), 'DE100000008'] });
    assert.equal(long.statusCode, 200, long.body);
    assert.equal(long.json().data.results[0].error.code, 'invalid_format');
    assert.equal(long.json().data.results[1].ok, true);
    assert.deepEqual(long.json().data.summary, { total: 2, successful: 1, failed: 1 });
    for (const payload of [{ vat_numbers: [1] }, { vat_numbers: 'DE100000008' }, {}]) {
      const res = await batch(pro, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().error.code, 'invalid_format');
    }
    const requester = await batch(pro, { vat_numbers: ['DE100000008'], requester_vat_number: 'DE1' });
    assert.equal(requester.statusCode, 400);
    assert.equal(requester.json().error.code, 'invalid_format');
  });

  it('a requester adds a consultation number to each item', async () => {
    const res = await batch(business, { vat_numbers: ['DE100000008'], requester_vat_number: 'DE136695976' });
    assert.match(res.json().data.results[0].data.verify_id, /^TEST/);
  });

  it('needs Pro or Business (402 for Starter and Free) and a key (401)', async () => {
    for (const plan of ['starter', 'free'] as const) {
      const key = await t.key(plan);
      const res = await batch(key, { vat_numbers: ['DE100000008'] });
      assert.equal(res.statusCode, 402);
      assert.equal(res.json().error.code, 'plan_required');
    }
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      payload: { vat_numbers: ['DE100000008'] },
    });
    assert.equal(res.statusCode, 401);
  });

  it('writes an audit record with the response byte for byte; test keys emit no event', async () => {
    const res = await batch(business, { vat_numbers: ['DE100000008', 'DE300000002'] });
    const id = res.json().meta.request_id;
    const audit = await t.app.inject({ method: 'GET', url: `/v1/audits/${id}`, headers: business.headers });
    assert.equal(audit.statusCode, 200);
    const record = audit.json().data;
    assert.equal(record.endpoint, 'validate_batch');
    assert.deepEqual(record.request_body, { vat_numbers: ['DE100000008', 'DE300000002'] });
    assert.equal(record.status_code, 200);
    assert.equal(record.valid, null);
    assert.deepEqual(record.response, res.json());
    const other = await t.app.inject({ method: 'GET', url: `/v1/audits/${id}`, headers: pro.headers });
    assert.equal(other.statusCode, 404);
    const events = await t.container.db.kysely.selectFrom('events').selectAll().execute();
    assert.equal(events.length, 0);
  });
});

describe('POST /v1/validate/batch with "async": true (test keys)', () => {
  let t: TestApp;
  let pro: TestKey;
  let other: TestKey;

  before(async () => {
    t = await buildTestApp();
    pro = await t.key('pro');
    other = await t.key('business');
  });
  after(() => t.close());

  it('queues a job (202), shows progress, and answers the results in input order when done', async () => {
    const input = ['DE100000008', 'DE123', 'DE400000000', 'ATU13585627', 'DE800000009', 'DE 100 000 008'];
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: pro.headers,
      payload: { vat_numbers: input, async: true },
    });
    assert.equal(res.statusCode, 202, res.body);
    const job = res.json().data;
    assert.equal(job.status, 'queued');
    assert.equal(job.total, 6);
    assert.equal(job.done, 1, 'the malformed number is answered at once');
    assert.equal(job.failed, 1);
    assert.equal(job.completed_at, undefined);

    const queued = await t.app.inject({
      method: 'GET',
      url: `/v1/validate/batch/${job.id}`,
      headers: pro.headers,
    });
    assert.equal(queued.statusCode, 200);
    assert.equal(queued.json().data.status, 'queued');
    assert.equal(queued.json().data.results, undefined);

    await t.container.batchWorker.drain();
    const done = await t.app.inject({
      method: 'GET',
      url: `/v1/validate/batch/${job.id}`,
      headers: pro.headers,
    });
    const data = done.json().data;
    assert.equal(data.status, 'completed');
    assert.equal(data.done, 6);
    assert.equal(data.failed, 3);
    assert.deepEqual(data.summary, { total: 6, successful: 3, failed: 3 });
    assert.deepEqual(
      data.results.map((r: { ok: boolean; data?: { vat_number: string }; error?: { code: string } }) =>
        r.ok ? r.data?.vat_number : r.error?.code,
      ),
      [
        'DE100000008',
        'invalid_format',
        'registry_unavailable',
        'ATU13585627',
        'registry_unavailable',
        'DE100000008',
      ],
    );
    assert.ok(data.completed_at >= data.created_at);

    const sync = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: pro.headers,
      payload: { vat_numbers: input },
    });
    assert.deepEqual(
      data.results.map((r: { ok: boolean; error?: { code: string } }) => r.ok || r.error?.code),
      sync.json().data.results.map((r: { ok: boolean; error?: { code: string } }) => r.ok || r.error?.code),
    );

    // The audit record of the creating call holds the full result.
    const audit = await t.app.inject({
      method: 'GET',
      url: `/v1/audits/${res.json().meta.request_id}`,
      headers: pro.headers,
    });
    assert.equal(audit.statusCode, 200);
    assert.equal(audit.json().data.endpoint, 'validate_batch');
    assert.equal(audit.json().data.status_code, 202);
    assert.deepEqual(audit.json().data.response.data.results, data.results);
    assert.equal(audit.json().data.response.meta.request_id, res.json().meta.request_id);
  });

  it('another key, an unknown id and a malformed id are 404', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: pro.headers,
      payload: { vat_numbers: ['DE100000008'], async: true },
    });
    const { id } = res.json().data;
    for (const [key, path] of [
      [other, id],
      [pro, '0190b6a5-0000-7000-8000-000000000000'],
      [pro, 'nope'],
    ] as const) {
      const got = await t.app.inject({
        method: 'GET',
        url: `/v1/validate/batch/${path}`,
        headers: key.headers,
      });
      assert.equal(got.statusCode, 404);
      const { error } = got.json();
      assert.equal(error.code, 'not_found');
      assert.equal(error.message, `No batch job ${path} for this API key.`);
      assert.equal(error.details, undefined);
    }
  });

  it('takes up to 10,000 numbers; 10,001 is 400 batch_too_large', async () => {
    const big = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: pro.headers,
      payload: { vat_numbers: Array.from({ length: 10_001 }, () => 'DE100000008'), async: true },
    });
    assert.equal(big.statusCode, 400);
    assert.equal(big.json().error.code, 'batch_too_large');
    assert.match(big.json().error.message, /10,000/);
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: pro.headers,
      payload: {
        vat_numbers: Array.from({ length: 10_000 }, (_, i) => (i % 2 ? 'DE100000008' : 'DE1')),
        async: true,
      },
    });
    assert.equal(ok.statusCode, 202);
    assert.equal(ok.json().data.total, 10_000);
    assert.equal(ok.json().data.done, 5_000, 'the malformed half is answered at once');
    assert.equal(ok.json().data.failed, 5_000);
  });

  it('a job of only malformed numbers is completed at once', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: pro.headers,
      payload: { vat_numbers: ['x', 'DE1'], async: true },
    });
    assert.equal(res.statusCode, 202);
    assert.equal(res.json().data.status, 'completed');
    assert.deepEqual(res.json().data.summary, { total: 2, successful: 0, failed: 2 });
  });
});
