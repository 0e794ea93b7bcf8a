import { type Refusal, refusal } from '../../lib/refusal.js';
import { compactInput, isValidGermanVatDigits } from '../vat-numbers/index.js';

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
