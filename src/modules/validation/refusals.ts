import { type Refusal, refusal } from '../../lib/refusal.js';
import type { ValidationOutcome } from './types.js';

/**
 * The refusal of a validation outcome that is not a success: the one rule for validate, decide (with
 * `field`, the body field the number came from) and a batch's requester.
 */
export function validationRefusal(
  outcome: Exclude<ValidationOutcome, { kind: 'ok' }>,
  field?: 'seller_vat' | 'buyer_vat' | 'requester_vat_number',
): Refusal {
  const message =
    field && !outcome.message.startsWith(`${field}:`) ? `${field}: ${outcome.message}` : outcome.message;
  const where = field ? { field } : {};
  switch (outcome.kind) {
    case 'invalid_format':
      return refusal('invalid_format', message, { reason: outcome.reason, ...where });
    case 'country_unsupported':
      return refusal('country_unsupported', message, { country: outcome.country, ...where });
    case 'requester_rejected':
      return refusal('invalid_format', message, {
        reason: 'requester',
        field: 'requester_vat_number',
        source: outcome.source,
      });
    case 'unavailable':
      return refusal(
        'registry_unavailable',
        message,
        { ...where, source: outcome.source, retry_after_seconds: outcome.retryAfterSeconds },
        outcome.retryAfterSeconds,
      );
    case 'rate_limited':
      return refusal(
        'rate_limited',
        message,
        { ...where, retry_after_seconds: outcome.retryAfterSeconds },
        outcome.retryAfterSeconds,
      );
  }
}
