/**
 * The Peppol participant identifier schemes a company with a given VAT number may be registered
 * under, and the form each scheme's value takes. Kept as data: each country's schemes in the order
 * they are looked up, each with the template of its value and where that form comes from.
 *
 * Templates: `{n}` is the national part of the VAT number as the vat-numbers module normalises it
 * (`0677424046` for BE0677424046, `U13585627` for ATU13585627, `116281710` for CHE116281710);
 * `{n:a-b}` its characters a (included) to b (excluded), `{n:a}` from a to the end. Participant
 * identifiers are case-insensitive (Peppol Policy for use of Identifiers 4.4, POLICY 1): values are
 * written here as registries print them and compared without regard to case.
 *
 * Scheme codes, names and states: OpenPeppol's "Peppol Code Lists - Participant identifier schemes"
 * (the version in participant-schemes.ts). `removed` schemes are listed so that an identifier under
 * one is recognised, but are looked up only when asked for (their registrations had to be moved by
 * the removal date).
 */
import type { VatPrefix } from '../vat-numbers/index.js';

export interface VatSchemeRule {
  /** The ISO 6523 ICD of the scheme, e.g. `9925`. */
  readonly icd: string;
  /** The value's template, e.g. `BE{n}`. */
  readonly template: string;
  /** Only VAT numbers whose national part matches this (source text, anchored) hold this identifier. */
  readonly when?: string;
  /**
   * The form a value of this scheme has, as a regular expression (source text, anchored, compared
   * case-insensitively), when it is not the VAT number's own format put through the template.
   */
  readonly pattern?: string;
  /** Why the value has this form. */
  readonly basis: string;
}

const CODE_LIST = 'Peppol code list';
const VAT_FORM = 'the VAT number with its country prefix, the form of the 99xx VAT schemes';
const PEPPOL_COMMONS_80 =
  'phax/peppol-commons#80 and PeppolEndUserHelper: 9925 is 0208 with the BE prefix; 9930 is 0246 unchanged';

/** A country's VAT scheme: the VAT number with its prefix. */
function vatScheme(icd: string, template: string, basis = VAT_FORM): VatSchemeRule {
  return { icd, template, basis };
}

