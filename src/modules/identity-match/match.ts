/**
 * The identity match: each field the customer gave compared with what the registry returned,
 * and `overall` combined from them. The match is information about the customer; it never
 * changes whether the VAT number is valid.
 *
 * A field's `result` is openvat's reading of the registered data (`score` against the field's
 * threshold). Where the registry returned nothing to compare (DE and ES answer `---`, a register
 * without the field), `score` is `null` and `result` follows the registry's own verdict when it
 * gave one (`match`/`mismatch`), else it is `unavailable`.
 */
import { compareCity, parseAddress } from './address.js';
import { compareNames } from './name.js';
import { normalisePostcode } from './postcodes.js';
import { roundScore } from './similarity.js';
import { compareStreetCandidates } from './street.js';
import { registeredText } from './text.js';
import {
  type ClaimedIdentity,
  type FieldMatch,
  IDENTITY_FIELDS,
  type IdentityField,
  type IdentityMatch,
  type RegisteredIdentity,
  type RegistryVerdict,
  type RegistryVerdicts,
} from './types.js';

/** How much each field weighs in `overall.score` (renormalised over the fields compared). */
export const FIELD_WEIGHTS: Readonly<Record<IdentityField, number>> = {
  name: 0.6,
  street: 0.2,
  postcode: 0.1,
  city: 0.1,
};

interface Registered {
  name: string | null;
  streetCandidates: string[];
  postcode: string | null;
  city: string | null;
}

/** The registered values to compare: structured fields first, else read out of the free text. */
function registeredValues(registered: RegisteredIdentity): Registered {
  const address = registeredText(registered.address);
  const parsed = address ? parseAddress(address, registered.country) : null;
  const structuredStreet = registeredText(registered.street);
  return {
    name: registeredText(registered.name),
    streetCandidates: structuredStreet ? [structuredStreet] : (parsed?.streetCandidates ?? []),
    postcode: registeredText(registered.postcode) ?? parsed?.postcode ?? null,
    city: registeredText(registered.city) ?? parsed?.city ?? null,
  };
}

/** Score and verdict of one field, or `null` when the registry returned nothing for it. */
function compareField(
  field: IdentityField,
  claimed: string,
  values: Registered,
): { score: number; match: boolean } | null {
  switch (field) {
    case 'name':
      return values.name ? compareNames(claimed, values.name) : null;
    case 'street':
      return values.streetCandidates.length > 0
        ? compareStreetCandidates(claimed, values.streetCandidates)
        : null;
    case 'postcode': {
      if (!values.postcode) return null;
      const same = normalisePostcode(claimed) === normalisePostcode(values.postcode);
      return { score: same ? 1 : 0, match: same };
    }
    case 'city':
      return values.city ? compareCity(claimed, values.city) : null;
  }
}

function fieldMatch(
  field: IdentityField,
  claimed: string,
  values: Registered,
  verdict: RegistryVerdict | undefined,
): FieldMatch {
  const registryResult = verdict ?? null;
  const compared = compareField(field, claimed, values);
  if (compared) {
    return {
      result: compared.match ? 'match' : 'mismatch',
      score: compared.score,
      registry_result: registryResult,
    };
  }
  const result = verdict === 'match' ? 'match' : verdict === 'mismatch' ? 'mismatch' : 'unavailable';
  return { result, score: null, registry_result: registryResult };
}

/**
 * `overall`: `mismatch` when any field is; `match` when none is and the name matched (or, the name
 * not asked, at least one field matched); else `unavailable`. Its score is the weighted mean of the
 * fields compared; its registry verdict combines the registry's verdicts by the same rule.
 */
function combine(fields: Partial<Record<IdentityField, FieldMatch>>): FieldMatch {
  const asked = IDENTITY_FIELDS.filter((field) => fields[field] !== undefined);
  const entries = asked.map((field) => [field, fields[field] as FieldMatch] as const);
  const decide = <T extends string>(values: T[], nameValue: T | undefined, match: T, mismatch: T) => {
    if (values.includes(mismatch)) return mismatch;
    if (nameValue !== undefined ? nameValue === match : values.includes(match)) return match;
    return undefined;
  };
  const result =
    decide(
      entries.map(([, f]) => f.result),
      fields.name?.result,
      'match',
      'mismatch',
    ) ?? 'unavailable';
  const verdicts = entries.flatMap(([, f]) => (f.registry_result ? [f.registry_result] : []));
  const registryResult =
    verdicts.length === 0
      ? null
      : (decide(
          verdicts,
          fields.name ? (fields.name.registry_result ?? undefined) : undefined,
          'match',
          'mismatch',
        ) ?? 'not_processed');
  const scored = entries.filter(([, f]) => f.score !== null);
  const weight = scored.reduce((sum, [field]) => sum + FIELD_WEIGHTS[field], 0);
  const score =
    scored.length === 0
      ? null
      : roundScore(
          scored.reduce((sum, [field, f]) => sum + FIELD_WEIGHTS[field] * (f.score ?? 0), 0) / weight,
        );
  return { result, score, registry_result: registryResult };
}

/**
 * Compares what a customer claims with what a registry returned. Returns `null` when the customer
 * asked for no field (every field absent or blank).
 */
export function matchIdentity(
  claimed: ClaimedIdentity,
  registered: RegisteredIdentity,
  verdicts: RegistryVerdicts = {},
): IdentityMatch | null {
  const values = registeredValues(registered);
  const fields: Partial<Record<IdentityField, FieldMatch>> = {};
  for (const field of IDENTITY_FIELDS) {
    const value = claimed[field];
    if (typeof value !== 'string' || value.trim() === '') continue;
    fields[field] = fieldMatch(field, value, values, verdicts[field]);
  }
  if (Object.keys(fields).length === 0) return null;
  return { overall: combine(fields), ...fields };
}
