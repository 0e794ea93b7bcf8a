// Offline VAT number handling: normalisation, formats and check digits for the EU member states,
// Northern Ireland (XI), the United Kingdom, Switzerland and Norway. Pure functions, no I/O.
export { isValidGermanVatDigits } from './countries/de.js';
export { getVatNumberRule, isSupportedPrefix, SUPPORTED_PREFIXES } from './country-formats.js';
export { isKnownCountryCode } from './iso-countries.js';
export { compactInput } from './normalise.js';
export { parseVatNumber } from './parse.js';
export type {
  ParsedVatNumber,
  ParseFailureReason,
  UnsupportedCountry,
  VatNumberRule,
  VatParseFailure,
  VatParseResult,
  VatPrefix,
} from './types.js';
