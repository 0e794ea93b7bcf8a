import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp } from '../helpers/app.js';

const dir = mkdtempSync(join(tmpdir(), 'openvat-overrides-'));
let n = 0;
function file(text: string): string {
  n += 1;
  const path = join(dir, `overrides-${n}.json`);
  writeFileSync(path, text);
  return path;
}

describe('OPENVAT_RATES_OVERRIDES', () => {
  const clock = createManualClock('2026-11-27T10:00:00Z');

  it("an operator's periods are served over the curated dataset, from the start of their day there", async () => {
    const path = file(
      `${JSON.stringify(
        {
          fi: [
            {
              from: '2027-01-01',
              standard_rate: 24,
              reduced_rates: [13.5, 10],
              super_reduced_rate: null,
              parking_rate: null,
              note: 'announced',
            },
          ],
        },
        null,
        2,
      )}\n`,
    );
    const t = await buildTestApp({ OPENVAT_RATES_OVERRIDES: path }, { clock });
    after(() => t.close());
    const get = async (url: string) => (await t.app.inject({ method: 'GET', url })).json();
    assert.equal((await get('/v1/rates/fi')).data.standard_rate, 25.5);
    const future = await get('/v1/rates/fi?date=2027-01-01');
    assert.equal(future.data.standard_rate, 24);
    assert.deepEqual(future.data.reduced_rates, [10, 13.5]);
    clock.set('2026-12-31T22:00:00Z');
    const now = await get('/v1/rates/fi');
    assert.equal(now.data.standard_rate, 24);
    assert.equal(now.meta.data_version, '2027-01-01');
    assert.equal((await get('/v1/rates/de')).data.standard_rate, 19);
  });

  for (const [name, text, message] of [
    [
      'an unknown country',
      '{\n  "fi": [],\n  "zz": [\n    { "from": "2027-01-01", "standard_rate": 20 }\n  ]\n}\n',
      /line 3: unknown country "zz"/,
    ],
    [
      'a malformed period',
      '{\n  "fi": [\n    { "from": "2027-01-01", "standard_rate": 24 },\n    { "from": "2027-02-30", "standard_rate": 24 }\n  ]\n}\n',
      /line 4: fi: "from" must be a day, YYYY-MM-DD/,
    ],
    [
      'a reduced rate above the standard one',
      '{\n  "de": [\n    {\n      "from": "2027-01-01",\n      "standard_rate": 7,\n      "reduced_rates": [19]\n    }\n  ]\n}\n',
      /line 3: de: reduced rate 19% is not below the standard rate of 7%/,
    ],
    [
      'an unknown field',
      '{"fi": [{"from": "2027-01-01", "standard_rate": 24, "standard": 1}]}',
      /line 1: fi: unknown field "standard"/,
    ],
    ['text that is not JSON', '{\n  "fi": [\n    { "from": "2027-01-01", }\n  ]\n}\n', /line 3: not JSON/],
  ] as const) {
    it(`${name} stops the start with a message naming the line`, async () => {
      const path = file(text);
      await assert.rejects(buildTestApp({ OPENVAT_RATES_OVERRIDES: path }), (error: Error) => {
        assert.equal(error.name, 'ConfigError');
        assert.ok(error.message.startsWith(`OPENVAT_RATES_OVERRIDES ${path} line `), error.message);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  it('a file that cannot be read stops the start', async () => {
    await assert.rejects(
      buildTestApp({ OPENVAT_RATES_OVERRIDES: join(dir, 'missing.json') }),
      /OPENVAT_RATES_OVERRIDES: cannot read .*missing\.json \(ENOENT\)/,
    );
  });
});
