import { createHash } from 'node:crypto';
import type { QuietWindow } from '../../config.js';

export const INTERVALS = ['daily', 'weekly', 'monthly'] as const;
export type Interval = (typeof INTERVALS)[number];

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export const INTERVAL_MS: Record<Interval, number> = {
  daily: DAY_MS,
  weekly: 7 * DAY_MS,
  monthly: 30 * DAY_MS,
};

/** Longest wait between two retries of a check whose registry did not answer. */
const RETRY_CAP_MS = 6 * 3_600_000;

/**
 * A monitor's stable place within its interval, from a hash of its id: monitors created together
 * (a bulk import) are checked spread evenly over the day, week or month, not all at midnight.
 */
export function offsetOf(id: string, intervalMs: number): number {
  const hash = createHash('sha256').update(id).digest();
  return hash.readUIntBE(0, 6) % intervalMs;
}

/** The first time at or after `afterMs` that is `offsetMs` into an interval (counted from the epoch). */
export function nextSlot(afterMs: number, intervalMs: number, offsetMs: number): number {
  const k = Math.ceil((afterMs - offsetMs) / intervalMs);
  return k * intervalMs + offsetMs;
}

/**
 * Moves a time that falls in one of its prefix's quiet windows to after the window, by as much as it
 * was into it: the checks of a window are spread over the same length of time after it instead of
 * all waiting for its end.
 */
export function avoidQuiet(atMs: number, country: string, windows: ReadonlyArray<QuietWindow>): number {
  let at = atMs;
  for (let pass = 0; pass < 3; pass++) {
    let moved = false;
    for (const w of windows) {
      if (w.country !== country) continue;
      const dayStart = Math.floor(at / DAY_MS) * DAY_MS;
      const minute = (at - dayStart) / MINUTE_MS;
      let start: number | null = null;
      let end = 0;
      if (w.start < w.end) {
        if (minute >= w.start && minute < w.end) {
          start = dayStart + w.start * MINUTE_MS;
          end = dayStart + w.end * MINUTE_MS;
        }
      } else if (minute >= w.start) {
        start = dayStart + w.start * MINUTE_MS;
        end = dayStart + DAY_MS + w.end * MINUTE_MS;
      } else if (minute < w.end) {
        start = dayStart - DAY_MS + w.start * MINUTE_MS;
        end = dayStart + w.end * MINUTE_MS;
      }
      if (start !== null) {
        at = end + (at - start);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return at;
}

/**
 * When a monitor is next checked after a check at `checkedAtMs`: its slot in the interval, at least
 * half an interval later (a check made out of turn does not bring on another one soon after), moved
 * out of quiet windows.
 */
export function nextCheckAt(input: {
  id: string;
  interval: Interval;
  country: string;
  checkedAtMs: number;
  windows: ReadonlyArray<QuietWindow>;
}): number {
  const intervalMs = INTERVAL_MS[input.interval];
  const slot = nextSlot(input.checkedAtMs + intervalMs / 2, intervalMs, offsetOf(input.id, intervalMs));
  return avoidQuiet(slot, input.country, input.windows);
}

/**
 * When a check whose registry did not answer is tried again: exponential backoff with jitter (at
 * most six hours, never later than the next regular check would be), moved out of quiet windows.
 */
export function retryAt(input: {
  nowMs: number;
  failures: number;
  baseMs: number;
  interval: Interval;
  country: string;
  windows: ReadonlyArray<QuietWindow>;
  random: () => number;
}): number {
  const cap = Math.min(RETRY_CAP_MS, INTERVAL_MS[input.interval]);
  const base = Math.min(cap, input.baseMs * 2 ** Math.max(0, input.failures - 1));
  const delay = Math.max(1, Math.round(base * (0.5 + 0.5 * input.random())));
  return avoidQuiet(input.nowMs + delay, input.country, input.windows);
}
