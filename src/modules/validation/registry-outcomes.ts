/** What a registry's result means for the live path: worth a retry, and what it says of the registry's health. */

import type { RegistryResult, RegistryUnavailable } from '../../registries/port.js';
import { type CallOutcome, outcomeOfReason } from '../../registries/resilience.js';

/** Upstream codes of a passing condition: the same call may succeed moments later. */
const RETRYABLE_CODES = new Set([
  'MS_MAX_CONCURRENT_REQ',
  'MS_MAX_CONCURRENT_REQ_TIME',
  'GLOBAL_MAX_CONCURRENT_REQ',
  'GLOBAL_MAX_CONCURRENT_REQ_TIME',
  'TIMEOUT',
  'SERVICE_UNAVAILABLE',
]);

export function retryable(result: RegistryUnavailable): boolean {
  return (
    result.reason === 'throttled' ||
    (result.upstreamCode !== undefined && RETRYABLE_CODES.has(result.upstreamCode))
  );
}

/**
 * What a call's result says about the registry's health. An answer, throttling and a refusal of our
 * request all come from a registry that is up (they close a half-open breaker); down, timeout and
 * unreadable answers count as failures; `not_configured` made no call and teaches nothing.
 */
export function outcomeOf(result: RegistryResult): CallOutcome {
  return result.kind === 'answer' ? 'success' : outcomeOfReason(result.reason);
}
