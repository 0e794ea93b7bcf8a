/**
 * The port of the national VAT registers: the member states' own registers of VAT payers, asked
 * when VIES cannot answer for that state. Seven of them share this shape: four online registers
 * (PL white list, CZ ADIS, RO ANAF, FI PRH/YTJ), one online register behind a key (SK), and two
 * published files served from a local copy (SI FURS, LV VID).
 *
 * As with the registry port (port.ts), expected outcomes are values: a register that cannot answer
 * returns `{ kind: 'unavailable' }`, never a thrown error, and `valid: false` only comes from the
 * register's own documented "not registered" answer about the number asked.
 *
 * A register's answer proves a domestic registration (`registrationScope: 'domestic'`), not a
 * registration for intra-EU supplies: the callers never treat it as VIES's answer.
 */

import { NATIONAL_SOURCES, type NationalSource } from '../lib/national-sources.js';
import type { RegistryUnavailable, RegistryVatNumber, UnavailableReason } from './port.js';

export { NATIONAL_SOURCES, type NationalSource };

/** The VAT prefix each register answers for (one state per register). */
export const NATIONAL_COUNTRY: Readonly<Record<NationalSource, string>> = Object.freeze({
  pl_whitelist: 'PL',
  cz_adis: 'CZ',
  ro_anaf: 'RO',
  fi_prh: 'FI',
  sk_financnasprava: 'SK',
  si_furs: 'SI',
  lv_vid: 'LV',
});

/**
 * An address split where the register splits it (for the identity match), with the register's own
 * rendering in `text`. A part the register does not give is `null`; `text` is never `null` when a
 * part is set.
 */
export interface NationalAddress {
  /** The address as the register renders it, lines separated by `\n`. */
  text: string;
  /** Street and house number (`Jankovcova 1522/53`, `CHEMIKÓW 7`, `Karakaari 7`). */
  street: string | null;
  postcode: string | null;
  city: string | null;
  /** As the register gives it (`Česká republika`, `FI`), or `null`. */
  country: string | null;
}

/**
 * Facts a register publishes about a payer besides the registration itself. Codes stay stable for
 * the API; `since` is the register's date where it gives one.
 */
export type NationalFlagCode =
  /** CZ `nespolehlivyPlatce=ANO`: a Czech buyer who pays this payer becomes liable for its unpaid VAT. */
  | 'unreliable_payer'
  /** RO `stare_inactiv.statusInactivi`: an inactive taxpayer; its invoices give no right to deduct. */
  | 'inactive_taxpayer'
  /** SK (`ds_ids` reliability index, `ds_dphz` grounds to cancel the registration): reserved for that register. */
  | 'less_reliable'
  | 'deregistration_grounds';

export interface NationalFlag {
  code: NationalFlagCode;
  /** `YYYY-MM-DD` when the register gives the date, else `null`. */
  since: string | null;
  /** The register's own words, e.g. `ANO`, `true`. */
  registerValue: string;
}

/** A period of registration as the register lists it (RO `perioade_TVA`, FI register-6 entries). */
export interface NationalRegistration {
  /** `YYYY-MM-DD`, or `null` when the register gives none. */
  from: string | null;
  /** Last day (`YYYY-MM-DD`), or `null` while it runs. */
  to: string | null;
  /** What kind of registration, in the register's code and words (`80 VAT-liable for business activity`). */
  kind: string | null;
}

