/** Port for time, so retention, expiry and scheduling can be tested with an injected clock. */
export interface Clock {
  now(): Date;
  /** The same instant as milliseconds since the epoch, without allocating a `Date`. */
  millis(): number;
}

export const systemClock: Clock = { now: () => new Date(), millis: Date.now };

/** A clock that only moves when told to. */
export function createManualClock(
  start: Date | string,
): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    millis: () => current,
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
