// EORI numbers offline: the country codes and which service answers for them, normalisation and
// the local format check, and the planning of batches into upstream calls. Pure functions, no I/O.
export {
  EORI_NUMBERS_PER_CALL,
  type EoriBatchItem,
  type EoriBatchPlan,
  type EoriUpstreamCall,
  planEoriBatch,
} from './batch.js';
export {
  EORI_COUNTRIES,
  EORI_COUNTRY_ALIASES,
  type EoriService,
  EU_EORI_COUNTRIES,
  serviceForEoriCountry,
} from './countries.js';
export {
  EORI_NATIONAL_PATTERNS,
  type EoriFormatFailure,
  type EoriFormatReason,
  type EoriParseResult,
  type ParsedEori,
  parseEori,
} from './parse.js';
