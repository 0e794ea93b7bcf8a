import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { germanVatNumberWithCheckDigit } from '../../src/simulators/evatr.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (version 0.0.4): HELP and TYPE lines, then samples. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(sample, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, '$1');
    }
    const value = sample[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(sample[3]);
    assert.ok(!Number.isNaN(value), `a number: ${line}`);
    samples.push({ name: sample[1] as string, labels, value });
  }
  return { samples, types };
}

function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

function germanNumber(registered: boolean): string {
  for (let i = 1; ; i++) {
    const vat = germanVatNumberWithCheckDigit(String(40_000_000 + i));
    const expected = expectedViesAnswer('DE', vat.slice(2));
    if ('valid' in expected && expected.valid === registered) return vat;
  }
}

describe('GET /metrics', () => {
  const token = 'metrics-token-for-the-metrics-tests';
  let sim: SimulatorServer;
  let t: TestApp;
  let live: TestKey;

  before(async () => {
    sim = createSimulatorServer();
    const { urls } = await sim.listen(0, '127.0.0.1');
    t = await buildTestApp({
      VIES_URL: urls.VIES_URL,
      VIES_SOAP_URL: urls.VIES_SOAP_URL,
      OPENVAT_METRICS_TOKEN: token,
      OPENVAT_REGISTRY_TIMEOUT_MS: '2000',
    });
    live = await t.key('pro', 'live');
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  async function scrape() {
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parseExposition(res.body);
  }

  it('needs the bearer token, answered in the error envelope', async () => {
    const none = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().error.code, 'unauthorized');
    const wrong = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(wrong.statusCode, 401);
  });

  it('counts requests by route template and status, registry calls by outcome, breakers, queues and commits', async () => {
    const valid = germanNumber(true);
    const invalid = germanNumber(false);
    for (const vat of [valid, invalid]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/validate?vat_number=${vat}`,
        headers: live.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const refused = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE123',
      headers: live.headers,
    });
    assert.equal(refused.statusCode, 400);
    // A batch job waits in the queue (the workers are not started here).
    const test = await t.key('pro', 'test');
    const job = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: test.headers,
      payload: { vat_numbers: ['DE100000008', 'DE300000002', 'ATU13585627'], async: true },
    });
    assert.equal(job.statusCode, 202, job.body);
    await t.container.liveAnswers.breaker.open('vies:DE');

    const { samples, types } = await scrape();
    assert.equal(types.get('openvat_http_requests_total'), 'counter');
    assert.equal(types.get('openvat_http_request_duration_seconds'), 'histogram');
    const route = { method: 'GET', route: '/v1/validate' };
    assert.equal(find(samples, 'openvat_http_requests_total', { ...route, status_code: '200' })[0]?.value, 2);
    assert.equal(find(samples, 'openvat_http_requests_total', { ...route, status_code: '400' })[0]?.value, 1);
    assert.equal(
      find(samples, 'openvat_http_request_duration_seconds_count', { ...route, status_code: '200' })[0]
        ?.value,
      2,
    );
    assert.equal(find(samples, 'openvat_http_requests_total', { route: '/metrics' }).length, 0);

    const calls = { registry: 'vies', country: 'DE' };
    assert.equal(find(samples, 'openvat_registry_calls_total', { ...calls, outcome: 'valid' })[0]?.value, 1);
    assert.equal(
      find(samples, 'openvat_registry_calls_total', { ...calls, outcome: 'invalid' })[0]?.value,
      1,
    );
    assert.equal(
      find(samples, 'openvat_registry_call_duration_seconds_count', { ...calls, outcome: 'valid' })[0]?.value,
      1,
    );
    assert.equal(find(samples, 'openvat_registry_breaker_state', { ...calls, state: 'open' })[0]?.value, 1);
    assert.equal(find(samples, 'openvat_registry_breaker_state', { ...calls, state: 'closed' })[0]?.value, 0);
    assert.equal(find(samples, 'openvat_registry_in_flight', calls)[0]?.value, 0);
    assert.equal(
      find(samples, 'openvat_registry_concurrency_limit', calls)[0]?.value,
      2,
      'the default, no throttling',
    );

    assert.equal(find(samples, 'openvat_batch_items_pending')[0]?.value, 3);
    assert.equal(find(samples, 'openvat_webhook_deliveries_pending')[0]?.value, 0);
    assert.equal(find(samples, 'openvat_webhook_attempts_total', { outcome: 'delivered' })[0]?.value, 0);
    // Each audited answer (the two successful validations) went through group commit.
    const commits = find(samples, 'openvat_group_commit_units_sum')[0]?.value ?? 0;
    assert.ok(commits >= 2, `${commits} units committed`);

    // The Grafana dashboard in docs/ queries only metrics this scrape has.
    const dashboard = readFileSync('docs/grafana-dashboard.json', 'utf8');
    const used = new Set([...dashboard.matchAll(/openvat_[a-z_]+/g)].map((m) => m[0]));
    assert.ok(used.size >= 10);
    const exposed = new Set(samples.map((sample) => sample.name));
    for (const name of used) assert.ok(exposed.has(name), `${name} is exposed`);
  });
  it('reads the scheme as for API keys: case-insensitive', async () => {
    const lower = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `bearer ${token}` },
    });
    assert.equal(lower.statusCode, 200);
  });

  it('a token with a space is refused at start: no client could send it as a bearer token', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'sqlite::memory:', OPENVAT_METRICS_TOKEN: 'two words' }),
      (error: Error) =>
        error instanceof ConfigError && /OPENVAT_METRICS_TOKEN may not contain spaces/.test(error.message),
    );
  });
});

describe('GET /metrics without OPENVAT_METRICS_TOKEN', () => {
  it('does not exist', async () => {
    const t = await buildTestApp();
    try {
      const res = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: 'Bearer x' },
      });
      assert.equal(res.statusCode, 404);
    } finally {
      await t.close();
    }
  });
});