export interface NationalAnswer {
  kind: 'answer';
  source: NationalSource;
  /** VAT prefix: `PL`, `CZ`, `RO`, `FI`, `SK`, `SI`, `LV`. */
  country: string;
  /** The national part asked, as the VAT number has it (`7740001454`, `01120389`). */
  national: string;
  /** Whether the register lists the number as a current domestic VAT registration. */
  valid: boolean;
  registrationScope: 'domestic';
  /**
   * The register's own word for the status it answered: `Czynny`, `Zwolniony`, `Niezarejestrowany`
   * (PL), `NE`, `ANO`, `NENALEZEN` (CZ), `scpTVA=true` (RO), the register-6 entry types (FI); `null`
   * when the register says the number is not on it at all.
   */
  registerStatus: string | null;
  name: string | null;
  address: NationalAddress | null;
  /**
   * The register's identifiers of this answer and of the payer, kept for audit records and proofs:
   * `requestId` (PL, the consultation's electronic key), `nip`, `regon`, `krs` (PL), `dic`,
   * `taxOffice` (CZ), `cui`, `tradeRegisterNumber` (RO), `businessId` (FI).
   */
  identifiers: Record<string, string>;
  /** The register's proof of this consultation when it gives one (PL `requestId`), else `null`. */
  consultationNumber: string | null;
  flags: NationalFlag[];
  registrations: NationalRegistration[];
  /** For answers from a published file: the file's date (`YYYY-MM-DD`); `null` for online registers. */
  dataDate: string | null;
  /** When the register says it answered (PL `requestDateTime`), else when the answer arrived. */
  checkedAt: Date;
}

export interface NationalUnavailable extends Omit<RegistryUnavailable, 'source'> {
  source: NationalSource;
}

export type NationalResult = NationalAnswer | NationalUnavailable;

export interface NationalLookup {
  vat: RegistryVatNumber;
  /** The day the status is asked for (`YYYY-MM-DD`); default: today in the register's time zone. */
  date?: string;
  /** Aborts the upstream call (deadline of the caller). */
  signal?: AbortSignal;
}

/**
 * A register's published limits, as data for the permits, rate and quota layers. The clients do
 * not enforce them: every instance shares one budget, which only the caller's shared stores see.
 */
export interface NationalLimits {
  /** Simultaneous calls allowed; `null` when the register publishes none. */
  concurrency: number | null;
  /** Requests allowed per window, every window at once (RO: 1 per second; CZ: 2,000 per hour and 10,000 per 24 h). */
  rates: { requests: number; windowMs: number }[];
  /**
   * A daily quota that resets at midnight in `timeZone` (PL: 100 searches a day per IP address; one
   * more blocks the address until midnight, the ministry's web search included).
   */
  daily: { requests: number; timeZone: string } | null;
  /** Numbers one request may carry (PL 30, CZ 100, RO 100, FI 1). */
  numbersPerRequest: number;
  /**
   * Requests one lookup makes when it is more than one (SK asks its list of VAT payers and then the
   * list of grounds for cancellation or of deregistered payers); absent: one. The permits and rate
   * layers take this many.
   */
  requestsPerLookup?: number;
  /** A daily maintenance window in which the register answers only that it is in maintenance. */
  maintenance: { from: string; to: string; timeZone: string } | null;
  /** Whether these figures are the register's published ones (`true`) or third-party reports (`false`). */
  published: boolean;
  /** Where the figures come from. */
  source: string;
}

export interface NationalRegistryClient {
  readonly source: NationalSource;
  /** The one VAT prefix this register answers for. */
  readonly country: string;
  readonly limits: NationalLimits;
  lookup(request: NationalLookup): Promise<NationalResult>;
  /**
   * Several numbers of this register in as few requests as `limits.numbersPerRequest` allows,
   * answered in the order asked; a request that fails makes each of its numbers unavailable.
   * Absent where the register takes one number per request.
   */
  lookupMany?(requests: NationalLookup[]): Promise<NationalResult[]>;
}

function retryable(reason: UnavailableReason): boolean {
  return reason === 'throttled' || reason === 'down' || reason === 'timeout' || reason === 'bad_response';
}

/** The unavailable result of a national register, like `unavailable` (http.ts) for the registries. */
export function nationalUnavailable(
  source: NationalSource,
  reason: UnavailableReason,
  message: string,
  extra: { upstreamCode?: string; retryAfterSeconds?: number; retryable?: boolean } = {},
): NationalUnavailable {
  const result: NationalUnavailable = {
    kind: 'unavailable',
    source,
    reason,
    retryable: extra.retryable ?? retryable(reason),
    message,
  };
  if (extra.upstreamCode !== undefined) result.upstreamCode = extra.upstreamCode;
  if (extra.retryAfterSeconds !== undefined) result.retryAfterSeconds = extra.retryAfterSeconds;
  return result;
}
