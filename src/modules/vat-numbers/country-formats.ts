import { validateAT } from './countries/at.js';
import { validateBE } from './countries/be.js';
import { validateBG } from './countries/bg.js';
import { validateCH } from './countries/ch.js';
import { validateCY } from './countries/cy.js';
import { validateCZ } from './countries/cz.js';
import { validateDE } from './countries/de.js';
import { validateDK } from './countries/dk.js';
import { validateEE } from './countries/ee.js';
import { validateEL } from './countries/el.js';
import { validateES } from './countries/es.js';
import { validateFI } from './countries/fi.js';
import { validateFR } from './countries/fr.js';
import { validateGB } from './countries/gb.js';
import { validateHR } from './countries/hr.js';
import { validateHU } from './countries/hu.js';
import { validateIE } from './countries/ie.js';
import { validateIT } from './countries/it.js';
import { validateLT } from './countries/lt.js';
import { validateLU } from './countries/lu.js';
import { validateLV } from './countries/lv.js';
import { validateMT } from './countries/mt.js';
import { validateNL } from './countries/nl.js';
import { validateNO } from './countries/no.js';
import { validatePL } from './countries/pl.js';
import { validatePT } from './countries/pt.js';
import { validateRO } from './countries/ro.js';
import { validateSE } from './countries/se.js';
import { validateSI } from './countries/si.js';
import { validateSK } from './countries/sk.js';
import type { CountryValidator, VatNumberRule, VatPrefix } from './types.js';

type RuleSpec = {
  iso?: string;
  formats: readonly string[];
  formatDescription: string;
  example: string;
  validate: CountryValidator;
  /** Canonical prefix text before the national part when it differs from the VAT prefix. */
  canonicalPrefix?: string;
};

const GB_FORMATS = ['\\d{9}', '\\d{12}', 'GD[0-4]\\d{2}', 'HA[5-9]\\d{2}'] as const;
const GB_DESCRIPTION =
  '9 digits, or 12 digits (9 + 3-digit branch), or GD + 3 digits (government departments, 000–499), ' +
  'or HA + 3 digits (health authorities, 500–999)';

const SPECS: Readonly<Record<VatPrefix, RuleSpec>> = {
  AT: {
    formats: ['U\\d{8}'],
    formatDescription: 'U followed by 8 digits',
    example: 'ATU13585627',
    validate: validateAT,
  },
  BE: {
    formats: ['[01]\\d{9}'],
    formatDescription: '10 digits starting with 0 or 1 (the old 9-digit form gets a leading 0)',
    example: 'BE0428759497',
    validate: validateBE,
  },
  BG: {
    formats: ['\\d{9}', '\\d{10}'],
    formatDescription: '9 digits (legal entities) or 10 digits (individuals and others)',
    example: 'BG175074752',
    validate: validateBG,
  },
  CY: {
    formats: ['[0-59]\\d{7}[A-Z]'],
    formatDescription: '8 digits and a check letter',
    example: 'CY10259033P',
    validate: validateCY,
  },
  CZ: {
    formats: ['\\d{8}', '\\d{9}', '\\d{10}'],
    formatDescription: '8 digits (legal entities), 9 or 10 digits (individuals, special entities)',
    example: 'CZ25123891',
    validate: validateCZ,
  },
  DE: {
    formats: ['[1-9]\\d{8}'],
    formatDescription: '9 digits',
    example: 'DE136308783',
    validate: validateDE,
  },
  DK: {
    formats: ['[1-9]\\d{7}'],
    formatDescription: '8 digits',
    example: 'DK28107773',
    validate: validateDK,
  },
  EE: { formats: ['\\d{9}'], formatDescription: '9 digits', example: 'EE100594102', validate: validateEE },
  EL: {
    iso: 'GR',
    formats: ['\\d{9}'],
    formatDescription: '9 digits (prefix EL; GR is accepted as input)',
    example: 'EL094501040',
    validate: validateEL,
  },
  ES: {
    formats: ['[0-9A-Z]\\d{7}[0-9A-Z]'],
    formatDescription: '9 characters: a letter or digit, 7 digits, a letter or digit',
    example: 'ESA28184661',
    validate: validateES,
  },
  FI: { formats: ['\\d{8}'], formatDescription: '8 digits', example: 'FI20774740', validate: validateFI },
  FR: {
    formats: ['[0-9A-HJ-NP-Z]{2}\\d{9}'],
    formatDescription: '2-character key (digits or letters except I and O) and the 9-digit SIREN',
    example: 'FR40303265045',
    validate: validateFR,
  },
  HR: {
    formats: ['\\d{11}'],
    formatDescription: '11 digits (OIB)',
    example: 'HR33392005961',
    validate: validateHR,
  },
  HU: { formats: ['\\d{8}'], formatDescription: '8 digits', example: 'HU12892312', validate: validateHU },
  IE: {
    formats: ['\\d{7}[A-W][A-IW]?', '\\d[A-Z+*]\\d{5}[A-W]'],
    formatDescription: '7 digits and 1 or 2 letters, or (old form) digit, letter, 5 digits, letter',
    example: 'IE6433435F',
    validate: validateIE,
  },
  IT: {
    formats: ['\\d{11}'],
    formatDescription: '11 digits',
    example: 'IT00743110157',
    validate: validateIT,
  },
  LT: {
    formats: ['\\d{7}1\\d', '\\d{10}1\\d'],
    formatDescription: '9 or 12 digits',
    example: 'LT119511515',
    validate: validateLT,
  },
  LU: { formats: ['\\d{8}'], formatDescription: '8 digits', example: 'LU15027442', validate: validateLU },
  LV: {
    formats: ['\\d{11}'],
    formatDescription: '11 digits',
    example: 'LV40003521600',
    validate: validateLV,
  },
  MT: {
    formats: ['[1-9]\\d{7}'],
    formatDescription: '8 digits',
    example: 'MT11679112',
    validate: validateMT,
  },
  NL: {
    formats: ['\\d{9}B\\d{2}'],
    formatDescription: '9 digits, the letter B and 2 digits',
    example: 'NL002455799B11',
    validate: validateNL,
  },
  PL: { formats: ['\\d{10}'], formatDescription: '10 digits', example: 'PL5261025421', validate: validatePL },
  PT: {
    formats: ['[1-9]\\d{8}'],
    formatDescription: '9 digits',
    example: 'PT501964843',
    validate: validatePT,
  },
  RO: {
    formats: ['[1-9]\\d{1,9}', '[1-9]\\d{12}'],
    formatDescription: '2 to 10 digits (or a 13-digit personal numeric code)',
    example: 'RO18547290',
    validate: validateRO,
  },
  SE: {
    formats: ['\\d{10}01'],
    formatDescription: '12 digits ending in 01',
    example: 'SE556043606401',
    validate: validateSE,
  },
  SI: {
    formats: ['[1-9]\\d{7}'],
    formatDescription: '8 digits',
    example: 'SI50223054',
    validate: validateSI,
  },
  SK: {
    formats: ['[1-9]\\d{9}'],
    formatDescription: '10 digits',
    example: 'SK2022749619',
    validate: validateSK,
  },
  XI: {
    formats: GB_FORMATS,
    formatDescription: GB_DESCRIPTION,
    example: 'XI980780684',
    validate: validateGB,
  },
  GB: {
    formats: GB_FORMATS,
    formatDescription: GB_DESCRIPTION,
    example: 'GB980780684',
    validate: validateGB,
  },
  CH: {
    formats: ['\\d{9}'],
    formatDescription: 'CHE and 9 digits (UID), written e.g. CHE-123.456.789 MWST; the suffix is optional',
    example: 'CHE116281710',
    validate: validateCH,
    canonicalPrefix: 'CHE',
  },
  NO: {
    formats: ['\\d{9}'],
    formatDescription: '9 digits (organisation number), written e.g. NO 123 456 789 MVA; MVA is optional',
    example: 'NO965920358',
    validate: validateNO,
  },
};

