import type { Refusal } from '../../lib/refusal.js';
import type { AnswerOutcome } from './answers.js';
import type { ValidationOutcome, ValidationRefusal, ValidationRefusalReason } from './types.js';

function refused(
  reason: ValidationRefusalReason,
  message: string,
  details: Record<string, unknown>,
  retryAfterSeconds?: number,
): ValidationRefusal {
  return {
    kind: 'refused',
    reason,
    message,
    details,
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  };
}

/** Not a possible VAT number: why (`country`, `characters`, `length`, `checksum`). */
export function invalidFormat(reason: string, message: string): ValidationRefusal {
  return refused('invalid_format', message, { reason });
}

/** A country this service cannot validate. */
export function countryUnsupported(country: string, message: string): ValidationRefusal {
  return refused('country_unsupported', message, { country });
}

/** The refusal of an answer source's outcome that is not an answer. */
export function answerRefusal(outcome: Exclude<AnswerOutcome, { kind: 'answer' }>): ValidationRefusal {
  switch (outcome.kind) {
    case 'requester_rejected':
      return refused('invalid_format', outcome.message, {
        reason: 'requester',
        field: 'requester_vat_number',
        source: outcome.source,
      });
    case 'unavailable':
      return refused(
        'registry_unavailable',
        outcome.message,
        { source: outcome.source, retry_after_seconds: outcome.retryAfterSeconds },
        outcome.retryAfterSeconds,
      );
    case 'rate_limited':
      return refused(
        'rate_limited',
        outcome.message,
        { retry_after_seconds: outcome.retryAfterSeconds },
        outcome.retryAfterSeconds,
      );
  }
}

/**
 * A validation refusal as the caller answers it: the one rule for validate, decide (with `field`, the
 * body field the number came from: it prefixes the message and is named in `details.field` unless
 * the refusal names its own) and a batch's requester.
 */
export function validationRefusal(
  refusal: ValidationRefusal,
  field?: 'seller_vat' | 'buyer_vat' | 'requester_vat_number',
): Refusal {
  if (!field) return refusal;
  const message = refusal.message.startsWith(`${field}:`) ? refusal.message : `${field}: ${refusal.message}`;
  const details = refusal.details?.field ? refusal.details : { ...refusal.details, field };
  return { ...refusal, message, details };
}

/** Whether the refusal is an unavailable registry (worth a retry later). */
export function registryUnavailable(outcome: ValidationOutcome): outcome is ValidationRefusal {
  return outcome.kind === 'refused' && outcome.reason === 'registry_unavailable';
}
