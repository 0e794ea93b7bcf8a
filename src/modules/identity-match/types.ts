/** The fields a customer's identity is checked on. */
export const IDENTITY_FIELDS = ['name', 'street', 'postcode', 'city'] as const;

export type IdentityField = (typeof IDENTITY_FIELDS)[number];

/** What the customer claims (`company_name`, `company_street`, …): any subset; blank is not asked. */
export type ClaimedIdentity = Partial<Record<IdentityField, string | null>>;

/**
 * What the registry returned. `address` is free text (VIES: lines separated by `\n`); `street`,
 * `postcode` and `city` are the structured fields of a register that has them and take precedence
 * over what is read out of `address`. `null`, empty or `---` is "returned nothing".
 */
export interface RegisteredIdentity {
  name?: string | null;
  address?: string | null;
  street?: string | null;
  postcode?: string | null;
  city?: string | null;
  /** The registry's country (VAT prefix, Greece `EL`): how to find the postcode in `address`. */
  country?: string;
}

/** The registry's own verdict on a field (VIES `trader*Match`: VALID, INVALID, NOT_PROCESSED). */
export type RegistryVerdict = 'match' | 'mismatch' | 'not_processed';

export type RegistryVerdicts = Partial<Record<IdentityField, RegistryVerdict>>;

export type MatchResult = 'match' | 'mismatch' | 'unavailable';

export interface FieldMatch {
  result: MatchResult;
  /** openvat's similarity, 0 to 1; `null` when the registry returned nothing to compare. */
  score: number | null;
  /** The registry's own verdict, `null` when it gave none. */
  registry_result: RegistryVerdict | null;
}

/** The answer: `overall` and one entry per field asked (a field not asked is absent). */
export interface IdentityMatch {
  overall: FieldMatch;
  name?: FieldMatch;
  street?: FieldMatch;
  postcode?: FieldMatch;
  city?: FieldMatch;
}
