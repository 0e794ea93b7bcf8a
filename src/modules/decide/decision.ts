// The vocabulary of a VAT treatment (`treatment.ts`): what a sale is, and the decision on it.

export type SupplyType = 'goods' | 'services' | 'digital_services';
export type Mechanism = 'standard' | 'reverse_charge' | 'zero_rated' | 'out_of_scope';
export type CustomerType = 'business' | 'consumer';
/** Which invoice mention a decision needs (see `notes.ts`); null when none is required. */
export type NoteKind = 'reverse_charge' | 'intra_community_supply' | 'export' | 'out_of_scope';

export interface DecideInput {
  /** ISO 3166-1 alpha-2, upper case (GR, XI). */
  seller: { country: string };
  /** `vat` is the registry's verdict on the buyer's VAT number, or null when none was given. */
  buyer: { country: string; vat: { valid: boolean } | null };
  supplyType: SupplyType;
  /** `YYYY-MM-DD`. */
  supplyDate: string;
  /** Cross-border B2C sales of goods and digital services to other member states, EUR excl. VAT. */
  salesYtd: number | null;
  salesLastYear: number | null;
}

/** The standard VAT rate (percent) of a country (ISO, upper case) in force on a date, or null. */
export type RateLookup = (country: string, date: string) => number | null;

export interface ThresholdCheck {
  threshold: number;
  salesYtd: number | null;
  salesLastYear: number | null;
  /** True when either year is above the threshold; null when it cannot be told (amounts missing). */
  exceeded: boolean | null;
}

export interface Decision {
  chargeVat: boolean;
  /** The rate the seller charges, percent; 0 when no VAT is charged. */
  rate: number;
  /** Standard rate of `countryOfTaxation` on the supply date; null when not in the rates data. */
  standardRate: number | null;
  mechanism: Mechanism;
  /** ISO 3166-1 alpha-2, upper case: the country whose VAT governs the supply. */
  countryOfTaxation: string;
  /** Article numbers of Directive 2006/112/EC, e.g. `['44', '196']`; empty when it does not apply. */
  articles: string[];
  legalBasis: string;
  customerType: CustomerType;
  note: NoteKind | null;
  /** The article cited in an out-of-scope note. */
  noteArticle: string | null;
  explanation: string;
  /** Present for cross-border B2C distance sales of goods and digital services inside the EU. */
  threshold: ThresholdCheck | null;
}

/** A decision, or why none can be made: the seller's country, or no rate recorded where VAT is due. */
export type DecideResult =
  | { kind: 'ok'; decision: Decision }
  | { kind: 'undecided'; reason: 'seller_country_unsupported'; message: string }
  | { kind: 'undecided'; reason: 'no_rates'; country: string; message: string };
