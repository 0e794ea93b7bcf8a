/**
 * The Redis side every shared store uses: the commands they need (a port over ioredis), the options
 * they share, and a per-command time limit so a Redis that hangs falls back rather than wedging callers.
 */
/** The ioredis commands the shared stores use. */
export interface RedisLike {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  set(...args: Array<string | number>): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(...keys: string[]): Promise<number>;
  zcard(key: string): Promise<number>;
  smembers(key: string): Promise<string[]>;
}

/** Rejects when a Redis command takes longer than `ms` (a Redis that hangs must not wedge callers). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export interface SharedOptions {
  redis: RedisLike;
  /** Prefix of every key (`OPENVAT_REDIS_PREFIX`). */
  prefix: string;
  /** Called when Redis fails and the local store answers instead. */
  onDegraded: (error: unknown) => void;
  /** Per-command limit, so a hanging Redis falls back quickly (default 1 s). */
  commandTimeoutMs?: number;
}
