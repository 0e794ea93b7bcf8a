// What a decision asks and answers: the request, the checks of the two VAT numbers and the data.
import type { RegistryAnswersTable } from '../../db/schema.js';
import type { SourceStatus, ValidationSource } from '../validation/index.js';
import { isKnownCountryCode } from '../vat-numbers/index.js';
import type { InvoiceNote } from './notes.js';
import type { CustomerType, Mechanism, SupplyType } from './treatment.js';

export interface DecideRequest {
  seller_vat: string;
  buyer_vat?: string;
  buyer_country?: string;
  supply_type?: SupplyType;
  supply_date?: string;
  seller_eu_b2c_sales_ytd?: number;
  seller_eu_b2c_sales_last_year?: number;
}

export type Role = 'seller' | 'buyer';
export type Field = 'seller_vat' | 'buyer_vat';

export interface DecideSource {
  role: Role;
  vat_number: string;
  source: ValidationSource;
  source_status: SourceStatus;
  cached: boolean;
  /** When the stored answer was obtained; null for a live answer. */
  cached_at: string | null;
  /** Age of the stored answer in seconds; null for a live answer. */
  stale_seconds: number | null;
}

export interface VatCheck {
  vat_number: string;
  valid: boolean;
  /** `code`: ISO 3166-1 alpha-2, upper case (GR for an EL number); `name`: English name. */
  country: { code: string; name: string };
}

const STATUS_ORDER: readonly SourceStatus[] = ['live', 'cached', 'degraded', 'fallback'];

/** The worst `source_status` of the look-ups (live < cached < degraded). */
export function worstStatus(statuses: readonly SourceStatus[]): SourceStatus {
  let worst: SourceStatus = 'live';
  for (const status of statuses) {
    if (STATUS_ORDER.indexOf(status) > STATUS_ORDER.indexOf(worst)) worst = status;
  }
  return worst;
}

/** `data` of a decide response. */
export interface DecideData {
  charge_vat: boolean;
  rate: number;
  standard_rate: number | null;
  mechanism: Mechanism;
  country_of_taxation: string;
  legal_basis: string;
  articles: string[];
  explanation: string;
  /** The mention in English; `""` when the invoice needs none. */
  invoice_note: string;
  /** The same mention in the official language(s) of the buyer's country; empty when none. */
  invoice_note_translations: InvoiceNote['translations'];
  disclaimer: string;
  customer_type: CustomerType;
  supply_type: SupplyType;
  supply_date: string;
  oss_threshold: {
    threshold: number;
    currency: 'EUR';
    sales_ytd: number | null;
    sales_last_year: number | null;
    exceeded: boolean | null;
  } | null;
  seller_vat: VatCheck;
  buyer_vat: VatCheck | null;
  buyer_country: string;
  decided_at: string;
}

export interface DecideResult {
  kind: 'ok';
  data: DecideData;
  meta: { source_status: SourceStatus; sources: DecideSource[] };
  /** The buyer's VAT number validity (null for the B2C form), for the audit record. */
  valid: boolean | null;
  /** Fresh registry answers of the look-ups, recorded with the response. */
  answers: RegistryAnswersTable[];
}

/** `buyer_country` as an upper-case ISO code: `EL` is Greece (GR), `UK` the United Kingdom (GB), `XI` Northern Ireland. */
export function normaliseBuyerCountry(value: string): string | null {
  const code = value.trim().toUpperCase();
  if (code === 'EL') return 'GR';
  if (code === 'UK') return 'GB';
  if (code === 'XI') return 'XI';
  if (code === 'EU' || !/^[A-Z]{2}$/.test(code) || !isKnownCountryCode(code)) return null;
  return code;
}
