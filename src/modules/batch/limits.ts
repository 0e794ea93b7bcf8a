import { type Refusal, refusal } from '../../lib/refusal.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { PLAYGROUND_JOB_LIMIT } from '../playground/index.js';
import type { ValidationService } from '../validation/index.js';
import { validationRefusal } from '../validation/index.js';

/** When a key at its plan's number of unfinished jobs may try again (sent as `Retry-After`). */
export const JOB_LIMIT_RETRY_AFTER_SECONDS = 30;

/**
 * The refusal of a new job for a key that already has `limit` unfinished (queued or running) jobs:
 * the jobs of every key are worked in turns, and a key's unfinished jobs are bounded so that what one
 * key queues stays a bounded amount of stored work.
 */
export function tooManyJobs(limit: number, unfinished: number): Refusal {
  return refusal(
    'rate_limited',
    `This API key already has ${unfinished} unfinished batch jobs, the most its plan allows at a time (${limit}); queue this one when one of them has completed (GET /v1/validate/batch/{id} shows their progress).`,
    { limit, unfinished, retry_after_seconds: JOB_LIMIT_RETRY_AFTER_SECONDS },
    JOB_LIMIT_RETRY_AFTER_SECONDS,
  );
}

/** Most numbers in one synchronous batch, and in one batch job. */
export const SYNC_BATCH_LIMIT = 100;
export const ASYNC_BATCH_LIMIT = 10_000;

function tooLarge(limit: number, got: number, asynchronous: boolean, playground: boolean): Refusal {
  const message = !asynchronous
    ? `A synchronous batch takes at most ${limit} VAT numbers (got ${got.toLocaleString('en')}); send up to ${ASYNC_BATCH_LIMIT.toLocaleString('en')} with "async": true and poll GET /v1/validate/batch/{id}.`
    : playground
      ? `A batch job of the playground's demo key takes at most ${limit} VAT numbers (got ${got.toLocaleString('en')}); a key of your own takes ${ASYNC_BATCH_LIMIT.toLocaleString('en')}.`
      : `A batch job takes at most ${limit.toLocaleString('en')} VAT numbers (got ${got.toLocaleString('en')}); split the list into several jobs.`;
  return refusal('batch_too_large', message, { max: limit, got });
}

/**
 * Whether a batch request may be worked (`ok`), or its refusal before any work: too many numbers, or
 * a malformed requester (which would fail every item, so it fails the whole call).
 */
export function checkBatchRequest(
  validation: Pick<ValidationService, 'parse'>,
  input: { principal: ApiKeyPrincipal; count: number; asynchronous: boolean; requester: string | null },
): { kind: 'ok' } | Refusal {
  // The playground's public demo key may try jobs, but not store 10,000 items at a time.
  const playground = input.principal.playground === true;
  const limit = !input.asynchronous
    ? SYNC_BATCH_LIMIT
    : playground
      ? PLAYGROUND_JOB_LIMIT
      : ASYNC_BATCH_LIMIT;
  if (input.count > limit) return tooLarge(limit, input.count, input.asynchronous, playground);
  if (!input.requester) return { kind: 'ok' };
  const parsed = validation.parse(input.requester, 'requester_vat_number');
  return parsed.kind === 'ok' ? { kind: 'ok' } : validationRefusal(parsed);
}
