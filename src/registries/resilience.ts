/**
 * Generic resilience primitives used around every registry: a keyed concurrency limiter, a keyed
 * circuit breaker and request coalescing. No domain knowledge here.
 */

/** A FIFO semaphore per key (e.g. `vies:DE`), so each registry and member state stays under its limit. */
export function createKeyedLimiter(limitFor: (key: string) => number) {
  const state = new Map<string, { active: number; queue: Array<() => void> }>();

  function slot(key: string) {
    let s = state.get(key);
    if (!s) {
      s = { active: 0, queue: [] };
      state.set(key, s);
    }
    return s;
  }

  function release(key: string) {
    const s = slot(key);
    const next = s.queue.shift();
    if (next) next();
    else s.active -= 1;
  }

  return {
    /** Runs `task` once a slot for `key` is free; rejects with the signal's reason if aborted while queued. */
    async run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      const s = slot(key);
      if (s.active < limitFor(key)) {
        s.active += 1;
      } else {
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            const i = s.queue.indexOf(go);
            if (i >= 0) s.queue.splice(i, 1);
            reject(signal?.reason ?? new Error('aborted'));
          };
          const go = () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          };
          if (signal?.aborted) return onAbort();
          signal?.addEventListener('abort', onAbort, { once: true });
          s.queue.push(go);
        });
      }
      try {
        return await task();
      } finally {
        release(key);
      }
    },
    /** Calls running and waiting per key, for tests and metrics. */
    snapshot(): Record<string, { active: number; queued: number }> {
      const out: Record<string, { active: number; queued: number }> = {};
      for (const [k, s] of state) out[k] = { active: s.active, queued: s.queue.length };
      return out;
    },
  };
}

export type KeyedLimiter = ReturnType<typeof createKeyedLimiter>;

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  failureThreshold: number;
  /** How long it stays open before one trial call is let through. */
  openMs: number;
  now: () => number;
}

/** A circuit breaker per key: closed → open after repeated failures (or when told) → half-open trial. */
export function createKeyedBreaker(options: BreakerOptions) {
  const state = new Map<string, { failures: number; openUntil: number; trial: boolean }>();
  const get = (key: string) => {
    let s = state.get(key);
    if (!s) {
      s = { failures: 0, openUntil: 0, trial: false };
      state.set(key, s);
    }
    return s;
  };
  return {
    /** Whether a call may go out now; when open, how many seconds until the next trial. */
    check(key: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
      const s = get(key);
      const now = options.now();
      if (s.openUntil === 0) return { allowed: true };
      if (now < s.openUntil)
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((s.openUntil - now) / 1000)) };
      if (s.trial) return { allowed: false, retryAfterSeconds: 1 };
      s.trial = true;
      return { allowed: true };
    },
    success(key: string) {
      const s = get(key);
      s.failures = 0;
      s.openUntil = 0;
      s.trial = false;
    },
    failure(key: string) {
      const s = get(key);
      s.failures += 1;
      if (s.trial || s.failures >= options.failureThreshold) {
        s.openUntil = options.now() + options.openMs;
        s.trial = false;
      }
    },
    /** Opens the breaker from outside (a status endpoint says the service is down). */
    open(key: string, ms = options.openMs) {
      const s = get(key);
      s.openUntil = Math.max(s.openUntil, options.now() + ms);
      s.trial = false;
    },
    isOpen(key: string): boolean {
      const s = get(key);
      return s.openUntil !== 0 && options.now() < s.openUntil;
    },
  };
}

export type KeyedBreaker = ReturnType<typeof createKeyedBreaker>;

/** Concurrent calls with the same key share one promise. */
export function createCoalescer() {
  const inFlight = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const existing = inFlight.get(key);
      if (existing) return existing as Promise<T>;
      const promise = task().finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
      return promise;
    },
    get size() {
      return inFlight.size;
    },
  };
}

/** Full-jitter exponential backoff: a random delay in [0, min(cap, base·2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** attempt));
}
