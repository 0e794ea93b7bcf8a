/**
 * What the VIES REST and SOAP clients share: the member-state prefixes and the mapping of VIES
 * error codes (REST `errorWrappers[].error`, `userError`, SOAP `faultstring`) to the port's reasons.
 */
import { unavailable } from './http.js';
import type { RegistryUnavailable, RegistryVatNumber, UnavailableReason } from './port.js';

/** The 27 member states as VIES spells them (Greece `EL`) and Northern Ireland `XI`. */
export const VIES_COUNTRIES: readonly string[] = Object.freeze([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'EL',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'XI',
]);

interface CodeInfo {
  reason: UnavailableReason;
  message: string;
}

/** Every VIES error code documented in the production and test WSDLs, plus legacy/third-party ones. */
export const VIES_ERROR_CODES: Readonly<Record<string, CodeInfo>> = Object.freeze({
  INVALID_INPUT: {
    reason: 'rejected',
    message: 'VIES rejected the input: the country code is invalid or the VAT number is empty',
  },
  INVALID_REQUESTER_INFO: {
    reason: 'rejected',
    message: "VIES rejected the requester's VAT number or country",
  },
  SERVICE_UNAVAILABLE: { reason: 'down', message: 'VIES is unavailable (network or application error)' },
  MS_UNAVAILABLE: { reason: 'down', message: "the member state's VAT registry is not replying to VIES" },
  TIMEOUT: { reason: 'timeout', message: "VIES received no reply from the member state's registry in time" },
  VAT_BLOCKED: { reason: 'rejected', message: 'VIES blocks look-ups of this VAT number' },
  IP_BLOCKED: { reason: 'rejected', message: "VIES blocks this server's IP address" },
  GLOBAL_MAX_CONCURRENT_REQ: {
    reason: 'throttled',
    message: 'VIES reached its maximum number of concurrent requests',
  },
  GLOBAL_MAX_CONCURRENT_REQ_TIME: {
    reason: 'throttled',
    message: 'VIES reached its maximum number of requests for the time window',
  },
  MS_MAX_CONCURRENT_REQ: {
    reason: 'throttled',
    message: 'VIES reached the maximum number of concurrent requests for this member state',
  },
  MS_MAX_CONCURRENT_REQ_TIME: {
    reason: 'throttled',
    message: 'VIES reached the maximum number of requests for this member state in the time window',
  },
  SERVER_BUSY: { reason: 'throttled', message: 'VIES is busy' },
  IO_ERROR: { reason: 'down', message: 'VIES reported an I/O error' },
  TECHNICAL_ERROR: { reason: 'down', message: 'VIES reported a technical error' },
});

/** Longest first, so `MS_MAX_CONCURRENT_REQ_TIME` is not read as `MS_MAX_CONCURRENT_REQ`. */
const CODES_BY_LENGTH = Object.keys(VIES_ERROR_CODES).sort((a, b) => b.length - a.length);

/** Finds a known VIES code inside a string such as a SOAP `faultstring` (`"MS_UNAVAILABLE"`, `"soap: MS_UNAVAILABLE"`). */
export function findViesCode(text: string): string | undefined {
  const upper = text.toUpperCase();
  for (const code of CODES_BY_LENGTH) {
    const at = upper.indexOf(code);
    if (at === -1) continue;
    const before = at === 0 ? '' : upper.charAt(at - 1);
    const after = upper.charAt(at + code.length);
    if (!/[A-Z0-9_]/.test(before) && !/[A-Z0-9_]/.test(after)) return code;
  }
  return undefined;
}

/** Maps one VIES error code (known or not) to the port's unavailable result. */
export function viesError(code: string, upstreamMessage?: string): RegistryUnavailable {
  const known = VIES_ERROR_CODES[code];
  const detail = upstreamMessage && upstreamMessage.trim() !== '' ? ` (${upstreamMessage.trim()})` : '';
  if (known) return unavailable('vies', known.reason, `${known.message}${detail}`, { upstreamCode: code });
  // An error envelope with a code we do not know: VIES did not answer the question; assume transient.
  return unavailable('vies', 'down', `VIES answered with error ${code}${detail}`, { upstreamCode: code });
}

/** VIES prefix for a country: Greece is `EL` in VIES even when the caller says `GR`. */
export function viesCountry(country: string): string {
  const upper = country.toUpperCase();
  return upper === 'GR' ? 'EL' : upper;
}

/** The national part as VIES expects it: no separators (the port already strips the prefix). */
export function viesNational(vat: RegistryVatNumber): string {
  return vat.national.replace(/[\s.\-/]/g, '').toUpperCase();
}

/** Whether the number in an answer is the one we asked for (ignoring case, separators and a repeated prefix). */
export function sameNumber(answered: unknown, country: string, asked: string): boolean {
  if (typeof answered !== 'string') return false;
  const normalised = answered.replace(/[\s.\-/]/g, '').toUpperCase();
  return normalised === asked || normalised === country + asked;
}
