import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { germanVatNumberWithCheckDigit } from '../../src/simulators/evatr.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

/** German numbers with a valid check digit that the simulator registers (or not). */
function germanNumbers(count: number, registered: boolean, offset = 0): string[] {
  const out: string[] = [];
  for (let i = 1 + offset; out.length < count; i++) {
    const vat = germanVatNumberWithCheckDigit(String(30_000_000 + i));
    const expected = expectedViesAnswer('DE', vat.slice(2));
    if ('valid' in expected && expected.valid === registered) out.push(vat);
  }
  return out;
}

function viesStats(sim: SimulatorServer) {
  return (
    sim.stats() as {
      vies: {
        total: number;
        calls: Record<string, number>;
        rejections: Record<string, number>;
        maxConcurrency: Record<string, number>;
      };
    }
  ).vies;
}

describe('GET /v1/validate with a live key against the registry simulators', () => {
  let sim: SimulatorServer;
  let t: TestApp;
  let live: TestKey;
  const clock = createManualClock(new Date());

  before(async () => {
    sim = createSimulatorServer({ latencyMs: 20 });
    const { urls } = await sim.listen(0, '127.0.0.1');
    t = await buildTestApp(
      {
        VIES_URL: urls.VIES_URL,
        VIES_SOAP_URL: urls.VIES_SOAP_URL,
        HMRC_URL: urls.HMRC_URL,
        BFS_URL: urls.BFS_URL,
        BRREG_URL: urls.BRREG_URL,
        OPENVAT_REGISTRY_BACKOFF_MS: '5',
        OPENVAT_REGISTRY_DEADLINE_MS: '5000',
        OPENVAT_REGISTRY_TIMEOUT_MS: '2000',
        OPENVAT_BREAKER_THRESHOLD: '3',
        OPENVAT_BREAKER_OPEN_MS: '60000',
        OPENVAT_RATE_LIMIT_PRO: '100000',
      },
      { clock },
    );
    live = await t.key('pro', 'live');
  });
  afterEach(() => {
    sim.control({ reset: true });
    sim.control({ latencyMs: 20 });
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  const validate = (vat: string, query = '') =>
    t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=${vat}${query}`, headers: live.headers });

  it('answers live from VIES, then from the cache, and cache=false goes live again', async () => {
    const [vat] = germanNumbers(1, true);
    const before = viesStats(sim).total;
    const first = (await validate(vat!)).json();
    assert.equal(first.data.valid, true);
    assert.equal(first.meta.source, 'vies');
    assert.equal(first.meta.source_status, 'live');
    assert.equal(first.meta.cached, false);
    assert.equal(first.data.company, null, 'DE answers ---, shown as no company data');
    const second = (await validate(vat!)).json();
    assert.equal(second.meta.source_status, 'cached');
    assert.equal(second.meta.cached, true);
    assert.equal(second.meta.cached_at, first.data.verified_at);
    assert.equal(typeof second.meta.stale_seconds, 'number');
    assert.equal(viesStats(sim).total, before + 1);
    const forced = (await validate(vat!, '&cache=false')).json();
    assert.equal(forced.meta.source_status, 'live');
    assert.equal(viesStats(sim).total, before + 2);
  });

  it('reports an unregistered number as invalid, and company data where the registry discloses it', async () => {
    const [unregistered] = germanNumbers(1, false);
    const res = (await validate(unregistered!)).json();
    assert.equal(res.data.valid, false);
    const fr = (await validate('FR40303265045')).json();
    const expected = expectedViesAnswer('FR', '40303265045');
    assert.ok('valid' in expected);
    assert.equal(fr.data.valid, expected.valid);
    if (expected.valid) assert.equal(fr.data.company.name, expected.name);
  });

  it('a requester call is always live and carries the consultation number', async () => {
    const [vat] = germanNumbers(1, true, 100);
    await validate(vat!);
    const [requester] = germanNumbers(1, true, 200);
    const res = (await validate(vat!, `&requester_vat_number=${requester}`)).json();
    assert.equal(res.meta.source_status, 'live');
    assert.match(res.data.verify_id, /^WAPI/);
  });

  it('coalesces concurrent requests for the same number into one upstream call', async () => {
    sim.control({ latencyMs: 150 });
    const [vat] = germanNumbers(1, true, 300);
    const before = viesStats(sim).total;
    const answers = await Promise.all(Array.from({ length: 10 }, () => validate(vat!, '&cache=false')));
    assert.ok(answers.every((a) => a.statusCode === 200 && a.json().data.valid === true));
    assert.equal(viesStats(sim).total, before + 1);
  });

  it("shares a requester call's consultation number with the same key's concurrent calls only", async () => {
    sim.control({ latencyMs: 150 });
    const [vat] = germanNumbers(1, true, 310);
    const [requester] = germanNumbers(1, true, 320);
    const other = await t.key('pro', 'live');
    const before = viesStats(sim).total;
    const url = `/v1/validate?vat_number=${vat}&requester_vat_number=${requester}`;
    const ask = (key: TestKey) => t.app.inject({ method: 'GET', url, headers: key.headers });
    const [first, again, foreign] = await Promise.all([ask(live), ask(live), ask(other)]);
    for (const res of [first, again, foreign]) assert.equal(res.statusCode, 200, res.body);
    const verifyId = (res: typeof first) => res.json().data.verify_id as string;
    assert.match(verifyId(first), /^WAPI/);
    assert.equal(verifyId(again), verifyId(first), "the key's own concurrent call shares its answer");
    assert.match(verifyId(foreign), /^WAPI/);
    assert.notEqual(verifyId(foreign), verifyId(first), 'another key gets a consultation of its own');
    assert.equal(viesStats(sim).total, before + 2);
  });

  it('keeps each member state under its concurrency limit', async () => {
    sim.control({ latencyMs: 50, concurrencyLimit: { DE: 2 } });
    const numbers = germanNumbers(12, true, 400);
    const answers = await Promise.all(numbers.map((vat) => validate(vat)));
    assert.ok(
      answers.every((a) => a.statusCode === 200),
      answers.map((a) => a.statusCode).join(),
    );
    const stats = viesStats(sim);
    assert.equal(stats.rejections.DE ?? 0, 0, 'the limiter never let a third call through');
    assert.ok((stats.maxConcurrency.DE ?? 0) <= 2);
  });

  it('retries throttling (MS_MAX_CONCURRENT_REQ) and never reports it as invalid', async () => {
    sim.control({ errorRate: { DE: { rate: 0.5, code: 'MS_MAX_CONCURRENT_REQ' } } });
    const numbers = germanNumbers(20, true, 600);
    const answers = await Promise.all(numbers.map((vat) => validate(vat)));
    for (const a of answers) {
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(a.json().data.valid, true);
    }
  });

  // The lowered limit outlives the test (it grows back by one permit per 10 s).
  it('finds the concurrency a member state accepts when it is below the configured one', async () => {
    sim.control({ latencyMs: 50, concurrencyLimit: { DE: 1 } });
    const numbers = germanNumbers(30, true, 1_000);
    const answers = await Promise.all(numbers.map((vat) => validate(vat)));
    for (const a of answers) assert.equal(a.statusCode, 200, a.body);
    const stats = viesStats(sim);
    // Configured for 2 at a time: the first refusal halves the limit to 1 for every later call.
    // Before the limit adapted, each refused call was retried while another was in flight: 30+ refusals.
    assert.ok((stats.rejections.DE ?? 0) <= 2, JSON.stringify(stats.rejections));
    const status = await t.app.inject({ method: 'GET', url: '/v1/status' });
    const rows = status.json().data.registries as Array<{
      registry: string;
      country: string;
      concurrency_limit: number;
    }>;
    assert.equal(rows.find((r) => r.registry === 'vies' && r.country === 'DE')?.concurrency_limit, 1);
    for (const r of rows.filter((r) => r.country !== 'DE')) assert.equal(r.concurrency_limit, 2, r.country);
  });

  it('serves a stored answer as degraded when the registry is down, and 502 without one', async () => {
    const [known, unknown] = germanNumbers(2, true, 800);
    const first = (await validate(known!)).json();
    assert.equal(first.meta.source_status, 'live');
    sim.control({ down: ['DE'] });
    // Within the TTL the cache answers; past the TTL (30 days) the registry is asked and is down.
    clock.advance(31 * 86_400_000);
    const degraded = await validate(known!);
    assert.equal(degraded.statusCode, 200);
    assert.equal(degraded.json().meta.source_status, 'degraded');
    assert.equal(degraded.json().data.valid, true);
    assert.ok(degraded.json().meta.stale_seconds >= 30 * 86_400, degraded.body);
    const missing = await validate(unknown!);
    assert.equal(missing.statusCode, 502);
    assert.equal(missing.json().error.code, 'registry_unavailable');
    assert.ok(Number(missing.headers['retry-after']) > 0);
    // Past the degraded window (7 more days) the stored answer is no longer served.
    clock.advance(8 * 86_400_000);
    const tooOld = await validate(known!);
    assert.equal(tooOld.statusCode, 502);
    clock.set(new Date());
  });

  it('opens the circuit after repeated failures and stops calling the registry', async () => {
    sim.control({ down: ['PL'] });
    const numbers = ['PL5260250274', 'PL7740001454', 'PL5261040828', 'PL1132191233', 'PL5213017228'];
    for (const vat of numbers.slice(0, 3)) assert.equal((await validate(vat)).statusCode, 502);
    const calls = viesStats(sim).calls.PL ?? 0;
    for (const vat of numbers.slice(3)) {
      const res = await validate(vat);
      assert.equal(res.statusCode, 502);
      assert.match(res.json().error.message, /circuit/);
    }
    assert.equal(viesStats(sim).calls.PL ?? 0, calls, 'no further upstream calls while open');
  });

  it('opens the circuit of a member state that check-status reports as unavailable', async () => {
    sim.control({ down: ['AT'] });
    await t.container.liveAnswers.applyStatus({
      checkStatus: async () => ({ AT: { available: false, upstream: 'Unavailable' } }),
    });
    const before = viesStats(sim).calls.AT ?? 0;
    const res = await validate('ATU13585627');
    assert.equal(res.statusCode, 502);
    assert.equal(viesStats(sim).calls.AT ?? 0, before);
  });

  it('an unconfigured registry answers 502 naming the missing setting, never invalid', async () => {
    const res = await validate('GB980780684');
    assert.equal(res.statusCode, 502);
    assert.equal(res.json().error.code, 'registry_unavailable');
    assert.match(res.json().error.message, /HMRC_CLIENT_ID/);
  });

  it('records validation.completed with the exact response for every live call', async () => {
    // A member state whose breaker the outage tests above did not open.
    const res = await validate('BE0428759497');
    assert.equal(res.statusCode, 200, res.body);
    const events = await t.container.db.kysely
      .selectFrom('events')
      .selectAll()
      .where('key_id', '=', live.id)
      .where('type', '=', 'validation.completed')
      .execute();
    const mine = events.find((e) => e.payload === res.body);
    assert.ok(mine, 'an event whose payload is byte-for-byte the response');
    const refused = await validate('DE136695977');
    assert.equal(refused.statusCode, 400);
    const after = await t.container.db.kysely
      .selectFrom('events')
      .select('id')
      .where('key_id', '=', live.id)
      .execute();
    assert.equal(after.length, events.length, 'no event for a refused call');
  });
});
