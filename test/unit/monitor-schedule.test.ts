import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseQuietWindows } from '../../src/config.js';
import {
  avoidQuiet,
  INTERVAL_MS,
  nextCheckAt,
  nextSlot,
  offsetOf,
  retryAt,
} from '../../src/modules/monitors/schedule.js';
import { detectChanges } from '../../src/modules/monitors/service.js';

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;

describe('monitor schedule', () => {
  it('places each monitor at a stable offset in its interval, spread over it', () => {
    assert.equal(offsetOf('a', INTERVAL_MS.daily), offsetOf('a', INTERVAL_MS.daily));
    const hours = new Array<number>(24).fill(0);
    for (let i = 0; i < 24_000; i++) {
      const hour = Math.floor(offsetOf(`monitor-${i}`, INTERVAL_MS.daily) / HOUR);
      hours[hour] = (hours[hour] ?? 0) + 1;
    }
    for (const n of hours) assert.ok(n > 850 && n < 1150, hours.join(','));
  });

  it('finds the next slot at or after a time', () => {
    const day = INTERVAL_MS.daily;
    assert.equal(nextSlot(at('2026-11-23T10:00:00Z'), day, 5 * HOUR), at('2026-11-24T05:00:00Z'));
    assert.equal(nextSlot(at('2026-11-23T05:00:00Z'), day, 5 * HOUR), at('2026-11-23T05:00:00Z'));
    assert.equal(nextSlot(at('2026-11-23T04:59:59Z'), day, 5 * HOUR), at('2026-11-23T05:00:00Z'));
  });

  it('keeps the next check at least half an interval after a check, on the monitor’s slot', () => {
    for (const interval of ['daily', 'weekly', 'monthly'] as const) {
      const checked = at('2026-11-23T10:00:00Z');
      const next = nextCheckAt({ id: 'm1', interval, country: 'AT', checkedAtMs: checked, windows: [] });
      assert.ok(next - checked >= INTERVAL_MS[interval] / 2 && next - checked < 1.5 * INTERVAL_MS[interval]);
      assert.equal((next - offsetOf('m1', INTERVAL_MS[interval])) % INTERVAL_MS[interval], 0);
    }
  });

  it('moves times out of quiet windows, across midnight too, by as much as they were into them', () => {
    const windows = parseQuietWindows('W', 'DE=21:00-00:30,FR=03:00-04:00');
    assert.equal(avoidQuiet(at('2026-11-23T20:59:00Z'), 'DE', windows), at('2026-11-23T20:59:00Z'));
    assert.equal(avoidQuiet(at('2026-11-23T21:00:00Z'), 'DE', windows), at('2026-11-24T00:30:00Z'));
    assert.equal(avoidQuiet(at('2026-11-23T23:00:00Z'), 'DE', windows), at('2026-11-24T02:30:00Z'));
    assert.equal(avoidQuiet(at('2026-11-24T00:10:00Z'), 'DE', windows), at('2026-11-24T03:40:00Z'));
    assert.equal(avoidQuiet(at('2026-11-24T00:30:00Z'), 'DE', windows), at('2026-11-24T00:30:00Z'));
    assert.equal(avoidQuiet(at('2026-11-23T23:00:00Z'), 'AT', windows), at('2026-11-23T23:00:00Z'));
    assert.equal(avoidQuiet(at('2026-11-23T03:15:00Z'), 'FR', windows), at('2026-11-23T04:15:00Z'));
  });

  it('backs retries off exponentially, never beyond six hours or the interval', () => {
    const base = { nowMs: 0, baseMs: 60_000, country: 'AT', windows: [], random: () => 1 };
    assert.equal(retryAt({ ...base, failures: 1, interval: 'daily' }), 60_000);
    assert.equal(retryAt({ ...base, failures: 3, interval: 'daily' }), 240_000);
    assert.equal(retryAt({ ...base, failures: 30, interval: 'daily' }), 6 * HOUR);
    assert.equal(
      retryAt({ ...base, failures: 2, interval: 'daily', random: () => 0 }),
      60_000,
      'jitter down to half',
    );
  });

  it('parses quiet windows and refuses malformed ones', () => {
    assert.deepEqual(parseQuietWindows('W', 'DE=21:00-00:30'), [{ country: 'DE', start: 1260, end: 30 }]);
    assert.deepEqual(parseQuietWindows('W', 'none'), []);
    assert.throws(() => parseQuietWindows('W', 'DE=21-23'), ConfigError);
    assert.throws(() => parseQuietWindows('W', 'DE=25:00-01:00'), ConfigError);
    assert.throws(
      () => loadConfig({ OPENVAT_MONITOR_QUIET_WINDOWS: 'de=01:00-02:00' }),
      /OPENVAT_MONITOR_QUIET_WINDOWS/,
    );
    assert.equal(loadConfig({}).monitors.perCountry, 1, 'one below the registry concurrency of 2');
    assert.equal(loadConfig({ OPENVAT_REGISTRY_CONCURRENCY: '6' }).monitors.perCountry, 5);
  });
});

describe('change detection', () => {
  const known = { status: 'valid', name: 'Acme GmbH', address: 'Hauptstraße 1\n10115 Berlin' };
  it('reports each kind of change with the values before and after', () => {
    assert.deepEqual(detectChanges(known, { valid: false, name: null, address: null }), [
      { type: 'became_invalid', before: 'valid', after: 'invalid' },
    ]);
    assert.deepEqual(
      detectChanges(
        { status: 'invalid', name: null, address: null },
        { valid: true, name: 'X', address: null },
      ),
      [{ type: 'became_valid', before: 'invalid', after: 'valid' }],
    );
    assert.deepEqual(
      detectChanges(known, { valid: true, name: 'Acme Holding GmbH', address: known.address }),
      [{ type: 'name_changed', before: 'Acme GmbH', after: 'Acme Holding GmbH' }],
    );
    assert.deepEqual(
      detectChanges(known, { valid: true, name: 'Acme GmbH', address: 'Ring 2\n20095 Hamburg' }),
      [{ type: 'address_changed', before: known.address, after: 'Ring 2\n20095 Hamburg' }],
    );
  });
  it('is quiet about the first answer, case and spacing, and values the registry stops giving', () => {
    assert.deepEqual(
      detectChanges(
        { status: 'unknown', name: null, address: null },
        { valid: false, name: null, address: null },
      ),
      [],
    );
    assert.deepEqual(
      detectChanges(known, { valid: true, name: 'ACME  GMBH', address: 'Hauptstraße 1 10115 Berlin' }),
      [],
    );
    assert.deepEqual(detectChanges(known, { valid: true, name: null, address: null }), []);
  });
});
