/** Port for time, so retention, expiry and scheduling can be tested with an injected clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to. */
export function createManualClock(
  start: Date | string,
): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set(at) {
      current = new Date(at).getTime();
    },
    advance(ms) {
      current += ms;
    },
  };
}

/** `YYYY-MM-DD` of a date in UTC. */
export function isoDate(at: Date): string {
  return at.toISOString().slice(0, 10);
}
