import { canonicalPrefixOf, findRuleByCodes } from './country-formats.js';
import { isKnownCountryCode } from './iso-countries.js';
import { compactInput, MAX_INPUT_LENGTH } from './normalise.js';
import type { VatParseFailure, VatParseResult } from './types.js';

function countryFailure(message: string): VatParseFailure {
  return { ok: false, reason: 'country', message, country: null };
}

/**
 * Parses a VAT number as people write it: any case; spaces (including non-breaking and other
 * Unicode spaces), dots, dashes, slashes, commas, underscores, colons, semicolons, brackets and
 * quotes anywhere; full-width digits and letters. `GR` is read as `EL` and `UK` as `GB`. Swiss
 * numbers may be written `CHE-123.456.789 MWST` (or TVA, IVA, TPV, or no suffix), Norwegian ones
 * `NO 123 456 789 MVA`. Never throws.
 *
 * Canonical forms (`normalised`): the VAT prefix followed by the national part without
 * separators, upper case — `ATU13585627`, `BE0428759497` (9-digit Belgian numbers get their
 * leading 0), `EL094501040` (8-digit Greek numbers get a leading 0), `NL002455799B11` (digit runs
 * shorter than 9 padded with zeros), `GB980780684`, `GBGD100`, `XI980780684`, `CHE116281710`
 * (no VAT suffix), `NO965920358` (no MVA).
 */
export function parseVatNumber(input: string): VatParseResult {
  if (typeof input !== 'string') return countryFailure('The VAT number must be a string.');
  const compact = compactInput(input);
  if (compact === null) {
    return {
      ok: false,
      reason: 'length',
      message: `A VAT number has at most ${MAX_INPUT_LENGTH} characters; the input is longer.`,
      country: null,
    };
  }
  if (compact.length === 0) return countryFailure('The VAT number is empty.');
  const c0 = compact.charCodeAt(0);
  const c1 = compact.charCodeAt(1);
  if (!(c0 >= 65 && c0 <= 90) || !(c1 >= 65 && c1 <= 90)) {
    return countryFailure(
      `A VAT number starts with a two-letter country prefix such as DE or FR; "${compact}" does not.`,
    );
  }
  const rule = findRuleByCodes(c0, c1);
  if (rule === undefined) {
    const code = compact.slice(0, 2);
    if (isKnownCountryCode(code)) {
      return {
        ok: false,
        reason: 'unsupported_country',
        message: `VAT numbers of country ${code} are not supported.`,
        country: code,
      };
    }
    return countryFailure(
      `"${code}" is not a country prefix; a VAT number starts with one such as DE or FR.`,
    );
  }
  const prefix = rule.prefix;
  const result = rule.validate(compact.slice(2), prefix);
  if (typeof result !== 'string') {
    return { ok: false, reason: result.reason, message: result.message, country: prefix };
  }
  return {
    ok: true,
    country: prefix,
    isoCountry: rule.isoCountry,
    national: result,
    normalised: canonicalPrefixOf(prefix) + result,
  };
}
