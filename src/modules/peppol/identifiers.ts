/**
 * Peppol participant identifiers: parsing `ICD:value` and `iso6523-actorid-upis::ICD:value`, and
 * deriving from a VAT number every identifier its company may be registered under. Pure functions,
 * no I/O.
 *
 * Rules (Peppol Policy for use of Identifiers 4.4, POLICY 1, as phax/peppol-commons applies them in
 * PeppolIdentifierFactory): the scheme is `iso6523-actorid-upis`; the value is a 4-digit ICD of the
 * participant identifier schemes code list, a colon, and 1 to 130 characters of letters, digits,
 * `-`, `.`, `_` and `~`; values are case-insensitive. An ICD the VAT mapping knows (vat-schemes.ts)
 * also fixes the form of its values, e.g. `0208` takes the 10-digit enterprise number without `BE`.
 */
import {
  getVatNumberRule,
  type ParsedVatNumber,
  parseVatNumber,
  type UnsupportedCountry,
  type VatParseFailure,
  type VatPrefix,
} from '../vat-numbers/index.js';
import { type ParticipantScheme, participantScheme } from './schemes.js';
import { VAT_SCHEME_RULES, type VatSchemeRule } from './vat-schemes.js';

/** The identifier scheme of every Peppol participant identifier (Policy 4.4, POLICY 1). */
export const PARTICIPANT_ID_SCHEME = 'iso6523-actorid-upis';

/** The most characters a value may have after `ICD:` (Policy 4.4, POLICY 1). */
export const MAX_PARTICIPANT_VALUE_LENGTH = 130;

export interface ParticipantId {
  /** The ICD, e.g. `0208`. */
  readonly icd: string;
  /** The value after `ICD:`, lower-cased (identifiers of this scheme are case-insensitive). */
  readonly value: string;
  /** `ICD:value`, e.g. `9925:be0677424046`: the string the SML name is hashed from. */
  readonly id: string;
  readonly scheme: ParticipantScheme;
}

export interface DerivedParticipantId extends ParticipantId {
  /** Why a company with this VAT number may be registered under this identifier. */
  readonly basis: string;
}

export type ParticipantIdFailureReason = 'scheme' | 'syntax' | 'icd' | 'value';

export interface ParticipantIdFailure {
  readonly ok: false;
  readonly reason: ParticipantIdFailureReason;
  readonly message: string;
}

export type ParticipantIdResult = ({ readonly ok: true } & ParticipantId) | ParticipantIdFailure;

const VALUE_CHARACTERS = /^[A-Za-z0-9._~-]+$/;

/** A VAT scheme rule compiled: its value pattern and an example value. */
interface CompiledRule extends VatSchemeRule {
  readonly prefix: VatPrefix;
  readonly valuePattern: RegExp;
  readonly whenPattern: RegExp | null;
  readonly example: string;
}

/** `{n}`, `{n:a}` and `{n:a-b}` in a template. */
const PLACEHOLDER = /\{n(?::(\d+)(?:-(\d+))?)?\}/g;

