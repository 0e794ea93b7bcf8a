import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { euNumbers } from '../helpers/batch-numbers.js';

interface ViesStats {
  total: number;
  rejections: Record<string, number>;
  errors: Record<string, number>;
  maxConcurrency: Record<string, number>;
  maxConcurrencySeen: Record<string, number>;
}

describe('a 10,000-number job against registries that allow 2 concurrent calls per country', () => {
  let sim: SimulatorServer;
  let t: TestApp;
  let live: TestKey;

  before(async () => {
    sim = createSimulatorServer({ latencyMs: 1 });
    sim.control({ concurrencyLimit: { '*': 2 } });
    const { urls } = await sim.listen(0, '127.0.0.1');
    t = await buildTestApp({
      VIES_URL: urls.VIES_URL,
      VIES_SOAP_URL: urls.VIES_SOAP_URL,
      OPENVAT_REGISTRY_CONCURRENCY: '2',
      OPENVAT_STATUS_POLL_MS: '0',
    });
    live = await t.key('business', 'live');
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  it('completes with no MS_MAX_CONCURRENT_REQ rejection and no false invalid', async () => {
    const numbers = euNumbers(371).slice(0, 10_000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: live.headers,
      payload: { vat_numbers: numbers, async: true },
    });
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().data.id;
    t.container.batchWorker.start();
    let data: {
      status: string;
      results?: Array<{ ok: boolean; data?: { valid: boolean }; error?: unknown }>;
    };
    for (;;) {
      const got = await t.app.inject({
        method: 'GET',
        url: `/v1/validate/batch/${id}`,
        headers: live.headers,
      });
      data = got.json().data;
      if (data.status === 'completed') break;
      await sleep(100);
    }
    const stats = (sim.stats() as { vies: ViesStats }).vies;
    assert.equal(stats.errors.MS_MAX_CONCURRENT_REQ ?? 0, 0, JSON.stringify(stats.errors));
    assert.deepEqual(stats.rejections, {});
    for (const [country, peak] of Object.entries(stats.maxConcurrencySeen)) assert.ok(peak <= 2, country);
    assert.equal(stats.total, 10_000, 'every number asked exactly once');
    const results = data.results ?? [];
    assert.equal(results.length, 10_000);
    let falseInvalid = 0;
    results.forEach((item, i) => {
      const vat = numbers[i] as string;
      const expected = expectedViesAnswer(vat.slice(0, 2), vat.slice(2));
      assert.ok('valid' in expected, vat);
      assert.equal(item.ok, true, `${vat}: ${JSON.stringify(item.error)}`);
      if (expected.valid && item.data?.valid === false) falseInvalid += 1;
      assert.equal(item.data?.valid, expected.valid, vat);
    });
    assert.equal(falseInvalid, 0);
  });
});
