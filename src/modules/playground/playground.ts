import { bearerToken } from '../../lib/bearer.js';
import type { Clock } from '../../lib/clock.js';
import {
  createRedisWindowLimiter,
  createWindowLimiter,
  localSharedLimiter,
  type RedisCounter,
} from '../../lib/window-limiter.js';
import { type Operation, PLAYGROUND_PRINCIPAL, type Playground } from '../keys/index.js';

export type { Playground, PlaygroundBudget } from '../keys/index.js';
export { PLAYGROUND_PRINCIPAL } from '../keys/index.js';

/**
 * The playground's demo key. `/docs` hands it to every visitor, so it is public by design: it is a
 * test-mode key (magic numbers, no registry calls, no webhooks), its requests belong to a tenant of
 * their own, and each IP address may make 30 requests an hour with it.
 */
export const PLAYGROUND_KEY = 'svc_test_PlaygroundDemoKey000000000000000';

/** Requests per hour per IP address made with the demo key (spec: limits). */
export const PLAYGROUND_LIMIT_PER_HOUR = 30;

/** Numbers a batch job of the demo key may hold (a key of one's own: 10,000). */
export const PLAYGROUND_JOB_LIMIT = 100;

/** Monitors of the demo key each IP address may keep (they last 24 hours): every visitor shares the key. */
export const PLAYGROUND_MONITOR_LIMIT = 100;

/**
 * How long what the demo key stores (audit records, confirmations, monitors, batch jobs) is served,
 * counted from its creation: every visitor shares it. Its monitors and batch jobs are then purged.
 */
export const PLAYGROUND_RETENTION_MS = 86_400_000;

/**
 * Operations the demo key may not use even though its plan has them: webhook endpoints would be
 * shared by every visitor, and their test call would let anyone make this server POST to any URL;
 * a usage report of a key every visitor shares would describe no one.
 */
const EXCLUDED: ReadonlySet<Operation> = new Set(['webhooks', 'usage']);

/** What the API reference says about the playground it is signed in with. */
export function playgroundIntro(): string {
  return `**Playground.** This page is signed in with the demo key \`${PLAYGROUND_KEY}\`, so *Test Request*
works at once. It is a test-mode key (deterministic answers for the magic numbers listed under
\`GET /v1/validate\`, no registry calls), shared by every visitor, limited to ${PLAYGROUND_LIMIT_PER_HOUR} requests per
hour per IP address (rates requests that carry it included); it cannot manage webhooks or read a usage report, its
batch jobs hold at most ${PLAYGROUND_JOB_LIMIT} numbers, and each IP address may keep ${PLAYGROUND_MONITOR_LIMIT} of its monitors. What it creates (audit records, confirmations, monitors, batch jobs) is seen by every
visitor and served for 24 hours only; its monitors and batch jobs are then deleted. Enter a key of your own under **Authentication** to replace it.`;
}

/**
 * The playground when it is enabled, else `null` (the demo key is then an unknown key: 401). With
 * Redis, every instance counts against one budget per IP address; without it, each counts its own.
 */
export function createPlayground(options: {
  enabled: boolean;
  clock: Clock;
  redis?: RedisCounter | null;
  /** Prefix of the Redis keys (`OPENVAT_REDIS_PREFIX`). */
  redisPrefix?: string;
  onError?: (error: unknown) => void;
}): Playground | null {
  if (!options.enabled) return null;
  const window = { max: PLAYGROUND_LIMIT_PER_HOUR, windowMs: 3_600_000, clock: options.clock };
  const limiter = options.redis
    ? createRedisWindowLimiter({
        ...window,
        redis: options.redis,
        prefix: `${options.redisPrefix ?? 'openvat:'}playground:`,
        ...(options.onError ? { onError: options.onError } : {}),
      })
    : localSharedLimiter(createWindowLimiter(window));
  return {
    principalFor: (presented) => (presented === PLAYGROUND_KEY ? PLAYGROUND_PRINCIPAL : null),
    // Read as requireKey reads it.
    isPlaygroundHeader: (authorization) => bearerToken(authorization) === PLAYGROUND_KEY,
    allows: (operation) => !EXCLUDED.has(operation),
    take: async (ip) => {
      const { count, resetSeconds } = await limiter.hit(ip);
      return {
        limit: limiter.max,
        remaining: Math.max(0, limiter.max - count),
        resetSeconds,
        wait: count > limiter.max ? resetSeconds : 0,
      };
    },
  };
}
