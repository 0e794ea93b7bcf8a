/** VAT prefixes this module validates offline (EU member states with EL for Greece, XI, GB, CH, NO). */
export type VatPrefix =
  | 'AT'
  | 'BE'
  | 'BG'
  | 'CY'
  | 'CZ'
  | 'DE'
  | 'DK'
  | 'EE'
  | 'EL'
  | 'ES'
  | 'FI'
  | 'FR'
  | 'HR'
  | 'HU'
  | 'IE'
  | 'IT'
  | 'LT'
  | 'LU'
  | 'LV'
  | 'MT'
  | 'NL'
  | 'PL'
  | 'PT'
  | 'RO'
  | 'SE'
  | 'SI'
  | 'SK'
  | 'XI'
  | 'GB'
  | 'CH'
  | 'NO';

/**
 * Why a number was rejected before any registry was asked.
 * - `country`: no recognisable two-letter prefix.
 * - `characters`: a character the country's format does not allow (including a character class the
 *   format fixes at one position, such as the `B` of Dutch numbers or the 3rd digit of Slovak ones).
 * - `length`: the national part has a length no format of the country has.
 * - `checksum`: the format is right but a check digit (or an embedded birth date) is wrong.
 */
export type ParseFailureReason = 'country' | 'characters' | 'length' | 'checksum';

export type ParsedVatNumber = {
  ok: true;
  /** VAT prefix (EL for Greece). */
  country: VatPrefix;
  /** ISO 3166-1 alpha-2, upper case: GR for EL; XI stays XI. */
  isoCountry: string;
  /** National part without separators, upper case. */
  national: string;
  /** Canonical form with prefix, e.g. `DE123456789`, `CHE123456789`, `NO123456789`. */
  normalised: string;
};

export type VatParseFailure = {
  ok: false;
  reason: ParseFailureReason;
  message: string;
  /** The VAT prefix when one was recognised, else null. */
  country: string | null;
};

export type UnsupportedCountry = {
  ok: false;
  reason: 'unsupported_country';
  message: string;
  /** The two-letter country code found at the start of the input. */
  country: string;
};

export type VatParseResult = ParsedVatNumber | VatParseFailure | UnsupportedCountry;

/** Failure of a country validator; the parser adds `ok: false` and the country. */
export type CheckFailure = {
  readonly reason: 'characters' | 'length' | 'checksum';
  readonly message: string;
};

/** A country validator returns the canonical national part on success, or a failure. */
export type CheckResult = string | CheckFailure;

export type CountryValidator = (national: string, prefix: VatPrefix) => CheckResult;

export type VatNumberRule = {
  readonly prefix: VatPrefix;
  readonly isoCountry: string;
  /** Regular expressions (source text) for the canonical national part, one per format. */
  readonly formats: readonly string[];
  /** Regular expression (source text) for the whole canonical number, prefix included. */
  readonly regex: string;
  readonly formatDescription: string;
  /** A real, valid number in canonical form. */
  readonly example: string;
  readonly validate: CountryValidator;
};
