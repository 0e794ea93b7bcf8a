import { claimOf } from '../identity-match/index.js';
import type { LiveAnswers } from './live.js';
import type { ValidationService } from './service.js';

/** The query of `GET /v1/validate` as far as the cache is concerned. */
export interface ValidateQuery {
  vat_number?: string;
  requester_vat_number?: string;
  cache?: string;
  company_name?: string;
  company_street?: string;
  company_postcode?: string;
  company_city?: string;
}

/**
 * Whether `GET /v1/validate` with this query, by a live key, would be answered from the cache: a
 * well-formed number without a requester (a requester always asks the registry), `cache` not
 * `false`, and a stored answer within its TTL (with company fields, one holding a registered name or
 * address to compare them with). (Test keys answer from their table: never cached.)
 */
export function createCachedAnswerCheck(deps: {
  validation: Pick<ValidationService, 'parse'>;
  liveAnswers: Pick<LiveAnswers, 'hasFresh'>;
}) {
  return async function wouldBeCached(query: ValidateQuery, mode: 'live' | 'test'): Promise<boolean> {
    if (mode !== 'live' || !query.vat_number || query.requester_vat_number || query.cache === 'false')
      return false;
    const parsed = deps.validation.parse(query.vat_number, 'vat_number');
    return parsed.kind === 'ok' && deps.liveAnswers.hasFresh(parsed.vat.normalised, claimOf(query) !== null);
  };
}