export const VAT_SCHEME_RULES: Readonly<Record<VatPrefix, readonly VatSchemeRule[]>> = {
  AT: [vatScheme('9914', 'AT{n}', `${VAT_FORM}; code list example ATU12345678`)],
  BE: [
    {
      icd: '0208',
      template: '{n}',
      basis: `${CODE_LIST}: the 10-digit enterprise number, RegEx [01][0-9]{9}; every Belgian company is registered under it`,
    },
    vatScheme('9925', 'BE{n}', PEPPOL_COMMONS_80),
    {
      icd: '9956',
      template: '{n}',
      basis: `${CODE_LIST}: BE:CBE, RegEx 0[0-9]{9} (removed, replaced by 0208)`,
    },
  ],
  BG: [vatScheme('9926', 'BG{n}')],
  CY: [vatScheme('9928', 'CY{n}')],
  CZ: [vatScheme('9929', 'CZ{n}')],
  DE: [
    vatScheme('9930', 'DE{n}', `${VAT_FORM}; phax/peppol-commons test value 9930:DE211155632`),
    {
      icd: '0246',
      template: 'DE{n}',
      pattern: 'DE\\d{9}(?:-\\d{5})?(?:\\.[0-9A-Z]{1,8})?',
      basis: `${CODE_LIST}: German Electronic Business Address, DE + the 9 digits of the business identification number (for a company with a VAT number: its VAT number); ${PEPPOL_COMMONS_80}`,
    },
  ],
  DK: [
    {
      icd: '0184',
      template: '{n}',
      basis: `${CODE_LIST}: the 8-digit CVR number, RegEx [1-9][0-9]{7}; a Danish VAT number is DK + the CVR (or SE) number`,
    },
    {
      icd: '0198',
      template: 'DK{n}',
      basis: `${CODE_LIST}: the SE number, RegEx DK[0-9]{8}; VAT is registered per SE number`,
    },
    { icd: '9902', template: '{n}', basis: `${CODE_LIST}: DK:CVR (removed, replaced by 0184)` },
    { icd: '9904', template: 'DK{n}', basis: `${CODE_LIST}: DK:SE (removed, replaced by 0198)` },
  ],
  EE: [vatScheme('9931', 'EE{n}')],
  EL: [
    vatScheme(
      '9933',
      'EL{n}',
      `${VAT_FORM}: EL, the prefix of Greek VAT numbers (the scheme is named GR:VAT)`,
    ),
  ],
  ES: [vatScheme('9920', 'ES{n}')],
  FI: [
    {
      icd: '0216',
      template: '0037{n}',
      pattern: '0037\\d{8}[0-9A-Z]{0,5}',
      basis: `${CODE_LIST}: OVT code, 0037 + the 8-digit business ID (the digits of the FI VAT number) + an optional suffix; required for Finnish participants`,
    },
    { icd: '0213', template: 'FI{n}', basis: `${CODE_LIST}: FI:VAT (removed)` },
    {
      icd: '0037',
      template: '0037{n}',
      pattern: '(?:0037)?\\d{7}-?\\d[0-9A-Z]{0,5}',
      basis: `${CODE_LIST}: FI:OVT (removed, replaced by 0216)`,
    },
  ],
  FR: [
    vatScheme('9957', 'FR{n}'),
    {
      icd: '0002',
      template: '{n:2}',
      pattern: '\\d{9}(?:\\d{5})?',
      basis: `${CODE_LIST}: SIRENE, the 9-digit SIREN (the last 9 digits of the FR VAT number) or a 14-digit SIRET`,
    },
    {
      icd: '0225',
      template: '{n:2}',
      pattern: '[A-Za-z0-9_-]{1,130}',
      basis: `${CODE_LIST}: FRCTC electronic address, whose base form is the SIREN (SIREN, SIREN_SIRET, SIREN_SIRET_routing code, SIREN_suffix)`,
    },
  ],
  HR: [vatScheme('9934', 'HR{n}')],
  HU: [vatScheme('9910', 'HU{n}', `${CODE_LIST}: RegEx HU[0-9]{8}`)],
  IE: [vatScheme('9935', 'IE{n}')],
  IT: [
    vatScheme('0211', 'IT{n}', `${CODE_LIST}: PARTITA IVA, RegEx IT[0-9]{11}`),
    vatScheme('9906', 'IT{n}', `${CODE_LIST}: IT:VAT, RegEx IT[0-9]{11} (removed, replaced by 0211)`),
  ],
  LT: [vatScheme('9937', 'LT{n}')],
  LU: [vatScheme('9938', 'LU{n}')],
  LV: [
    vatScheme('9939', 'LV{n}'),
    {
      icd: '0218',
      template: '{n}',
      when: '[4-6]\\d{10}',
      pattern: '\\d{9}(?:\\d{2})?',
      basis: `${CODE_LIST}: unified registration number, 11 digits starting with 4, 5 or 6 for legal entities, whose VAT number is LV + that number`,
    },
  ],
  MT: [vatScheme('9943', 'MT{n}')],
  NL: [
    vatScheme('9944', 'NL{n}', `${VAT_FORM}; e.g. 9944:nl804170009b01 (peppolautoriteit-nl/validation#33)`),
  ],
  PL: [vatScheme('9945', 'PL{n}')],
  PT: [vatScheme('9946', 'PT{n}')],
  RO: [vatScheme('9947', 'RO{n}')],
  SE: [
    {
      icd: '0007',
      template: '{n:0-10}',
      pattern: '\\d{10}',
      basis: `${CODE_LIST}: the 10-digit organisation number, RegEx [0-9]{10}; a Swedish VAT number is SE + that number + 01`,
    },
    vatScheme('9955', 'SE{n}', `${CODE_LIST}: SE:VAT (removed)`),
  ],
  SI: [vatScheme('9949', 'SI{n}')],
  SK: [
    vatScheme('9950', 'SK{n}'),
    {
      icd: '0245',
      template: '{n}',
      basis: `${CODE_LIST}: the 10-digit tax identification number (DIČ), RegEx [0-9]{10}; a Slovak VAT number is SK + the DIČ`,
    },
  ],
  XI: [
    vatScheme(
      '9932',
      'GB{n}',
      `${VAT_FORM}: a Northern Ireland (XI) number is the same VAT registration as the GB number with these digits`,
    ),
  ],
  GB: [vatScheme('9932', 'GB{n}')],
  CH: [
    vatScheme(
      '9927',
      'CHE{n}',
      `${VAT_FORM}: the UID CHE + 9 digits, without separators and without the MWST/TVA/IVA suffix`,
    ),
    {
      icd: '0183',
      template: 'CHE{n}',
      basis: `${CODE_LIST}: the Swiss UID, RegEx CHE[0-9]{9}`,
    },
  ],
  NO: [
    {
      icd: '0192',
      template: '{n}',
      basis: `${CODE_LIST}: the 9-digit organisation number, RegEx [0-9]{9}; a Norwegian VAT number is NO + that number + MVA`,
    },
    {
      icd: '9909',
      template: 'NO{n}MVA',
      pattern: 'NO\\d{9}MVA',
      basis: `${CODE_LIST}: NO:VAT, RegEx NO[0-9]{9}MVA (deprecated)`,
    },
    { icd: '9908', template: '{n}', basis: `${CODE_LIST}: NO:ORGNR (removed, replaced by 0192)` },
  ],
};
