/**
 * VIES approximate matching, shared by the REST and SOAP clients: which trader fields a lookup
 * sends, under which names, and how the verdicts are read back.
 *
 * Names: REST `CheckVatRequest`/`CheckVatResponse` (the official swagger, copy in
 * conedevelopment/vies-php `openapi.yml`): `traderName`, `traderStreet`, `traderPostalCode`,
 * `traderCity`, `traderCompanyType`, answered by `trader*Match` with `VALID | INVALID |
 * NOT_PROCESSED`. SOAP `checkVatApprox` (the production WSDL, copy in
 * UsamaAhmed2002/EU-Vat-Validation-Server `checkVatService.wsdl`) spells the postcode
 * `traderPostcode` and answers `matchCode` 1 (VALID), 2 (INVALID), 3 (NOT_PROCESSED); its
 * `traderCompanyType` must match `[A-Z]{2}\-[1-9][0-9]?`.
 */
import type { RegistryTrader, RegistryTraderField, RegistryTraderMatch, TraderMatchCode } from './port.js';

/** The fields in the order of the SOAP request's sequence. */
const ORDER: readonly RegistryTraderField[] = ['name', 'companyType', 'street', 'postcode', 'city'];

export const REST_TRADER_NAMES: Readonly<Record<RegistryTraderField, string>> = {
  name: 'traderName',
  companyType: 'traderCompanyType',
  street: 'traderStreet',
  postcode: 'traderPostalCode',
  city: 'traderCity',
};

export const SOAP_TRADER_NAMES: Readonly<Record<RegistryTraderField, string>> = {
  name: 'traderName',
  companyType: 'traderCompanyType',
  street: 'traderStreet',
  postcode: 'traderPostcode',
  city: 'traderCity',
};

/** The SOAP schema's `companyTypeCode`. */
export const SOAP_COMPANY_TYPE = /^[A-Z]{2}-[1-9][0-9]?$/;

/** The non-blank trader fields of a lookup, trimmed, in request order. */
export function traderFields(trader: RegistryTrader | undefined): [RegistryTraderField, string][] {
  if (!trader) return [];
  return ORDER.flatMap((field) => {
    const value = trader[field];
    return typeof value === 'string' && value.trim() !== ''
      ? [[field, value.trim()] as [RegistryTraderField, string]]
      : [];
  });
}

const CODES: Readonly<Record<string, TraderMatchCode>> = {
  VALID: 'VALID',
  INVALID: 'INVALID',
  NOT_PROCESSED: 'NOT_PROCESSED',
  '1': 'VALID',
  '2': 'INVALID',
  '3': 'NOT_PROCESSED',
};

/** A verdict as VIES writes it (REST word or SOAP code); `undefined` for anything else. */
export function traderMatchCode(value: unknown): TraderMatchCode | undefined {
  if (typeof value === 'number') return CODES[String(value)];
  return typeof value === 'string' ? CODES[value.trim().toUpperCase()] : undefined;
}

/**
 * The verdicts for the fields sent, read with `verdictOf` (the answer's `…Match` element for a
 * field); `undefined` when no field was sent, so an answer without trader fields stays as before.
 */
export function readTraderMatch(
  sent: readonly [RegistryTraderField, string][],
  verdictOf: (field: RegistryTraderField) => unknown,
): RegistryTraderMatch | undefined {
  if (sent.length === 0) return undefined;
  const match: RegistryTraderMatch = {};
  for (const [field] of sent) {
    const code = traderMatchCode(verdictOf(field));
    if (code) match[field] = code;
  }
  return match;
}
