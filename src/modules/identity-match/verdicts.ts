/**
 * The registries' own verdicts in the identity match's words. VIES answers each `trader*Match`
 * with `VALID`, `INVALID` or `NOT_PROCESSED` (REST swagger `Status`; SOAP `matchCode` 1, 2, 3,
 * which the registry clients already read as those words).
 */
import type { IdentityField, RegistryVerdict, RegistryVerdicts } from './types.js';

const WORDS: Readonly<Record<string, RegistryVerdict>> = {
  VALID: 'match',
  INVALID: 'mismatch',
  NOT_PROCESSED: 'not_processed',
};

/** `{ name: 'VALID', city: 'INVALID' }` (a registry answer's trader match) → `{ name: 'match', city: 'mismatch' }`. */
export function verdictsFromTraderMatch(
  traderMatch: Partial<Record<IdentityField, string>> | undefined,
): RegistryVerdicts {
  const verdicts: RegistryVerdicts = {};
  for (const [field, code] of Object.entries(traderMatch ?? {}) as [IdentityField, string][]) {
    const verdict = WORDS[code];
    if (verdict) verdicts[field] = verdict;
  }
  return verdicts;
}
