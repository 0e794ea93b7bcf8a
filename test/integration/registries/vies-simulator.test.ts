import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { RegistryAnswer, RegistryResult, RegistryUnavailable } from '../../../src/registries/port.js';
import { createViesClient } from '../../../src/registries/vies.js';
import { VIES_ERROR_CODES } from '../../../src/registries/vies-common.js';
import { createViesSoapClient } from '../../../src/registries/vies-soap.js';
import { createViesStatusReader } from '../../../src/registries/vies-status.js';
import type { SimulatorServer, SimulatorUrls } from '../../../src/simulators/server.js';
import { expectedViesAnswer, VIES_TEST_NUMBERS } from '../../../src/simulators/vies.js';
import { closedPortUrl, startSimulator } from './helpers.js';

/** The first 9-digit number (from 100000001 up) the simulator answers as wanted. */
function findNumber(country: string, want: 'valid' | 'invalid'): string {
  for (let n = 100_000_001; ; n++) {
    const expected = expectedViesAnswer(country, String(n));
    if ('valid' in expected && expected.valid === (want === 'valid')) return String(n);
  }
}

function asAnswer(result: RegistryResult): RegistryAnswer {
  assert.equal(result.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as RegistryAnswer;
}

function asUnavailable(result: RegistryResult): RegistryUnavailable {
  assert.equal(result.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as RegistryUnavailable;
}

describe('VIES clients against the simulator', () => {
  let sim: SimulatorServer;
  let urls: SimulatorUrls;
  let close: () => Promise<void>;

  before(async () => {
    ({ sim, urls, close } = await startSimulator({ seed: 7 }));
  });
  after(() => close());
  beforeEach(() => {
    sim.control({ vies: { reset: true } });
  });

  const rest = () => createViesClient({ baseUrl: urls.VIES_URL, timeoutMs: 2_000 });
  const soap = () => createViesSoapClient({ url: urls.VIES_SOAP_URL, timeoutMs: 2_000 });

  it('answers a registered number with company data', async () => {
    const national = findNumber('FR', 'valid');
    const answer = asAnswer(await rest().lookup({ vat: { country: 'FR', national } }));
    const expected = expectedViesAnswer('FR', national);
    assert.ok('valid' in expected);
    assert.equal(answer.valid, true);
    assert.equal(answer.source, 'vies');
    assert.equal(answer.name, expected.name);
    assert.equal(answer.address, expected.address);
    assert.match(answer.address ?? '', /\n/);
    assert.equal(answer.consultationNumber, null);
    assert.ok(answer.checkedAt instanceof Date && !Number.isNaN(answer.checkedAt.getTime()));
  });

  it('turns the --- placeholders of non-disclosing member states into null', async () => {
    const answer = asAnswer(
      await rest().lookup({ vat: { country: 'DE', national: findNumber('DE', 'valid') } }),
    );
    assert.equal(answer.valid, true);
    assert.equal(answer.name, null);
    assert.equal(answer.address, null);
  });

  it('answers valid:false for an unregistered number', async () => {
    const answer = asAnswer(
      await rest().lookup({ vat: { country: 'NL', national: findNumber('NL', 'invalid') } }),
    );
    assert.equal(answer.valid, false);
    assert.equal(answer.name, null);
  });

  it('returns a consultation number when a requester is given', async () => {
    const answer = asAnswer(
      await rest().lookup({
        vat: { country: 'AT', national: findNumber('AT', 'valid') },
        requester: { country: 'DE', national: findNumber('DE', 'valid') },
      }),
    );
    assert.match(answer.consultationNumber ?? '', /^WAPIAAAA[0-9A-Z]{8}$/);
  });

  it('rejects an unregistered requester with INVALID_REQUESTER_INFO', async () => {
    const result = asUnavailable(
      await rest().lookup({
        vat: { country: 'AT', national: findNumber('AT', 'valid') },
        requester: { country: 'DE', national: findNumber('DE', 'invalid') },
      }),
    );
    assert.equal(result.reason, 'rejected');
    assert.equal(result.upstreamCode, 'INVALID_REQUESTER_INFO');
    assert.equal(result.retryable, false);
  });

  it('handles Greece as EL (also when asked as GR) and Northern Ireland as XI', async () => {
    for (const country of ['EL', 'GR', 'XI']) {
      const prefix = country === 'GR' ? 'EL' : country;
      const answer = asAnswer(
        await rest().lookup({ vat: { country, national: findNumber(prefix, 'valid') } }),
      );
      assert.equal(answer.valid, true, country);
    }
  });

  it('maps every VIES test-service number to the right outcome, on REST and on SOAP', async () => {
    for (const client of [rest(), soap()]) {
      assert.equal(asAnswer(await client.lookup({ vat: { country: 'BE', national: '100' } })).valid, true);
      assert.equal(asAnswer(await client.lookup({ vat: { country: 'BE', national: '200' } })).valid, false);
      for (const [national, code] of Object.entries(VIES_TEST_NUMBERS)) {
        if (code === 'valid' || code === 'invalid') continue;
        const result = asUnavailable(await client.lookup({ vat: { country: 'BE', national } }));
        assert.equal(result.upstreamCode, code, national);
        assert.equal(result.reason, VIES_ERROR_CODES[code]?.reason, code);
      }
    }
  });

  it('maps every VIES error code injected with errorRate, never as valid:false', async () => {
    const national = findNumber('DE', 'valid');
    for (const [code, info] of Object.entries(VIES_ERROR_CODES)) {
      sim.control({ vies: { errorRate: { DE: { rate: 1, code } } } });
      const result = asUnavailable(await rest().lookup({ vat: { country: 'DE', national } }));
      assert.equal(result.upstreamCode, code);
      assert.equal(result.reason, info.reason, code);
      assert.equal(result.retryable, info.reason !== 'rejected', code);
    }
  });

  it('answers MS_MAX_CONCURRENT_REQ over the per-country concurrency limit → throttled', async () => {
    sim.control({ vies: { concurrencyLimit: { DE: 1 }, latencyMs: { DE: 5_000 } } });
    const national = findNumber('DE', 'valid');
    // The first call holds DE's only slot (the simulated member state is slow; our client gives up).
    const slow = createViesClient({ baseUrl: urls.VIES_URL, timeoutMs: 150 });
    const first = asUnavailable(await slow.lookup({ vat: { country: 'DE', national } }));
    assert.equal(first.reason, 'timeout');
    const second = asUnavailable(await rest().lookup({ vat: { country: 'DE', national } }));
    assert.equal(second.reason, 'throttled');
    assert.equal(second.upstreamCode, 'MS_MAX_CONCURRENT_REQ');
    assert.equal(second.retryable, true);
    // Other countries are not affected.
    assert.equal(
      asAnswer(await rest().lookup({ vat: { country: 'FR', national: findNumber('FR', 'valid') } })).valid,
      true,
    );
    const stats = sim.modules.vies?.stats?.() as {
      rejections: Record<string, number>;
      maxConcurrencySeen: Record<string, number>;
    };
    assert.equal(stats.rejections.DE, 1);
    assert.equal(stats.maxConcurrencySeen.DE, 2);
  });

  it('answers GLOBAL_MAX_CONCURRENT_REQ over the global limit', async () => {
    sim.control({ vies: { globalConcurrencyLimit: 1, latencyMs: { IT: 5_000 } } });
    const slow = createViesClient({ baseUrl: urls.VIES_URL, timeoutMs: 150 });
    await slow.lookup({ vat: { country: 'IT', national: findNumber('IT', 'valid') } });
    const result = asUnavailable(
      await rest().lookup({ vat: { country: 'FR', national: findNumber('FR', 'valid') } }),
    );
    assert.equal(result.reason, 'throttled');
    assert.equal(result.upstreamCode, 'GLOBAL_MAX_CONCURRENT_REQ');
  });

  it('answers MS_UNAVAILABLE for a down member state, and check-status reports it', async () => {
    sim.control({ vies: { down: ['DE'] } });
    const result = asUnavailable(
      await rest().lookup({ vat: { country: 'DE', national: findNumber('DE', 'valid') } }),
    );
    assert.equal(result.reason, 'down');
    assert.equal(result.upstreamCode, 'MS_UNAVAILABLE');
    const status = await createViesStatusReader({ baseUrl: urls.VIES_URL, timeoutMs: 2_000 }).checkStatus();
    assert.ok(status);
    assert.deepEqual(status.DE, { available: false, upstream: 'Unavailable' });
    assert.deepEqual(status.FR, { available: true, upstream: 'Available' });
    assert.equal(Object.keys(status).length, 28);
  });

  it('reports a whole-service outage (HTML 503) as down, with and without the SOAP fallback', async () => {
    sim.control({ vies: { serviceDown: true } });
    const national = findNumber('FR', 'valid');
    const plain = asUnavailable(await rest().lookup({ vat: { country: 'FR', national } }));
    assert.equal(plain.reason, 'down');
    const withSoap = createViesClient({
      baseUrl: urls.VIES_URL,
      soapUrl: urls.VIES_SOAP_URL,
      timeoutMs: 2_000,
    });
    const both = asUnavailable(await withSoap.lookup({ vat: { country: 'FR', national } }));
    assert.equal(both.reason, 'down');
    assert.match(both.message, /REST before it/);
    assert.equal(
      await createViesStatusReader({ baseUrl: urls.VIES_URL, timeoutMs: 2_000 }).checkStatus(),
      null,
    );
  });

  it('reports a hang as timeout', async () => {
    sim.control({ vies: { hang: ['PL'] } });
    const client = createViesClient({ baseUrl: urls.VIES_URL, timeoutMs: 150 });
    const result = asUnavailable(
      await client.lookup({ vat: { country: 'PL', national: findNumber('PL', 'valid') } }),
    );
    assert.equal(result.reason, 'timeout');
    assert.equal(result.retryable, true);
  });

  it('falls back to SOAP when the REST API is unreachable', async () => {
    const client = createViesClient({
      baseUrl: await closedPortUrl(),
      soapUrl: urls.VIES_SOAP_URL,
      timeoutMs: 2_000,
    });
    const national = findNumber('FR', 'valid');
    const answer = asAnswer(await client.lookup({ vat: { country: 'FR', national } }));
    assert.equal(answer.valid, true);
    assert.equal(answer.name, (expectedViesAnswer('FR', national) as { name: string }).name);
    const withRequester = asAnswer(
      await client.lookup({
        vat: { country: 'FR', national },
        requester: { country: 'DE', national: findNumber('DE', 'valid') },
      }),
    );
    assert.match(withRequester.consultationNumber ?? '', /^WAPIAAAA/);
  });

  it('reads SOAP faults with HTTP 200 and with HTTP 500', async () => {
    const national = findNumber('DE', 'valid');
    for (const errorStatus of [200, 500]) {
      sim.control({ vies: { errorStatus, errorRate: { DE: { rate: 1, code: 'MS_MAX_CONCURRENT_REQ' } } } });
      const result = asUnavailable(await soap().lookup({ vat: { country: 'DE', national } }));
      assert.equal(result.reason, 'throttled');
      assert.equal(result.upstreamCode, 'MS_MAX_CONCURRENT_REQ');
    }
  });

  it('reads REST error envelopes sent with HTTP 200', async () => {
    sim.control({ vies: { errorStatus: 200, down: ['SE'] } });
    const result = asUnavailable(
      await rest().lookup({ vat: { country: 'SE', national: findNumber('SE', 'valid') } }),
    );
    assert.equal(result.upstreamCode, 'MS_UNAVAILABLE');
  });

  it('repeats the same seeded error sequence after a reset', async () => {
    const national = findNumber('DE', 'valid');
    const run = async () => {
      sim.control({ vies: { reset: true } });
      sim.control({ vies: { seed: 42, errorRate: { DE: { rate: 0.3, code: 'MS_MAX_CONCURRENT_REQ' } } } });
      const outcomes: string[] = [];
      for (let i = 0; i < 30; i++) {
        const result = await rest().lookup({ vat: { country: 'DE', national } });
        outcomes.push(result.kind === 'answer' ? 'ok' : (result.upstreamCode ?? '?'));
      }
      return outcomes;
    };
    const first = await run();
    assert.deepEqual(await run(), first);
    assert.ok(first.includes('ok') && first.includes('MS_MAX_CONCURRENT_REQ'));
  });

  it('accepts control commands and serves counters over HTTP', async () => {
    const base = urls.VIES_URL.replace(/\/vies\/rest-api$/, '');
    const response = await fetch(`${base}/_control`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vies: { down: ['FI'], latencyMs: 1 } }),
    });
    assert.equal(response.status, 200);
    const settings = (await response.json()) as { vies: { down: string[]; latencyMs: number } };
    assert.deepEqual(settings.vies.down, ['FI']);
    assert.equal(settings.vies.latencyMs, 1);
    const result = asUnavailable(
      await rest().lookup({ vat: { country: 'FI', national: findNumber('FI', 'valid') } }),
    );
    assert.equal(result.upstreamCode, 'MS_UNAVAILABLE');
    const stats = (await (await fetch(`${base}/_stats`)).json()) as {
      vies: { calls: Record<string, number>; errors: Record<string, number> };
    };
    assert.equal(stats.vies.calls.FI, 1);
    assert.equal(stats.vies.errors.MS_UNAVAILABLE, 1);
  });
});
