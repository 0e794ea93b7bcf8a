import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { buildTestApp, isUuidV7, type TestApp, type TestKey } from '../helpers/app.js';

/**
 * The error envelope and the request pipeline, exercised through a JSON route added to the real app
 * and through the real authenticated machinery.
 */
describe('envelope and error handling', () => {
  let t: TestApp;
  let business: TestKey;
  let free: TestKey;
  let writes = 0;
  const logged: Array<Record<string, unknown>> = [];

  before(async () => {
    // Errors go to the service logger; collect what it writes.
    const log = pino({ level: 'error' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    t = await buildTestApp({ OPENVAT_BODY_LIMIT: '2048' }, { log });
    const Body = Type.Object(
      { name: Type.String({ maxLength: 50 }), count: Type.Optional(Type.Integer({ minimum: 0 })) },
      { additionalProperties: false },
    );
    t.app.post('/__echo', { schema: { body: Body } }, async (request) => {
      writes += 1;
      return { data: request.body, meta: { request_id: request.id, latency_ms: 0 } };
    });
    t.app.post('/__nobody', async (request) => ({ body: request.body === undefined ? 'none' : 'some' }));
    // Echoes without counting (the tests below count the handler runs of /__echo).
    t.app.post('/__text', async (request) => ({ data: request.body }));
    t.app.get('/__private', { onRequest: t.container.requireKey('confirm') }, async () => ({ ok: true }));
    t.app.get('/__boom', async () => {
      throw new Error('secret internal detail');
    });
    await t.app.ready();
    business = await t.key('business');
    free = await t.key('free');
  });
  after(() => t.close());

  function assertErrorEnvelope(
    res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
    status: number,
    code: string,
  ) {
    assert.equal(res.statusCode, status);
    const body = res.json() as { error: { code: string; message: string }; meta: { request_id: string } };
    assert.equal(body.error.code, code);
    assert.equal(typeof body.error.message, 'string');
    assert.ok(body.error.message.length > 5);
    assert.ok(isUuidV7(body.meta.request_id));
    assert.equal(res.headers['service-request-id'], body.meta.request_id);
    assert.equal(res.headers['x-request-id'], body.meta.request_id);
    assert.equal(typeof (body.meta as { latency_ms?: unknown }).latency_ms, 'number');
    return body;
  }

  it('unknown route → 404 envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    assertErrorEnvelope(res, 404, 'not_found');
  });

  it('a very long path → 404 envelope with a truncated path in the message', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/${'a'.repeat(20_000)}` });
    const body = assertErrorEnvelope(res, 404, 'not_found');
    assert.ok(body.error.message.length < 300);
  });

  it('malformed JSON → 400 invalid_format', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "x",',
    });
    const body = assertErrorEnvelope(res, 400, 'invalid_format');
    assert.match(body.error.message, /not valid JSON/);
  });

  it('text that cannot be stored as given (NUL, a lone surrogate) → 400 invalid_format, nothing written', async () => {
    const jsonTo = (url: string) => (payload: string) =>
      t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
    const post = jsonTo('/__echo');
    const before = writes;
    for (const [payload, message] of [
      ['{"name":"a\\u0000b"}', /NUL character/],
      ['{"name\\u0000":"a"}', /NUL character/],
      ['{"name":"\\ud800"}', /lone surrogate/],
      ['{"name":"x\\uDFFFy"}', /lone surrogate/],
    ] as const) {
      const body = assertErrorEnvelope(await post(payload), 400, 'invalid_format');
      assert.match(body.error.message, message, payload);
    }
    assert.equal(writes, before, 'no handler ran');
    // An escaped backslash before "u0000" is text, and a surrogate pair is a character: both are fine.
    const echo = jsonTo('/__text');
    const text = await echo('{"name":"a\\\\u0000"}');
    assert.equal(text.statusCode, 200);
    assert.equal(text.json().data.name, 'a\\u0000');
    const pair = await echo('{"name":"\\ud83d\\ude00"}');
    assert.equal(pair.statusCode, 200);
    assert.equal(pair.json().data.name, '😀');
  });

  it('a NUL in a query parameter → 400 invalid_format, nothing answered or recorded', async () => {
    for (const url of [
      '/v1/validate?vat_number=DE10000%000008',
      '/v1/validate?vat_number=DE136308783&requester_vat_number=DE136308783%00',
      '/v1/audits?x=%00',
    ]) {
      const res = await t.app.inject({ method: 'GET', url, headers: business.headers });
      const body = assertErrorEnvelope(res, 400, 'invalid_format');
      assert.match(body.error.message, /NUL character/, url);
      assert.equal(res.headers['service-request-id'], body.meta.request_id);
    }
    // A percent sign followed by zeros elsewhere is text, and the path is not the query.
    const fine = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE136308783&note=100%2500',
      headers: business.headers,
    });
    assert.equal(fine.statusCode, 200, fine.body);
  });

  it('an empty JSON body is no body; a compressed one and a "__proto__" key are refused by name', async () => {
    const empty = await t.app.inject({
      method: 'POST',
      url: '/__nobody',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(empty.json(), { body: 'none' });
    const needsBody = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json' },
    });
    assert.doesNotMatch(
      assertErrorEnvelope(needsBody, 400, 'invalid_format').error.message,
      /not valid JSON/,
    );
    const gzip = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    });
    assert.match(assertErrorEnvelope(gzip, 400, 'invalid_format').error.message, /Content-Encoding "gzip"/);
    const proto = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"__proto__":{"x":1},"name":"x"}',
    });
    assert.match(assertErrorEnvelope(proto, 400, 'invalid_format').error.message, /"__proto__"/);
  });

  it('a value outside a closed list → 400 naming the allowed values', async () => {
    const decide = await t.app.inject({
      method: 'POST',
      url: '/v1/decide',
      headers: business.headers,
      payload: { seller_vat: 'DE136308783', buyer_vat: 'FR40303265045', supply_type: 'GOODS' },
    });
    const literal = assertErrorEnvelope(decide, 400, 'invalid_format');
    assert.match(
      literal.error.message,
      /^Field "supply_type" in the body must be one of "goods", "services"/,
    );
    const validate = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE100000008&cache=maybe',
      headers: business.headers,
    });
    const enumerated = assertErrorEnvelope(validate, 400, 'invalid_format');
    assert.equal(
      enumerated.error.message,
      'Field "cache" in the querystring must be one of "true", "false".',
    );
  });

  it('wrong content type → 400 invalid_format', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    const body = assertErrorEnvelope(res, 400, 'invalid_format');
    assert.match(body.error.message, /^Unsupported Content-Type: send the body as application\/json\.$/);
  });

  it('wrong types, missing and unknown fields → 400 naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ name: 5 }, /name/],
      [{ name: 'x', count: '3' }, /count/],
      [{ name: 'x', count: -1 }, /count/],
      [{}, /Missing required field "name"/],
      [{ name: 'x', extra: true }, /Unknown field "extra"/],
      [{ name: 'x'.repeat(51) }, /name/],
      [[1, 2], /body/],
      ['just a string', /body/],
    ];
    for (const [payload, message] of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/__echo',
        payload: JSON.stringify(payload),
        headers: { 'content-type': 'application/json' },
      });
      const body = assertErrorEnvelope(res, 400, 'invalid_format');
      assert.match(body.error.message, message, JSON.stringify(payload));
    }
  });

  it('empty JSON body → 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json' },
    });
    const body = assertErrorEnvelope(res, 400, 'invalid_format');
    assert.equal(body.error.message, 'The body must be an object.');
  });

  it('non-UTF-8 bytes → 400 invalid_format', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
    });
    const body = assertErrorEnvelope(res, 400, 'invalid_format');
    assert.match(body.error.message, /UTF-8/);
  });

  it('a charset other than UTF-8 → 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json; charset=latin1' },
      payload: '{"name":"x"}',
    });
    assertErrorEnvelope(res, 400, 'invalid_format');
  });

  it('oversize body → 413 payload_too_large', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/__echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(5_000) }),
    });
    const body = assertErrorEnvelope(res, 413, 'payload_too_large');
    assert.equal(body.error.message, 'The request body is larger than allowed.');
  });

  it('bad input changes nothing: the handler never ran', () => {
    assert.equal(writes, 0);
  });

  it('a valid body passes', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/__echo', payload: { name: 'ok', count: 2 } });
    assert.equal(res.statusCode, 200);
    assert.equal(writes, 1);
  });

  it('an unexpected error → 500 internal_error without internals', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/__boom' });
    const body = assertErrorEnvelope(res, 500, 'internal_error');
    assert.ok(!res.body.includes('secret internal detail'));
    assert.ok(!res.body.includes('at '), 'no stack trace');
    const entry = logged.find((e) => e.msg === 'unhandled error');
    assert.ok(entry, 'the error is logged');
    assert.equal(entry.request_id, body.meta.request_id);
    assert.match(JSON.stringify(entry.err), /secret internal detail/);
  });

  describe('authentication and plans', () => {
    it('missing Authorization → 401', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/__private' });
      assertErrorEnvelope(res, 401, 'unauthorized');
    });

    it('malformed, unknown and injection-laden keys → 401', async () => {
      for (const authorization of [
        'Basic abc',
        'Bearer',
        'Bearer ',
        `Bearer ${business.key} extra`,
        `Bearer svc_live_${'A'.repeat(32)}`,
        "Bearer svc_live_' OR 1=1 --",
        `Bearer ${'x'.repeat(10_000)}`,
      ]) {
        const res = await t.app.inject({ method: 'GET', url: '/__private', headers: { authorization } });
        assertErrorEnvelope(res, 401, 'unauthorized');
      }
    });

    it('a plan without the operation → 402 plan_required', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/__private', headers: free.headers });
      const body = assertErrorEnvelope(res, 402, 'plan_required');
      assert.match(body.error.message, /needs the (\w+, )*(\w+ or )?Business plan\.$/);
    });

    it('the right plan passes', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/__private', headers: business.headers });
      assert.equal(res.statusCode, 200);
    });

    it('the scheme name is case-insensitive', async () => {
      for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/__private',
          headers: { authorization: `${scheme} ${business.key}` },
        });
        assert.equal(res.statusCode, 200, scheme);
      }
    });

    it('a revoked key → 401', async () => {
      const revoked = await t.key('business');
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/__private', headers: revoked.headers })).statusCode,
        200,
      );
      await t.container.keys.revokeKey(revoked.id);
      const res = await t.app.inject({ method: 'GET', url: '/__private', headers: revoked.headers });
      assertErrorEnvelope(res, 401, 'unauthorized');
    });
  });
});
