import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

const OPEN_MS = 60_000;

/**
 * For every registry: an outage opens its breaker, calls are then refused without reaching the
 * registry, and once the registry is back the first call after the open period (the half-open
 * trial) answers live again — no restart.
 */
describe('every registry recovers after an outage, without a restart', () => {
  let sim: SimulatorServer;
  let t: TestApp;
  let live: TestKey;
  let business: TestKey;
  const clock = createManualClock(new Date());

  before(async () => {
    sim = createSimulatorServer({ latencyMs: 5 });
    const { urls } = await sim.listen(0, '127.0.0.1');
    t = await buildTestApp(
      {
        ...urls,
        HMRC_CLIENT_ID: 'id',
        HMRC_CLIENT_SECRET: 'secret',
        OPENVAT_REGISTRY_BACKOFF_MS: '5',
        OPENVAT_REGISTRY_DEADLINE_MS: '100',
        OPENVAT_REGISTRY_TIMEOUT_MS: '2000',
        OPENVAT_BREAKER_THRESHOLD: '2',
        OPENVAT_BREAKER_OPEN_MS: String(OPEN_MS),
        OPENVAT_RATE_LIMIT_PRO: '100000',
        OPENVAT_RATE_LIMIT_BUSINESS: '100000',
        OPENVAT_CONFIRM_BURST: '1000',
      },
      { clock },
    );
    live = await t.key('pro', 'live');
    business = await t.key('business', 'live', { defaultRequesterVat: 'DE123456789' });
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  const calls = (module: string, country?: string): number => {
    const s = (sim.stats() as Record<string, Record<string, unknown>>)[module] as Record<string, unknown>;
    if (module === 'evatr') return s.calls as number;
    return ((s.calls as Record<string, number>)[country as string] ?? 0) as number;
  };
  const validate = (vat: string) =>
    t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=${vat}&cache=false`, headers: live.headers });
  const confirm = () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/confirm',
      headers: business.headers,
      payload: { vat_number: 'ATU12345678', company: { name: 'Musterhaus GmbH & Co KG' } },
    });
  const breakerOf = async (registry: string, country: string | null) => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/status' });
    clock.advance(2_000); // past the status cache
    return res
      .json()
      .data.registries.find(
        (r: { registry: string; country: string | null }) => r.registry === registry && r.country === country,
      )?.breaker;
  };

  const cases = [
    { name: 'VIES', module: 'vies', country: 'DE', vat: 'DE136695976' },
    { name: 'HMRC', module: 'hmrc', country: 'GB', vat: 'GB980780684' },
    { name: 'the Swiss UID register', module: 'bfs', country: 'CH', vat: 'CHE116281710' },
    { name: 'Brønnøysund', module: 'brreg', country: 'NO', vat: 'NO965920358MVA' },
  ];
  for (const c of cases) {
    it(`${c.name}: outage → open → back → live within the open period plus one trial`, async () => {
      sim.control({ [c.module]: { down: [c.country] } });
      for (let i = 0; i < 2; i++) assert.equal((await validate(c.vat)).statusCode, 502);
      assert.equal(await breakerOf(c.module, c.country), 'open');
      const before = calls(c.module, c.country);
      const refused = await validate(c.vat);
      assert.equal(refused.statusCode, 502);
      assert.match(refused.json().error.message, /circuit open/);
      assert.equal(calls(c.module, c.country), before, 'refused without an upstream call');

      sim.control({ [c.module]: { up: [c.country] } });
      clock.advance(OPEN_MS);
      const back = await validate(c.vat);
      assert.equal(back.statusCode, 200, back.body);
      assert.equal(back.json().meta.source_status, 'live');
      assert.equal(calls(c.module, c.country), before + 1, 'one trial call');
      assert.equal(await breakerOf(c.module, c.country), 'closed');
      assert.equal((await validate(c.vat)).statusCode, 200);
    });
  }

  it('eVatR: outage → open → back → confirms again within the open period plus one trial', async () => {
    sim.control({ evatr: { maintenance: true } });
    for (let i = 0; i < 2; i++) assert.ok((await confirm()).statusCode >= 500);
    assert.equal(await breakerOf('evatr', null), 'open');
    const before = calls('evatr');
    const refused = await confirm();
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.json().error.code, 'taxauth_unavailable');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(calls('evatr'), before, 'refused without an upstream call');

    sim.control({ evatr: { maintenance: false } });
    clock.advance(OPEN_MS);
    const back = await confirm();
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(calls('evatr'), before + 1);
    assert.equal(await breakerOf('evatr', null), 'closed');
  });

  it('a half-open trial that answers "throttled" closes the breaker instead of wedging it', async () => {
    sim.control({ vies: { down: ['FR'] } });
    for (let i = 0; i < 2; i++) assert.equal((await validate('FR40303265045')).statusCode, 502);
    sim.control({ vies: { up: ['FR'], errorRate: { FR: { rate: 1, code: 'MS_MAX_CONCURRENT_REQ' } } } });
    clock.advance(OPEN_MS);
    const trial = await validate('FR40303265045');
    assert.equal(trial.statusCode, 502, 'still busy, so no answer yet');
    sim.control({ vies: { errorRate: { FR: null } } });
    clock.advance(1_000);
    const next = await validate('FR40303265045');
    assert.equal(next.statusCode, 200, 'one second later the registry is asked again and answers');
    assert.equal(await breakerOf('vies', 'FR'), 'closed');
  });

  it('a half-open trial whose registry is not configured hands the trial back', async () => {
    const unconfigured = await buildTestApp(
      { ...simulatorUrls(), OPENVAT_BREAKER_THRESHOLD: '1' },
      { clock },
    );
    try {
      const key = await unconfigured.key('pro', 'live');
      const gb = () =>
        unconfigured.app.inject({
          method: 'GET',
          url: '/v1/validate?vat_number=GB980780684',
          headers: key.headers,
        });
      await unconfigured.container.liveAnswers.breaker.open('hmrc:GB', 1_000);
      clock.advance(1_000);
      const res = await gb();
      assert.equal(res.statusCode, 502);
      assert.match(res.json().error.message, /HMRC_CLIENT_ID/, 'the trial reached the client');
      const again = await gb();
      assert.match(
        again.json().error.message,
        /HMRC_CLIENT_ID/,
        'and the next call is a trial too, not refused',
      );
    } finally {
      await unconfigured.close();
    }
  });

  function simulatorUrls() {
    const address = sim.server.address() as { port: number };
    const base = `http://127.0.0.1:${address.port}`;
    return { VIES_URL: `${base}/vies/rest-api`, VIES_SOAP_URL: `${base}/vies/services/checkVatService` };
  }
});
