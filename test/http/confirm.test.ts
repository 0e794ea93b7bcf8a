import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isUuid } from '../../src/lib/ids.js';
import {
  createEvatrClient,
  EVATR_STATUS_CODES,
  type EvatrClient,
  type EvatrRequest,
} from '../../src/registries/evatr.js';
import { createEvatrSimulator, type EvatrSimulator } from '../../src/simulators/evatr.js';
import { buildTestApp, isUuidV7, type TestApp, type TestKey } from '../helpers/app.js';
import { assertErrorBody } from '../helpers/error-body.js';
import {
  type RunningServer,
  refusedUrl,
  startHangingServer,
  startSimulator,
} from '../integration/evatr/helpers.js';

/** A requester with a valid German check digit. */
const REQUESTER = 'DE136695976';
const MUSTERHAUS = {
  name: 'Musterhaus GmbH & Co KG',
  street: 'Musterstrasse 22',
  postcode: '12345',
  town: 'musterort',
};

interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
  meta: { request_id: string };
}

/**
 * Every outcome of `POST /v1/confirm` for a live Business key, through the real HTTP stack, with the
 * container's eVatR client talking HTTP to a local eVatR simulator.
 */
describe('POST /v1/confirm against the eVatR simulator', () => {
  let t: TestApp;
  let sim: EvatrSimulator;
  let server: RunningServer;
  let hanging: RunningServer;
  let real: EvatrClient;
  /** The client the container uses; tests switch it to reach network failures. */
  let current: EvatrClient;
  let live: TestKey;

  before(async () => {
    sim = createEvatrSimulator();
    server = await startSimulator(sim);
    hanging = await startHangingServer();
    real = createEvatrClient({ baseUrl: `${server.url}/evatr/app`, timeoutMs: 5_000 });
    current = real;
    const switching: EvatrClient = { confirm: (request: EvatrRequest) => current.confirm(request) };
    t = await buildTestApp({ OPENVAT_CONFIRM_BURST: '1000' }, { evatr: switching });
    live = await t.key('business', 'live', { defaultRequesterVat: REQUESTER });
  });
  after(async () => {
    await t.close();
    await server.close();
    await hanging.close();
  });

  function abfrageCalls(): number {
    return sim.stats().abfrage as number;
  }

  async function confirm(payload: unknown, key: TestKey = live, headers: Record<string, string> = {}) {
    return t.app.inject({
      method: 'POST',
      url: '/v1/confirm',
      headers: { ...key.headers, ...headers },
      payload: payload as Record<string, unknown>,
    });
  }

  it('confirms the official test pair with every field A, stores it and audits it', async () => {
    const res = await confirm({
      vat_number: 'atu 123.456-78',
      company: MUSTERHAUS,
      requester_vat_number: 'DE123456789',
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.data.matches, { name: 'A', street: 'A', postcode: 'A', town: 'A' });
    assert.equal(body.data.valid, true);
    assert.equal(body.data.qualified, true);
    assert.equal(body.data.vat_number, 'ATU12345678');
    assert.equal(body.data.requester_vat_number, 'DE123456789');
    assert.deepEqual(body.data.company, { name: null, street: null, postcode: null, town: null });
    assert.equal(body.data.valid_from, null);
    assert.equal(body.data.valid_to, null);
    assert.ok(isUuid(body.data.confirmation_id));
    assert.match(body.data.confirmed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(body.meta.source, 'taxauth');
    assert.equal(body.meta.source_status, 'live');
    assert.equal(body.meta.taxauth_status_code, 'taxauth-0000');
    assert.match(body.meta.taxauth_id, /^[0-9a-f]{16}$/);
    assert.ok(Number.isInteger(body.meta.latency_ms));
    assert.ok(isUuidV7(body.meta.request_id));

    const audit = await t.app.inject({
      method: 'GET',
      url: `/v1/audits/${body.meta.request_id}`,
      headers: live.headers,
    });
    assert.equal(audit.statusCode, 200);
    assert.equal(audit.json().data.endpoint, 'confirm');
    assert.deepEqual(audit.json().data.response, body);

    const stored = await t.app.inject({
      method: 'GET',
      url: `/v1/confirmations/${body.data.confirmation_id}`,
      headers: live.headers,
    });
    assert.equal(stored.statusCode, 200, stored.body);
    const record = stored.json().data;
    assert.equal(record.confirmation_id, body.data.confirmation_id);
    assert.equal(record.request_id, body.meta.request_id);
    assert.equal(record.mode, 'live');
    assert.deepEqual(record.response, body);
    assert.ok(
      stored.body.includes(`"response":${res.body}`),
      'the stored response is spliced in byte for byte',
    );
    assert.deepEqual(record.request.company, MUSTERHAUS);
    assert.equal(record.taxauth.status_code, 'taxauth-0000');
    assert.equal(record.taxauth.http_status, 200);
    assert.equal(record.taxauth.url, `${server.url}/evatr/app/v1/abfrage`);
    assert.deepEqual(JSON.parse(record.taxauth.request), {
      anfragendeUstid: 'DE123456789',
      angefragteUstid: 'ATU12345678',
      firmenname: MUSTERHAUS.name,
      ort: MUSTERHAUS.town,
      plz: MUSTERHAUS.postcode,
      strasse: MUSTERHAUS.street,
    });
    const upstream = JSON.parse(record.taxauth.response);
    assert.equal(upstream.status, 'evatr-0000');
    assert.equal(upstream.id, body.meta.taxauth_id);
    assert.equal(record.evidence.algorithm, 'sha256');
    assert.match(record.evidence.hash, /^[0-9a-f]{64}$/);
    assert.equal(
      new Date(record.retain_until).getUTCFullYear() - new Date(record.created_at).getUTCFullYear(),
      10,
    );
  });

  it('reports a field that does not match as B (valid, not qualified)', async () => {
    const res = await confirm({
      vat_number: 'ATU12345678',
      company: { ...MUSTERHAUS, street: 'Andere Gasse 1' },
      requester_vat_number: 'DE123456789',
    });
    assert.equal(res.statusCode, 200);
    const { data } = res.json();
    assert.deepEqual(data.matches, { name: 'A', street: 'B', postcode: 'A', town: 'A' });
    assert.equal(data.valid, true);
    assert.equal(data.qualified, false);
  });

  it('reports fields the member state does not provide as D, and fields not supplied as C', async () => {
    const res = await confirm({
      vat_number: 'ESB12345674',
      company: { name: 'Ejemplo Sociedad Limitada', street: 'Calle Mayor 1', town: 'Madrid' },
    });
    assert.equal(res.statusCode, 200);
    const { data } = res.json();
    assert.deepEqual(data.matches, { name: 'A', street: 'D', postcode: 'C', town: 'A' });
    assert.equal(data.qualified, false);
    assert.equal(data.requester_vat_number, REQUESTER, "the key's default requester is used");
  });

  /** DESIGN's mapping, written out independently of the implementation. */
  const EXPECTED: Record<string, { status: number; code?: string; valid?: boolean; qualified?: boolean }> = {
    'evatr-0000': { status: 200, valid: true },
    'evatr-0001': { status: 503, code: 'taxauth_server_error' },
    'evatr-0002': { status: 400, code: 'taxauth_rejected' },
    'evatr-0003': { status: 200, valid: true, qualified: false },
    'evatr-0004': { status: 422, code: 'invalid_requester_vat' },
    'evatr-0005': { status: 400, code: 'taxauth_rejected' },
    'evatr-0006': { status: 422, code: 'invalid_requester_vat' },
    'evatr-0007': { status: 400, code: 'taxauth_rejected' },
    'evatr-0008': { status: 429, code: 'taxauth_session_limit' },
    'evatr-0011': { status: 503, code: 'taxauth_unavailable' },
    'evatr-0012': { status: 400, code: 'taxauth_rejected' },
    'evatr-0013': { status: 503, code: 'taxauth_unavailable' },
    'evatr-1001': { status: 503, code: 'taxauth_server_error' },
    'evatr-1002': { status: 503, code: 'taxauth_server_error' },
    'evatr-1003': { status: 503, code: 'taxauth_server_error' },
    'evatr-1004': { status: 503, code: 'taxauth_server_error' },
    'evatr-2001': { status: 200, valid: false, qualified: false },
    'evatr-2002': { status: 200, valid: false, qualified: false },
    'evatr-2003': { status: 400, code: 'taxauth_rejected' },
    'evatr-2004': { status: 503, code: 'taxauth_server_error' },
    'evatr-2005': { status: 422, code: 'invalid_requester_vat' },
    'evatr-2006': { status: 200, valid: false, qualified: false },
    'evatr-2007': { status: 503, code: 'taxauth_server_error' },
    'evatr-2008': { status: 200, valid: true, qualified: false },
    'evatr-2011': { status: 503, code: 'taxauth_server_error' },
    'evatr-3011': { status: 503, code: 'taxauth_server_error' },
  };

  it('covers the whole official status list', () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), [...EVATR_STATUS_CODES].sort());
  });

  for (const [upstream, expected] of Object.entries(EXPECTED)) {
    const digits = upstream.slice('evatr-'.length);
    it(`${upstream} → ${expected.status}${expected.code ? ` ${expected.code}` : ''}`, async () => {
      const before = abfrageCalls();
      const res = await confirm({
        vat_number: `ATU9999${digits}`,
        company: { name: 'Beispiel GmbH', town: 'Wien' },
      });
      assert.equal(res.statusCode, expected.status, res.body);
      assert.equal(abfrageCalls(), before + 1, 'exactly one upstream call, no retry');
      const taxauth = `taxauth-${digits}`;
      if (expected.status === 200) {
        const body = res.json();
        assert.equal(body.meta.taxauth_status_code, taxauth);
        assert.equal(body.data.valid, expected.valid);
        if (expected.qualified !== undefined) assert.equal(body.data.qualified, expected.qualified);
        if (upstream === 'evatr-2002') {
          assert.ok(body.data.valid_from > new Date().toISOString().slice(0, 10), 'valid_from in the future');
          assert.equal(body.data.valid_to, null);
        }
        if (upstream === 'evatr-2006') {
          assert.ok(body.data.valid_to < new Date().toISOString().slice(0, 10), 'valid_to in the past');
          assert.ok(body.data.valid_from < body.data.valid_to);
        }
        const stored = await t.app.inject({
          method: 'GET',
          url: `/v1/confirmations/${body.data.confirmation_id}`,
          headers: live.headers,
        });
        assert.equal(stored.statusCode, 200);
        assert.equal(stored.json().data.taxauth.status_code, taxauth);
      } else {
        const body = res.json() as ErrorBody;
        assert.equal(body.error.code, expected.code);
        assert.equal(body.error.details?.taxauth_status_code, taxauth);
        assert.ok(body.error.message.includes(taxauth), body.error.message);
        if (expected.status === 429 || expected.status === 503) {
          assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/);
        }
      }
    });
  }

  it("the authority's session limit → 429 with Retry-After", async () => {
    sim.control({ qualifiedSessionLimit: 0 });
    try {
      const res = await confirm({
        vat_number: 'FR40303265045',
        company: { name: 'Exemple SA', town: 'Paris' },
      });
      assert.equal(res.statusCode, 429);
      assert.equal((res.json() as ErrorBody).error.details?.taxauth_status_code, 'taxauth-0008');
      assert.ok(Number(res.headers['retry-after']) > 0);
    } finally {
      sim.control({ qualifiedSessionLimit: null, resetSessions: true });
    }
  });

  it('maintenance (HTML 503 page) → 503 taxauth_server_error with Retry-After', async () => {
    sim.control({ maintenance: true });
    try {
      const res = await confirm({ vat_number: 'ATU12345678', company: { name: 'X', town: 'Y' } });
      assert.equal(res.statusCode, 503);
      assert.equal((res.json() as ErrorBody).error.code, 'taxauth_server_error');
      assert.ok(Number(res.headers['retry-after']) > 0);
    } finally {
      sim.control({ maintenance: false });
    }
  });

  it('network failure → 502 taxauth_unavailable, nothing stored', async () => {
    current = createEvatrClient({ baseUrl: `${await refusedUrl()}/evatr/app`, timeoutMs: 5_000 });
    try {
      const res = await confirm({ vat_number: 'ATU12345678', company: { name: 'X', town: 'Y' } });
      assert.equal(res.statusCode, 502);
      assert.equal((res.json() as ErrorBody).error.code, 'taxauth_unavailable');
    } finally {
      current = real;
    }
  });

  it('timeout → 502 taxauth_unavailable', async () => {
    current = createEvatrClient({ baseUrl: `${hanging.url}/evatr/app`, timeoutMs: 200 });
    try {
      const res = await confirm({ vat_number: 'ATU12345678', company: { name: 'X', town: 'Y' } });
      assert.equal(res.statusCode, 502);
      assert.equal((res.json() as ErrorBody).error.code, 'taxauth_unavailable');
    } finally {
      current = real;
    }
  });

  describe('Idempotency-Key', () => {
    const body = { vat_number: 'ATU12345678', company: MUSTERHAUS, requester_vat_number: 'DE123456789' };

    it('two simultaneous requests with one key: one 200 and one 409, exactly one upstream call', async () => {
      const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a01';
      sim.control({ latencyMs: 150 });
      const before = abfrageCalls();
      let results: Awaited<ReturnType<typeof confirm>>[];
      try {
        results = await Promise.all([
          confirm(body, live, { 'idempotency-key': key }),
          confirm(body, live, { 'idempotency-key': key }),
        ]);
      } finally {
        sim.control({ latencyMs: 0 });
      }
      const statuses = results.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [200, 409]);
      const conflict = results.find((r) => r.statusCode === 409)!;
      assert.equal((conflict.json() as ErrorBody).error.code, 'idempotency_conflict');
      assert.equal(abfrageCalls(), before + 1);

      // After completion, a retry replays the stored bytes without calling the authority again.
      const first = results.find((r) => r.statusCode === 200)!;
      const replay = await confirm(body, live, { 'idempotency-key': key });
      assert.equal(replay.statusCode, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body, 'byte-identical body');
      assert.equal(replay.json().data.confirmation_id, first.json().data.confirmation_id);
      assert.equal(abfrageCalls(), before + 1);
      assert.equal(first.headers['idempotent-replayed'], undefined);
    });

    it('is shared by the keys of one account, and the body may differ only in key order', async () => {
      const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a02';
      const other = await t.key('business', 'live', { accountId: live.accountId });
      const first = await confirm(body, live, { 'idempotency-key': key });
      assert.equal(first.statusCode, 200);
      const reordered = {
        requester_vat_number: body.requester_vat_number,
        company: {
          town: MUSTERHAUS.town,
          postcode: MUSTERHAUS.postcode,
          street: MUSTERHAUS.street,
          name: MUSTERHAUS.name,
        },
        vat_number: body.vat_number,
      };
      const replay = await confirm(reordered, other, { 'idempotency-key': key.toUpperCase() });
      assert.equal(replay.statusCode, 200);
      assert.equal(replay.body, first.body);
    });

    it('the same key with another body → 422 idempotency_conflict', async () => {
      const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a03';
      assert.equal((await confirm(body, live, { 'idempotency-key': key })).statusCode, 200);
      const before = abfrageCalls();
      const res = await confirm({ ...body, company: { ...MUSTERHAUS, name: 'Other' } }, live, {
        'idempotency-key': key,
      });
      assert.equal(res.statusCode, 422);
      assert.equal((res.json() as ErrorBody).error.code, 'idempotency_conflict');
      assert.equal(abfrageCalls(), before);
    });

    it("the same key and body from the account's other mode → 422 that says so", async () => {
      const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a07';
      const testKey = await t.key('business', 'test', { accountId: live.accountId });
      assert.equal((await confirm(body, live, { 'idempotency-key': key })).statusCode, 200);
      const res = await confirm(body, testKey, { 'idempotency-key': key });
      assert.equal(res.statusCode, 422);
      const error = (res.json() as ErrorBody).error;
      assert.equal(error.code, 'idempotency_conflict');
      assert.match(error.message, /already used for this request by a live key of this account/);
      const changed = await confirm({ ...body, company: { ...MUSTERHAUS, name: 'Other' } }, testKey, {
        'idempotency-key': key,
      });
      assert.match((changed.json() as ErrorBody).error.message, /with a different request body/);
    });

    it('another account may use the same key value independently', async () => {
      const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a04';
      const stranger = await t.key('business', 'live', { defaultRequesterVat: REQUESTER });
      const a = await confirm(body, live, { 'idempotency-key': key });
      const b = await confirm(body, stranger, { 'idempotency-key': key });
      assert.equal(a.statusCode, 200);
      assert.equal(b.statusCode, 200);
      assert.notEqual(a.json().data.confirmation_id, b.json().data.confirmation_id);
    });

    it('an error answer frees the key, so a retry asks the authority again', async () => {
      const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a05';
      sim.control({ maintenance: true });
      const down = await confirm(body, live, { 'idempotency-key': key });
      sim.control({ maintenance: false });
      assert.equal(down.statusCode, 503);
      const before = abfrageCalls();
      const retry = await confirm(body, live, { 'idempotency-key': key });
      assert.equal(retry.statusCode, 200);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.equal(abfrageCalls(), before + 1);
    });

    it('a key that is not a UUID → 400', async () => {
      const res = await confirm(body, live, { 'idempotency-key': 'retry-1' });
      assert.equal(res.statusCode, 400);
      assert.equal((res.json() as ErrorBody).error.code, 'invalid_format');
      assert.match((res.json() as ErrorBody).error.message, /UUID/);
    });
  });

  describe('access', () => {
    it('402 plan_required for a key without the Business plan', async () => {
      const pro = await t.key('pro', 'live', { defaultRequesterVat: REQUESTER });
      const before = abfrageCalls();
      const res = await confirm({ vat_number: 'ATU12345678', company: { name: 'X' } }, pro);
      assert.equal(res.statusCode, 402);
      assert.equal((res.json() as ErrorBody).error.code, 'plan_required');
      const get = await t.app.inject({
        method: 'GET',
        url: '/v1/confirmations/0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a05',
        headers: pro.headers,
      });
      assert.equal(get.statusCode, 402);
      assert.equal(abfrageCalls(), before);
    });

    it('401 without a key', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        payload: { vat_number: 'ATU12345678' },
      });
      assert.equal(res.statusCode, 401);
    });

    const NO_CONFIRMATION = 'No confirmation with this id for this account.';
    it("a confirmation is visible to every key of its account and mode, 404 to other accounts' keys and to test keys", async () => {
      const res = await confirm({ vat_number: 'ATU12345678', company: { name: 'X', town: 'Y' } });
      const id = res.json().data.confirmation_id as string;
      const sibling = await t.key('business', 'live', { accountId: live.accountId });
      const own = await t.app.inject({
        method: 'GET',
        url: `/v1/confirmations/${id}`,
        headers: sibling.headers,
      });
      assert.equal(own.statusCode, 200);
      for (const stranger of [
        await t.key('business', 'live'),
        await t.key('business', 'test', { accountId: live.accountId }),
      ]) {
        const other = await t.app.inject({
          method: 'GET',
          url: `/v1/confirmations/${id}`,
          headers: stranger.headers,
        });
        assertErrorBody(other, 404, { code: 'not_found', message: NO_CONFIRMATION });
      }
      for (const missing of ['0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a99', 'not-a-uuid']) {
        const r = await t.app.inject({
          method: 'GET',
          url: `/v1/confirmations/${missing}`,
          headers: live.headers,
        });
        assertErrorBody(r, 404, { code: 'not_found', message: NO_CONFIRMATION }, missing);
      }
    });
  });

  describe('bad requests never reach the authority', () => {
    const cases: { name: string; payload: unknown; code: string; reason?: string; key?: 'noDefault' }[] = [
      {
        name: 'missing company.name',
        payload: { vat_number: 'ATU12345678', company: { town: 'Wien' } },
        code: 'invalid_format',
      },
      { name: 'missing company', payload: { vat_number: 'ATU12345678' }, code: 'invalid_format' },
      {
        name: 'unknown field',
        payload: { vat_number: 'ATU12345678', company: { name: 'X' }, country: 'AT' },
        code: 'invalid_format',
      },
      {
        name: 'unknown company field',
        payload: { vat_number: 'ATU12345678', company: { name: 'X', city: 'Wien' } },
        code: 'invalid_format',
      },
      {
        name: 'vat_number shorter than 3',
        payload: { vat_number: 'AT', company: { name: 'X' } },
        code: 'invalid_format',
      },
      {
        name: 'a German target',
        payload: { vat_number: 'DE 136 695 976', company: { name: 'X' } },
        code: 'invalid_format',
      },
      {
        name: 'a requester with a bad check digit',
        payload: { vat_number: 'ATU12345678', company: { name: 'X' }, requester_vat_number: 'DE136695978' },
        code: 'invalid_requester_vat',
        reason: 'checksum',
      },
      {
        name: 'a requester that is not German',
        payload: { vat_number: 'ATU12345678', company: { name: 'X' }, requester_vat_number: 'ATU12345678' },
        code: 'invalid_requester_vat',
        reason: 'country',
      },
      {
        name: 'no requester at all',
        payload: { vat_number: 'ATU12345678', company: { name: 'X' } },
        code: 'invalid_requester_vat',
        key: 'noDefault',
      },
    ];
    for (const c of cases) {
      it(`${c.name} → 400 ${c.code}`, async () => {
        const key = c.key === 'noDefault' ? await t.key('business', 'live') : live;
        const before = abfrageCalls();
        const res = await confirm(c.payload, key);
        assert.equal(res.statusCode, 400, res.body);
        const body = res.json() as ErrorBody;
        assert.equal(body.error.code, c.code);
        if (c.reason) assert.equal(body.error.details?.reason, c.reason);
        if (c.key === 'noDefault') assert.match(body.error.message, /default-requester-vat/);
        assert.equal(abfrageCalls(), before);
      });
    }
  });
});
