// The identity match: whether the company in front of you is the one a VAT number is registered to.
// Pure functions, no I/O: what the customer claims against what a registry returned, field by field.

export type { AddressParts } from './address.js';
export { CITY_MATCH_THRESHOLD, parseAddress } from './address.js';
export { CLAIM_MAX_LENGTH, CLAIM_PARAMETERS, claimKey, claimOf } from './claim.js';
export { EQUIVALENT_FORMS, LEGAL_FORMS, splitLegalForm } from './legal-forms.js';
export { FIELD_WEIGHTS, matchIdentity } from './match.js';
export { compareNames, NAME_MATCH_THRESHOLD, normaliseName, WORD_PAIR_FLOOR } from './name.js';
export { normalisePostcode, POSTCODE_FORMATS } from './postcodes.js';
export { compareStreet, normaliseStreet, STREET_MATCH_THRESHOLD, STREET_TYPES } from './street.js';
export { fold } from './text.js';
export type {
  ClaimedIdentity,
  FieldMatch,
  IdentityField,
  IdentityMatch,
  MatchResult,
  RegisteredIdentity,
  RegistryVerdict,
  RegistryVerdicts,
} from './types.js';
export { IDENTITY_FIELDS } from './types.js';
export { verdictsFromTraderMatch } from './verdicts.js';