function buildRule(prefix: VatPrefix, spec: RuleSpec): VatNumberRule {
  const canonical = spec.canonicalPrefix ?? prefix;
  const body = spec.formats.length === 1 ? (spec.formats[0] ?? '') : `(?:${spec.formats.join('|')})`;
  return Object.freeze({
    prefix,
    isoCountry: spec.iso ?? prefix,
    formats: Object.freeze([...spec.formats]),
    regex: `^${canonical}${body}$`,
    formatDescription: spec.formatDescription,
    example: spec.example,
    validate: spec.validate,
  });
}

/** Every supported prefix, EU member states first (alphabetical), then XI, GB, CH, NO. */
export const SUPPORTED_PREFIXES: readonly VatPrefix[] = Object.freeze(Object.keys(SPECS) as VatPrefix[]);

const RULES: ReadonlyMap<string, VatNumberRule> = new Map(
  SUPPORTED_PREFIXES.map((p) => [p, buildRule(p, SPECS[p])] as const),
);

export function isSupportedPrefix(s: string): s is VatPrefix {
  return RULES.has(s);
}

/** The format rule of a supported prefix: formats, regex, description and a valid example. */
export function getVatNumberRule(prefix: VatPrefix): VatNumberRule {
  const rule = RULES.get(prefix);
  if (!rule) throw new Error(`unsupported VAT prefix ${prefix}`);
  return rule;
}

// Rules indexed by (first letter − A) × 26 + (second letter − A); GR is read as EL and UK as GB.
const BY_CODES: readonly (VatNumberRule | undefined)[] = Object.freeze(
  Array.from({ length: 26 * 26 }, (_, i) => {
    let code = String.fromCharCode(65 + Math.floor(i / 26), 65 + (i % 26));
    if (code === 'GR') code = 'EL';
    else if (code === 'UK') code = 'GB';
    return RULES.get(code);
  }),
);

/**
 * Rule lookup for the parser by the char codes of two upper-case letters A–Z (GR gives the EL rule,
 * UK the GB rule); undefined for anything not supported.
 */
export function findRuleByCodes(c0: number, c1: number): VatNumberRule | undefined {
  return BY_CODES[(c0 - 65) * 26 + (c1 - 65)];
}

/** Canonical text in front of the national part: `CHE` for CH, else the VAT prefix. */
export function canonicalPrefixOf(prefix: VatPrefix): string {
  return SPECS[prefix].canonicalPrefix ?? prefix;
}
