/**
 * Which country codes begin an EORI number and which service answers for each.
 *
 * An EORI number is the code of the issuing country followed by an identifier unique in it: in the
 * Union the ISO 3166-1 alpha-2 code of the member state (so Greece is `GR`, not the VAT prefix
 * `EL`) and up to 15 letters and digits; since 2021 `XI` for traders in Northern Ireland, issued by
 * HMRC but checked by the Commission; and `GB` for the rest of the United Kingdom.
 *
 * - EU member states and XI: the Commission's EOS validation service. HMRC's own API refuses XI
 *   numbers ("To check an EORI number that starts with XI, use the EORI checker service on the
 *   European Commission website", hmrc/check-eori-number-api,
 *   app/uk/gov/hmrc/checkeorinumberapi/controllers/EoriController.scala).
 * - GB: HMRC's "Check an EORI number" API.
 */

/** The 27 member states by the ISO codes EORI numbers carry (Greece `GR`). */
export const EU_EORI_COUNTRIES: readonly string[] = Object.freeze([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
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
]);

/** Every code an EORI number may begin with: the member states, `XI` and `GB`. */
export const EORI_COUNTRIES: readonly string[] = Object.freeze([...EU_EORI_COUNTRIES, 'XI', 'GB']);

/**
 * Codes people write that mean one of the above: `EL` (the Greek VAT prefix, often copied from a
 * VAT number) is Greece's `GR`; `UK` is `GB`, as the VAT numbers module reads it.
 */
export const EORI_COUNTRY_ALIASES: Readonly<Record<string, string>> = Object.freeze({ EL: 'GR', UK: 'GB' });

/** The service that answers for an EORI number: the Commission's EOS, or HMRC. */
export type EoriService = 'eos' | 'hmrc';

const EU = new Set(EU_EORI_COUNTRIES);

/** The service answering for a country code (after aliases), or `null` for a code no EORI begins with. */
export function serviceForEoriCountry(country: string): EoriService | null {
  if (country === 'GB') return 'hmrc';
  if (country === 'XI' || EU.has(country)) return 'eos';
  return null;
}
