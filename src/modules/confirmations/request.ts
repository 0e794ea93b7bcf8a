import { type Refusal, refusal } from '../../lib/refusal.js';
import { compactInput, isValidGermanVatDigits } from '../vat-numbers/index.js';
import type { ConfirmBody } from './types.js';

/** The authority's documented test requester; its check digit is wrong on purpose. */
export const OFFICIAL_TEST_REQUESTER = 'DE123456789';

/** JSON with object keys sorted at every level: equal documents give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The target number without separators, upper case, `GR` read as `EL`. */
export function normaliseTarget(input: string): string | null {
  const compact = compactInput(input);
  if (compact === null) return null;
  return compact.startsWith('GR') ? `EL${compact.slice(2)}` : compact;
}

/** The requester checked before any call: `DE` + 9 digits with a valid MOD 11,10 check digit. */
export function checkRequester(input: string): { kind: 'ok'; vat: string } | Refusal {
  const vat = compactInput(input) ?? input;
  if (vat === OFFICIAL_TEST_REQUESTER) return { kind: 'ok', vat };
  const fail = (reason: 'country' | 'characters' | 'length' | 'checksum', message: string) =>
    refusal('requester_invalid', message, { reason, field: 'requester_vat_number' });
  if (!vat.startsWith('DE')) {
    return fail('country', 'The requester VAT number must be a German VAT number (DE followed by 9 digits).');
  }
  const national = vat.slice(2);
  if (!/^\d*$/.test(national)) {
    return fail('characters', 'The requester VAT number must be DE followed by 9 digits.');
  }
  if (national.length !== 9) {
    return fail(
      'length',
      `The requester VAT number must be DE followed by 9 digits; got ${national.length}.`,
    );
  }
  if (!isValidGermanVatDigits(national)) {
    return fail(
      'checksum',
      `The requester VAT number ${vat} fails the German check-digit test (ISO 7064 MOD 11,10).`,
    );
  }
  return { kind: 'ok', vat };
}

/** The two numbers of a confirmation, checked before anything is asked. */
export interface ConfirmNumbers {
  kind: 'ok';
  /** The foreign EU VAT number, normalised (`normaliseTarget`). */
  target: string;
  requesterVat: string;
}

/**
 * A confirmation's numbers: a target with a country prefix that is not German, and a German
 * requester (the body's, else the key's default) that passes `checkRequester`.
 */
export function checkNumbers(
  body: ConfirmBody,
  defaultRequesterVat: string | null,
): ConfirmNumbers | Refusal {
  const target = normaliseTarget(body.vat_number);
  if (target === null || !/^[A-Z]{2}./.test(target)) {
    return refusal(
      'invalid_format',
      'vat_number must start with a two-letter country prefix, e.g. ATU12345678.',
      {
        reason: target === null ? 'length' : 'country',
        field: 'vat_number',
      },
    );
  }
  if (target.startsWith('DE')) {
    return refusal(
      'invalid_format',
      'The German tax authority cannot confirm German (DE) VAT numbers for a German requester; confirm foreign EU VAT numbers only, and use GET /v1/validate for DE numbers.',
      { field: 'vat_number' },
    );
  }
  const requesterInput = body.requester_vat_number ?? defaultRequesterVat;
  if (!requesterInput) {
    return refusal(
      'requester_invalid',
      'A German requester VAT number is required: send requester_vat_number, or set a default on the key with "openvat keys create --default-requester-vat DE…".',
      { field: 'requester_vat_number' },
    );
  }
  const requester = checkRequester(requesterInput);
  if (requester.kind !== 'ok') return requester;
  return { kind: 'ok', target, requesterVat: requester.vat };
}
