/**
 * EORI numbers as people write them, read into the form the services check, with the local format
 * check that says when a number cannot be valid before any service is asked.
 *
 * Formats:
 * - EU member states: the country code and 1 to 15 letters and digits. That is the whole rule the
 *   Union sets ("a code unique in the Member State of up to 15 alphanumeric characters"); the
 *   national parts differ (a VAT number, a SIREN or SIRET, a customs number) and are not checked
 *   further here, so the service's answer is the only word on anything else.
 * - GB: `GB` and 12 to 15 digits, HMRC's own pattern `^GB[0-9]{12,15}$` (the Developer Hub page of
 *   hmrc/check-eori-number-api, public/api/conf/1.0/application.yaml): usually the 9-digit VAT
 *   registration number followed by `000`. HMRC refuses a whole request when one number does not
 *   match it, so no other number may be sent.
 * - XI: `XI` and 12 to 15 digits, the same digits as the trader's GB number (HMRC's
 *   `^(GB|XI)[0-9]{12,15}$` in EoriController.scala, and `XI[0-9]{12}|XI[0-9]{15}` in
 *   hmrc/check-eori-number-frontend, CheckEoriNumberController.scala).
 */
import { compactInput, isKnownCountryCode } from '../vat-numbers/index.js';
import {
  EORI_COUNTRY_ALIASES,
  type EoriService,
  EU_EORI_COUNTRIES,
  serviceForEoriCountry,
} from './countries.js';

/**
 * Why a number cannot be an EORI number.
 * - `country`: no two-letter country code at the start, or one no EORI number begins with.
 * - `characters`: a character the country's format does not allow (a letter in a GB or XI number).
 * - `length`: too few or too many characters after the country code.
 */
export type EoriFormatReason = 'country' | 'characters' | 'length';

export interface ParsedEori {
  ok: true;
  /** Canonical form: the country code and the identifier, upper case, no separators (`DE123456789012345`). */
  eori: string;
  /** `GR` for Greece (also when written `EL`), `XI`, `GB` (also when written `UK`). */
  country: string;
  /** The identifier after the country code. */
  national: string;
  /** Which service answers for it. */
  service: EoriService;
}

export interface EoriFormatFailure {
  ok: false;
  reason: EoriFormatReason;
  /** One sentence for the caller, naming what is wrong. */
  message: string;
  /** The country code when one was recognised, else `null`. */
  country: string | null;
}

export type EoriParseResult = ParsedEori | EoriFormatFailure;

/** The identifier after the country code, per service, as the services accept it. */
export const EORI_NATIONAL_PATTERNS: Readonly<Record<'EU' | 'GB' | 'XI', RegExp>> = Object.freeze({
  EU: /^[0-9A-Z]{1,15}$/,
  GB: /^[0-9]{12,15}$/,
  XI: /^[0-9]{12,15}$/,
});

const EU = new Set(EU_EORI_COUNTRIES);

function failure(reason: EoriFormatReason, message: string, country: string | null): EoriFormatFailure {
  return { ok: false, reason, message, country };
}

function isLetter(code: number): boolean {
  return code >= 65 && code <= 90;
}

/**
 * Reads an EORI number as people write it: any case; spaces (Unicode ones too), dots, dashes,
 * slashes, commas, underscores, colons, semicolons, brackets and quotes anywhere; full-width digits
 * and letters (the VAT numbers module's `compactInput`). `EL` is read as Greece's `GR`, `UK` as `GB`.
 * Never throws.
 */
export function parseEori(input: unknown): EoriParseResult {
  if (typeof input !== 'string') return failure('country', 'The EORI number must be a string.', null);
  const compact = compactInput(input);
  if (compact === null) {
    return failure('length', 'The input is far too long for an EORI number (at most 17 characters).', null);
  }
  if (compact.length === 0) return failure('country', 'The EORI number is empty.', null);
  if (!isLetter(compact.charCodeAt(0)) || !isLetter(compact.charCodeAt(1))) {
    return failure(
      'country',
      `An EORI number starts with a two-letter country code such as DE, XI or GB; "${compact}" does not.`,
      null,
    );
  }
  const written = compact.slice(0, 2);
  const country = EORI_COUNTRY_ALIASES[written] ?? written;
  const service = serviceForEoriCountry(country);
  if (service === null) {
    return failure(
      'country',
      isKnownCountryCode(written)
        ? `${written} does not issue EORI numbers: they are issued by the EU member states, for Northern Ireland (XI) and by the UK (GB).`
        : `"${written}" is not a country code; an EORI number starts with one such as DE, XI or GB.`,
      isKnownCountryCode(written) ? written : null,
    );
  }
  const national = compact.slice(2);
  const problem = EU.has(country) ? checkEu(country, national) : checkUk(country, national);
  if (problem) return problem;
  return { ok: true, eori: country + national, country, national, service };
}

/** Member states: 1 to 15 letters and digits. */
function checkEu(country: string, national: string): EoriFormatFailure | undefined {
  const bad = firstOutside(national, /[0-9A-Z]/);
  if (bad !== undefined) {
    return failure(
      'characters',
      `An EORI number has only letters and digits after the country code; "${bad}" is neither.`,
      country,
    );
  }
  if (national.length === 0) {
    return failure('length', `The EORI number has nothing after the country code ${country}.`, country);
  }
  if (national.length > 15) {
    return failure(
      'length',
      `An EORI number has at most 15 characters after the country code; this one has ${national.length}.`,
      country,
    );
  }
  return undefined;
}

/** GB and XI: 12 to 15 digits. */
function checkUk(country: string, national: string): EoriFormatFailure | undefined {
  const bad = firstOutside(national, /[0-9]/);
  if (bad !== undefined) {
    return failure(
      'characters',
      `A ${country} EORI number has only digits after ${country}; "${bad}" is not one.`,
      country,
    );
  }
  if (national.length < 12 || national.length > 15) {
    return failure(
      'length',
      `A ${country} EORI number has 12 to 15 digits after ${country} (usually the 9-digit VAT number and 000); this one has ${national.length}.`,
      country,
    );
  }
  return undefined;
}

function firstOutside(text: string, allowed: RegExp): string | undefined {
  for (const char of text) if (!allowed.test(char)) return char;
  return undefined;
}
