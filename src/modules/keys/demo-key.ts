import { rateLimitHeaders } from '../../lib/window-limiter.js';
import type { Operation } from './plans.js';
import type { ApiKeyPrincipal } from './principal.js';

/**
 * The playground's demo key as keys know it: its principal (work stored on its behalf stays its own,
 * and it is always active) and the rules `requireKey` applies to it, which the playground module
 * provides (`createPlayground`) and the container hands to `createAuth`.
 */
export const PLAYGROUND_PRINCIPAL: Readonly<ApiKeyPrincipal> = Object.freeze({
  id: '00000000-0000-7000-8000-000000000001',
  accountId: '00000000-0000-7000-8000-000000000002',
  plan: 'business',
  mode: 'test',
  defaultRequesterVat: null,
  playground: true,
});

/** The demo key's rules, as `requireKey` applies them; `null` where the playground is off. */
export interface Playground {
  /** The demo key's principal when `presented` is the demo key, else `null`. */
  principalFor(presented: string): ApiKeyPrincipal | null;
  /** Whether a request carrying this `Authorization` header value is a playground request. */
  isPlaygroundHeader(authorization: string | undefined): boolean;
  /** Whether the demo key may use an operation. */
  allows(operation: Operation): boolean;
  /** Counts one playground request from `ip` against its hourly budget. */
  take(ip: string): Promise<PlaygroundBudget>;
}

/** An address's hourly budget with the demo key, as one request counted against it leaves it. */
export interface PlaygroundBudget {
  /** Requests per hour per IP address. */
  readonly limit: number;
  /** Requests left in this hour (0 once spent). */
  readonly remaining: number;
  /** Seconds until the hour ends and the budget is whole again. */
  readonly resetSeconds: number;
  /** 0 within the budget, else the seconds to wait (`resetSeconds`): the 429's `Retry-After`. */
  readonly wait: number;
}

/**
 * The `x-ratelimit-*` headers of an answer to the demo key, as a key's own limit sends them
 * (modules/keys/key-limit.ts), describing the address's hourly budget.
 */
export function playgroundBudgetHeaders(budget: PlaygroundBudget): Record<string, string> {
  return rateLimitHeaders(budget.limit, budget.remaining, budget.resetSeconds);
}
