import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { berlinWallTime, berlinWallTimeToInstant } from '../../src/lib/dates.js';
import { normaliseEvatrTimestamp } from '../../src/registries/evatr.js';

const MINUTE = 60_000;

/** `YYYY-MM-DD hh:mm:ss +hh:mm` of a Berlin wall time, for readable assertions. */
function shown(instant: string): string {
  const w = berlinWallTime(new Date(instant));
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const sign = w.offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(w.offsetMinutes);
  return (
    `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)} ` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** The wall-time fields read as UTC, the input of `berlinWallTimeToInstant`. */
function wall(text: string): number {
  return Date.parse(`${text}Z`);
}

// Europe/Berlin switches at 01:00 UTC on the last Sunday of March (to +02:00) and of October
// (back to +01:00).
describe('Berlin wall-clock time of an instant', () => {
  it('turns 02:00 winter time into 03:00 summer time on the last Sunday of March', () => {
    assert.equal(shown('2025-03-30T00:59:59.999Z'), '2025-03-30 01:59:59 +01:00');
    assert.equal(shown('2025-03-30T01:00:00.000Z'), '2025-03-30 03:00:00 +02:00');
    assert.equal(shown('2026-03-29T00:59:59Z'), '2026-03-29 01:59:59 +01:00');
    assert.equal(shown('2026-03-29T01:00:00Z'), '2026-03-29 03:00:00 +02:00');
  });

  it('turns 03:00 summer time back into 02:00 winter time on the last Sunday of October', () => {
    assert.equal(shown('2025-10-26T00:59:59.999Z'), '2025-10-26 02:59:59 +02:00');
    assert.equal(shown('2025-10-26T01:00:00.000Z'), '2025-10-26 02:00:00 +01:00');
    assert.equal(shown('2026-10-25T00:59:59Z'), '2026-10-25 02:59:59 +02:00');
    assert.equal(shown('2026-10-25T01:00:00Z'), '2026-10-25 02:00:00 +01:00');
  });

  it('does not switch on the Sunday before the last one', () => {
    assert.equal(shown('2025-03-23T01:30:00Z'), '2025-03-23 02:30:00 +01:00');
    assert.equal(shown('2025-10-19T01:30:00Z'), '2025-10-19 03:30:00 +02:00');
  });

  it('moves the calendar day at Berlin midnight, not UTC midnight', () => {
    assert.equal(shown('2025-07-14T21:59:59Z'), '2025-07-14 23:59:59 +02:00');
    assert.equal(shown('2025-07-14T22:00:00Z'), '2025-07-15 00:00:00 +02:00');
    assert.equal(shown('2025-12-31T23:00:00Z'), '2026-01-01 00:00:00 +01:00');
  });

  it('takes a Date or milliseconds since the epoch alike', () => {
    const at = Date.parse('2025-07-14T08:01:02.123Z');
    assert.deepEqual(berlinWallTime(at), berlinWallTime(new Date(at)));
  });
});

describe('Instant of a Berlin wall-clock time', () => {
  it('reads the minute before and after each switch with the offset in force', () => {
    const cases: [string, string][] = [
      ['2025-03-30T01:59:59.999', '2025-03-30T00:59:59.999Z'],
      ['2025-03-30T03:00:00.000', '2025-03-30T01:00:00.000Z'],
      ['2025-10-26T01:59:59.999', '2025-10-25T23:59:59.999Z'],
      ['2025-10-26T03:00:00.000', '2025-10-26T02:00:00.000Z'],
    ];
    for (const [local, utc] of cases) {
      assert.equal(new Date(berlinWallTimeToInstant(wall(local))).toISOString(), utc, local);
    }
  });

  it('reads a time in the spring gap with the winter offset', () => {
    // 02:30 does not exist on 2025-03-30; read as +01:00 it is 03:30 summer time.
    const instant = berlinWallTimeToInstant(wall('2025-03-30T02:30:00'));
    assert.equal(new Date(instant).toISOString(), '2025-03-30T01:30:00.000Z');
    assert.equal(shown('2025-03-30T01:30:00Z'), '2025-03-30 03:30:00 +02:00');
  });

  it('reads a time of the autumn hour that happens twice as the second, winter-time one', () => {
    const instant = berlinWallTimeToInstant(wall('2025-10-26T02:30:00'));
    assert.equal(new Date(instant).toISOString(), '2025-10-26T01:30:00.000Z');
  });

  it('round-trips every minute of both switch days, except the hours that are skipped or repeated', () => {
    for (const day of ['2025-03-30', '2025-10-26', '2026-03-29', '2026-10-25']) {
      const start = Date.parse(`${day}T00:00:00Z`) - 3 * 60 * MINUTE;
      for (let at = start; at < start + 30 * 60 * MINUTE; at += MINUTE) {
        const w = berlinWallTime(at);
        if (w.hour === 2 && w.day === Number(day.slice(8))) continue;
        const fields = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
        assert.equal(berlinWallTimeToInstant(fields), at, new Date(at).toISOString());
      }
    }
  });
});

describe('eVatR timestamps without an offset are Berlin time', () => {
  it('uses the offset in force just before and after each switch', () => {
    const cases: [string, string][] = [
      ['2025-03-30T01:59:59.123456789', '2025-03-30T00:59:59.123Z'],
      ['2025-03-30T03:00:00.5', '2025-03-30T01:00:00.500Z'],
      ['2025-10-26T01:59:59', '2025-10-25T23:59:59.000Z'],
      ['2025-10-26T03:00:00', '2025-10-26T02:00:00.000Z'],
    ];
    for (const [input, expected] of cases) assert.equal(normaliseEvatrTimestamp(input), expected, input);
  });
});
