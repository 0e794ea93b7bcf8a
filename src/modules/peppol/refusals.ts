import { type Refusal, refusal } from '../../lib/refusal.js';
import type { PeppolOutcome } from './types.js';

/** The refusal of a Peppol look-up that is not a success. */
export function peppolRefusal(outcome: Exclude<PeppolOutcome, { kind: 'ok' }>): Refusal {
  switch (outcome.kind) {
    case 'invalid_format':
      return refusal('invalid_format', outcome.message, { reason: outcome.reason, field: 'identifier' });
    case 'country_unsupported':
      return refusal('country_unsupported', outcome.message, { country: outcome.country });
    case 'unavailable':
      return refusal(
        'registry_unavailable',
        outcome.message,
        { source: 'peppol', retry_after_seconds: outcome.retryAfterSeconds },
        outcome.retryAfterSeconds,
      );
  }
}