function applyTemplate(template: string, national: string): string {
  return template.replace(PLACEHOLDER, (_, from?: string, to?: string) =>
    from === undefined ? national : national.slice(Number(from), to === undefined ? undefined : Number(to)),
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The pattern of a rule's values: its own, or the VAT number's formats put through the template. */
function valuePatternOf(prefix: VatPrefix, rule: VatSchemeRule): RegExp {
  if (rule.pattern !== undefined) return new RegExp(`^(?:${rule.pattern})$`, 'i');
  const formats = getVatNumberRule(prefix).formats;
  const national = formats.length === 1 ? (formats[0] ?? '') : `(?:${formats.join('|')})`;
  const parts = rule.template.split(PLACEHOLDER);
  // split with two capture groups gives [text, from, to, text, …]: a slice needs its own pattern.
  if (parts.length !== 4 || parts[1] !== undefined) {
    throw new Error(`the ${rule.icd} rule of ${prefix} takes part of the VAT number: give it a pattern`);
  }
  return new RegExp(`^${escapeRegExp(parts[0] ?? '')}${national}${escapeRegExp(parts[3] ?? '')}$`, 'i');
}

function compile(): { byPrefix: Map<VatPrefix, CompiledRule[]>; byIcd: Map<string, CompiledRule[]> } {
  const byPrefix = new Map<VatPrefix, CompiledRule[]>();
  const byIcd = new Map<string, CompiledRule[]>();
  for (const [prefix, rules] of Object.entries(VAT_SCHEME_RULES) as [VatPrefix, readonly VatSchemeRule[]][]) {
    const exampleNational = getVatNumberRule(prefix).example.slice(prefix === 'CH' ? 3 : 2);
    const compiled = rules.map((rule): CompiledRule => {
      if (!participantScheme(rule.icd))
        throw new Error(`${rule.icd} is not in the participant schemes code list`);
      return {
        ...rule,
        prefix,
        valuePattern: valuePatternOf(prefix, rule),
        whenPattern: rule.when === undefined ? null : new RegExp(`^(?:${rule.when})$`),
        example: applyTemplate(rule.template, exampleNational),
      };
    });
    byPrefix.set(prefix, compiled);
    for (const rule of compiled) byIcd.set(rule.icd, [...(byIcd.get(rule.icd) ?? []), rule]);
  }
  return { byPrefix, byIcd };
}

const RULES = compile();

function failure(reason: ParticipantIdFailureReason, message: string): ParticipantIdFailure {
  return { ok: false, reason, message };
}

function participant(icd: string, value: string, scheme: ParticipantScheme): ParticipantId {
  const lower = value.toLowerCase();
  return { icd, value: lower, id: `${icd}:${lower}`, scheme };
}

/** Whether the input is written as a participant identifier (`ICD:…` or `scheme::…`) rather than a VAT number. */
export function looksLikeParticipantId(input: string): boolean {
  return /^\s*(?:[A-Za-z0-9-]+::)?\d{4}:/.test(input);
}

/**
 * Parses `ICD:value` or `iso6523-actorid-upis::ICD:value` (the scheme in any case; whitespace
 * around the whole is ignored). Never throws.
 */
export function parseParticipantId(input: string): ParticipantIdResult {
  if (typeof input !== 'string') return failure('syntax', 'A participant identifier must be a string.');
  let rest = input.trim();
  const separator = rest.indexOf('::');
  if (separator >= 0) {
    const scheme = rest.slice(0, separator);
    if (scheme.toLowerCase() !== PARTICIPANT_ID_SCHEME) {
      return failure(
        'scheme',
        `Peppol participant identifiers use the scheme ${PARTICIPANT_ID_SCHEME}; "${scheme.slice(0, 40)}" is not it.`,
      );
    }
    rest = rest.slice(separator + 2);
  }
  const match = /^(\d{4}):([\s\S]*)$/.exec(rest);
  if (!match) {
    return failure(
      'syntax',
      'A participant identifier is a 4-digit ICD, a colon and a value, e.g. 0208:0677424046.',
    );
  }
  const icd = match[1] as string;
  const value = match[2] as string;
  const scheme = participantScheme(icd);
  if (!scheme) {
    return failure('icd', `${icd} is not a participant identifier scheme of the Peppol code list.`);
  }
  if (value.length === 0 || value.length > MAX_PARTICIPANT_VALUE_LENGTH) {
    return failure(
      'value',
      `The value after ${icd}: has 1 to ${MAX_PARTICIPANT_VALUE_LENGTH} characters; it has ${value.length}.`,
    );
  }
  if (!VALUE_CHARACTERS.test(value)) {
    return failure(
      'value',
      'A participant identifier value has only letters, digits and the characters - . _ ~ (no spaces).',
    );
  }
  const rules = RULES.byIcd.get(icd);
  if (rules && !rules.some((rule) => rule.valuePattern.test(value))) {
    const examples = [...new Set(rules.map((rule) => `${icd}:${rule.example}`))].join(' or ');
    return failure('value', `${icd} (${scheme.schemeId}) values are written like ${examples}; got ${value}.`);
  }
  return { ok: true, ...participant(icd, value, scheme) };
}

export interface DeriveOptions {
  /** Also derive identifiers of schemes the code list has removed (default false). */
  includeRemoved?: boolean;
}

/**
 * Every participant identifier a company with this VAT number may be registered under: its
 * country's VAT scheme and the national identifiers the VAT number contains, in the order of the
 * mapping (vat-schemes.ts).
 */
export function deriveParticipantIds(
  vat: ParsedVatNumber,
  options: DeriveOptions = {},
): DerivedParticipantId[] {
  const result: DerivedParticipantId[] = [];
  for (const rule of RULES.byPrefix.get(vat.country) ?? []) {
    const scheme = participantScheme(rule.icd) as ParticipantScheme;
    if (scheme.state === 'removed' && !options.includeRemoved) continue;
    if (rule.whenPattern && !rule.whenPattern.test(vat.national)) continue;
    const value = applyTemplate(rule.template, vat.national);
    if (!rule.valuePattern.test(value)) continue;
    result.push({ ...participant(rule.icd, value, scheme), basis: rule.basis });
  }
  return result;
}

export type PeppolIdentifierResult =
  | { readonly ok: true; readonly kind: 'participant'; readonly participant: ParticipantId }
  | {
      readonly ok: true;
      readonly kind: 'vat_number';
      readonly vat: ParsedVatNumber;
      readonly participants: DerivedParticipantId[];
    }
  | ({ readonly kind: 'participant' } & ParticipantIdFailure)
  | {
      readonly ok: false;
      readonly kind: 'vat_number';
      readonly failure: VatParseFailure | UnsupportedCountry;
    };

/**
 * The identifier of a Peppol look-up: a participant identifier, or a VAT number (parsed and
 * normalised by the vat-numbers module, check digits included) with the identifiers derived from it.
 */
export function parsePeppolIdentifier(input: string, options: DeriveOptions = {}): PeppolIdentifierResult {
  if (typeof input === 'string' && looksLikeParticipantId(input)) {
    const parsed = parseParticipantId(input);
    if (!parsed.ok) return { ...parsed, kind: 'participant' };
    const { ok: _, ...participantId } = parsed;
    return { ok: true, kind: 'participant', participant: participantId };
  }
  const vat = parseVatNumber(input);
  if (!vat.ok) return { ok: false, kind: 'vat_number', failure: vat };
  return { ok: true, kind: 'vat_number', vat, participants: deriveParticipantIds(vat, options) };
}

/** The mapping as rows for docs and tests: prefix, ICD, template, example value and basis. */
export function vatSchemeTable(): {
  prefix: VatPrefix;
  icd: string;
  schemeId: string;
  state: ParticipantScheme['state'];
  template: string;
  example: string;
  basis: string;
}[] {
  return [...RULES.byPrefix.values()].flat().map((rule) => {
    const scheme = participantScheme(rule.icd) as ParticipantScheme;
    return {
      prefix: rule.prefix,
      icd: rule.icd,
      schemeId: scheme.schemeId,
      state: scheme.state,
      template: rule.template,
      example: `${rule.icd}:${rule.example}`,
      basis: rule.basis,
    };
  });
}
