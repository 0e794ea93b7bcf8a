/**
 * The claim a request makes about the company (`company_name`, `company_street`,
 * `company_postcode`, `company_city`): read once, blanks left out, so every later step (the
 * registry call, the coalescing key, the comparison) sees the same fields.
 */
import { type ClaimedIdentity, IDENTITY_FIELDS, type IdentityField } from './types.js';

/** The request's parameter for each field. */
export const CLAIM_PARAMETERS: Readonly<Record<IdentityField, string>> = {
  name: 'company_name',
  street: 'company_street',
  postcode: 'company_postcode',
  city: 'company_city',
};

/** The longest value each parameter takes (longer is `400 invalid_request`). */
export const CLAIM_MAX_LENGTH: Readonly<Record<IdentityField, number>> = {
  name: 250,
  street: 250,
  postcode: 20,
  city: 100,
};

/**
 * The fields claimed, trimmed, from an object holding the request's parameters; `null` when none
 * is given (absent or blank), so a request without a claim stays exactly as before.
 */
export function claimOf(input: object): ClaimedIdentity | null {
  const claim: ClaimedIdentity = {};
  for (const field of IDENTITY_FIELDS) {
    const value = (input as Readonly<Record<string, unknown>>)[CLAIM_PARAMETERS[field]];
    if (typeof value === 'string' && value.trim() !== '') claim[field] = value.trim().replace(/\s+/g, ' ');
  }
  return Object.keys(claim).length > 0 ? claim : null;
}

/** One text for a claim, equal for equal claims (a coalescing and grouping key). */
export function claimKey(claim: ClaimedIdentity | null | undefined): string {
  if (!claim) return '';
  return JSON.stringify(IDENTITY_FIELDS.map((field) => claim[field] ?? null));
}
