import type { RegistryAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { checkDate, dateProblem } from '../../lib/dates.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { RatesService } from '../rates/index.js';
import type { ValidationOutcome, ValidationPort } from '../validation/index.js';
import { validationRefusal } from '../validation/index.js';
import { type ParsedVatNumber, parseVatNumber } from '../vat-numbers/index.js';
import { DISCLAIMER, invoiceNote } from './notes.js';
import { type Decision, type SupplyType, sellerSupported, decide as treat } from './treatment.js';

export * from './data.js';

import {
  type DecideData,
  type DecideRequest,
  type DecideResult,
  type DecideSource,
  type Field,
  normaliseBuyerCountry,
  type Role,
  worstStatus,
} from './data.js';

function formatRefusal(field: Field, reason: string, message: string): Refusal {
  return refusal('invalid_format', `${field}: ${message}`, { reason, field });
}

/** What the offline checks of a decide request settle: the parties and the supply, before any look-up. */
interface Sale {
  seller: ParsedVatNumber;
  buyerCountry: string;
  /** The buyer's normalised VAT number; null for a sale to a consumer. */
  buyerNumber: string | null;
  supplyType: SupplyType;
}

type Answered = Extract<ValidationOutcome, { kind: 'ok' }>;

/** Both look-ups answered: the seller's, and the buyer's unless the buyer is a consumer. */
interface LookUps {
  sellerOutcome: Answered;
  buyerOutcome: Answered | null;
}

/** The refusal of a request with both buyer forms or neither (one is sent, never both). */
function buyerFormRefusal(hasBuyerVat: boolean): Refusal {
  return refusal(
    'invalid_format',
    hasBuyerVat
      ? 'Send either buyer_vat (a sale to a business) or buyer_country (a sale to a consumer), not both.'
      : 'Send buyer_vat (a sale to a business) or buyer_country (a sale to a consumer).',
  );
}

/** The seller's VAT number, parsed, of a country the supply may be decided for. */
function parsedSeller(
  body: DecideRequest,
  supplyType: SupplyType,
): { kind: 'ok'; seller: ParsedVatNumber } | Refusal {
  const seller = parseVatNumber(body.seller_vat);
  if (!seller.ok) {
    if (seller.reason === 'unsupported_country') {
      return refusal(
        'seller_country_unsupported',
        `seller_vat: the seller must be established in an EU member state; ${seller.country} is not one.`,
        { country: seller.country, field: 'seller_vat' },
      );
    }
    return formatRefusal('seller_vat', seller.reason, seller.message);
  }
  if (!sellerSupported(seller.isoCountry, supplyType)) {
    return refusal(
      'seller_country_unsupported',
      seller.isoCountry === 'XI'
        ? 'seller_vat: a Northern Ireland (XI) VAT number counts as an EU number for goods only; services supplied from Northern Ireland fall under UK VAT rules.'
        : `seller_vat: the seller must be established in an EU member state; ${seller.isoCountry} is not one.`,
      { country: seller.isoCountry, field: 'seller_vat' },
    );
  }
  return { kind: 'ok', seller };
}

/** The buyer's country, and VAT number for a sale to a business. */
function parsedBuyer(
  body: DecideRequest,
): { kind: 'ok'; buyerCountry: string; buyerNumber: string | null } | Refusal {
  if (body.buyer_vat !== undefined) {
    const buyer = parseVatNumber(body.buyer_vat);
    if (buyer.ok) return { kind: 'ok', buyerCountry: buyer.isoCountry, buyerNumber: buyer.normalised };
    if (buyer.reason === 'unsupported_country') {
      return refusal('country_unsupported', `buyer_vat: ${buyer.message}`, {
        country: buyer.country,
        field: 'buyer_vat',
      });
    }
    return formatRefusal('buyer_vat', buyer.reason, buyer.message);
  }
  const code = normaliseBuyerCountry(body.buyer_country as string);
  if (code) return { kind: 'ok', buyerCountry: code, buyerNumber: null };
  return refusal(
    'invalid_format',
    'buyer_country must be a two-letter ISO 3166-1 alpha-2 country code, e.g. "FR" (EL and GR are both Greece, XI is Northern Ireland).',
  );
}

function sourceOf(role: Role, o: Answered): DecideSource {
  return {
    role,
    vat_number: o.data.vat_number,
    source: o.meta.source,
    source_status: o.meta.source_status,
    cached: o.meta.cached,
    cached_at: o.meta.cached_at,
    stale_seconds: o.meta.stale_seconds,
  };
}

/**
 * Decide: validates the seller's and the buyer's VAT numbers through the validation port (cache,
 * limiter and degraded answers included), then applies the rules of `treatment.ts` with the rates in
 * force on the supply date.
 */
export function createDecideService(deps: {
  validation: ValidationPort;
  rates: Pick<RatesService, 'rateObject' | 'today'>;
  clock: Clock;
}) {
  const { validation, rates, clock } = deps;

  const standardRate = (country: string, date: string): number | null =>
    rates.rateObject(country.toLowerCase(), date)?.standard_rate ?? null;

  /** The offline checks: no registry is asked about a sale that cannot be decided. */
  function offlineChecks(body: DecideRequest): ({ kind: 'ok' } & Sale) | Refusal {
    const hasBuyerVat = body.buyer_vat !== undefined;
    if (hasBuyerVat === (body.buyer_country !== undefined)) return buyerFormRefusal(hasBuyerVat);
    const supplyType: SupplyType = body.supply_type ?? 'services';
    if (body.supply_date !== undefined) {
      const dateCheck = checkDate(body.supply_date);
      if (!dateCheck.ok) return refusal('invalid_format', dateProblem('supply_date', dateCheck));
    }
    const seller = parsedSeller(body, supplyType);
    if (seller.kind !== 'ok') return seller;
    // Without a supply date, the seller's day is the first guess (settled in `treatmentOf`).
    const firstDay = body.supply_date ?? rates.today(seller.seller.isoCountry);
    if (standardRate(seller.seller.isoCountry, firstDay) === null) {
      return refusal(
        'invalid_format',
        `supply_date: no VAT rates are recorded for ${seller.seller.isoCountry} on ${firstDay}; the rates history does not reach back that far.`,
      );
    }
    const buyer = parsedBuyer(body);
    if (buyer.kind !== 'ok') return buyer;
    return {
      kind: 'ok',
      seller: seller.seller,
      buyerCountry: buyer.buyerCountry,
      buyerNumber: buyer.buyerNumber,
      supplyType,
    };
  }

  /** Both numbers validated at once; a refusal when either could not be answered as proof. */
  async function lookUps(
    sale: Sale,
    principal: ApiKeyPrincipal,
  ): Promise<({ kind: 'ok' } & LookUps) | Refusal> {
    const [sellerOutcome, buyerOutcome] = await Promise.all([
      // A client waits for the decision: the registry permit waits are bounded.
      validation.validate({ vatNumber: sale.seller.normalised, clientWaiting: true }, principal),
      sale.buyerNumber === null
        ? null
        : validation.validate({ vatNumber: sale.buyerNumber, clientWaiting: true }, principal),
    ]);
    if (sellerOutcome.kind !== 'ok') return validationRefusal(sellerOutcome, 'seller_vat');
    if (buyerOutcome && buyerOutcome.kind !== 'ok') return validationRefusal(buyerOutcome, 'buyer_vat');
    // A national register's answer proves a domestic registration only: never a reverse charge.
    if (buyerOutcome?.meta.fallback) return registerOnlyRefusal(buyerOutcome);
    return { kind: 'ok', sellerOutcome, buyerOutcome };
  }

  /**
   * The treatment, on the supply date given, else today in the country whose VAT applies (a rate
   * changes at midnight in the country of taxation), with the day it was decided on.
   */
  function treatmentOf(
    body: DecideRequest,
    sale: Sale,
    buyerOutcome: Answered | null,
  ): { kind: 'ok'; decision: Decision; supplyDate: string } | Refusal {
    const decideOn = (day: string) =>
      treat(
        {
          seller: { country: sale.seller.isoCountry },
          buyer: {
            country: sale.buyerCountry,
            vat: buyerOutcome ? { valid: buyerOutcome.data.valid } : null,
          },
          supplyType: sale.supplyType,
          supplyDate: day,
          salesYtd: body.seller_eu_b2c_sales_ytd ?? null,
          salesLastYear: body.seller_eu_b2c_sales_last_year ?? null,
        },
        standardRate,
        (country) => rates.rateObject(country.toLowerCase(), day)?.country_name ?? country,
      );
    let supplyDate = body.supply_date ?? rates.today(sale.seller.isoCountry);
    let result = decideOn(supplyDate);
    if (body.supply_date === undefined && result.kind === 'ok') {
      const day = rates.today(result.decision.countryOfTaxation);
      if (day !== supplyDate) {
        supplyDate = day;
        result = decideOn(day);
      }
    }
    if (result.kind === 'ok') return { kind: 'ok', decision: result.decision, supplyDate };
    if (result.reason === 'seller_country_unsupported') {
      return refusal('seller_country_unsupported', result.message, { field: 'seller_vat' });
    }
    return refusal('invalid_format', `supply_date: ${result.message}`);
  }

  /** The `data` of the answer: the decision, its invoice note, and both parties' checks. */
  function dataOf(sale: Sale, found: LookUps, d: Decision, supplyDate: string, decidedAt: Date): DecideData {
    const { sellerOutcome, buyerOutcome } = found;
    const names = (country: string) =>
      rates.rateObject(country.toLowerCase(), supplyDate)?.country_name ?? country;
    const sellerWarning = sellerOutcome.data.valid
      ? ''
      : " Note: the registry reports the seller's own VAT number as not valid; a seller needs a valid VAT number for this treatment and for the invoice.";
    const note = d.note ? invoiceNote(d.note, sale.buyerCountry, d.noteArticle ?? '') : null;
    return {
      charge_vat: d.chargeVat,
      rate: d.rate,
      standard_rate: d.standardRate,
      mechanism: d.mechanism,
      country_of_taxation: d.countryOfTaxation,
      legal_basis: d.legalBasis,
      articles: d.articles,
      explanation: d.explanation + sellerWarning,
      invoice_note: note?.text ?? '',
      invoice_note_translations: note?.translations ?? [],
      disclaimer: DISCLAIMER,
      customer_type: d.customerType,
      supply_type: sale.supplyType,
      supply_date: supplyDate,
      oss_threshold: d.threshold
        ? {
            threshold: d.threshold.threshold,
            currency: 'EUR',
            sales_ytd: d.threshold.salesYtd,
            sales_last_year: d.threshold.salesLastYear,
            exceeded: d.threshold.exceeded,
          }
        : null,
      seller_vat: {
        vat_number: sellerOutcome.data.vat_number,
        valid: sellerOutcome.data.valid,
        country: { code: sale.seller.isoCountry, name: names(sale.seller.isoCountry) },
      },
      buyer_vat: buyerOutcome
        ? {
            vat_number: buyerOutcome.data.vat_number,
            valid: buyerOutcome.data.valid,
            country: { code: sale.buyerCountry, name: names(sale.buyerCountry) },
          }
        : null,
      buyer_country: sale.buyerCountry,
      decided_at: decidedAt.toISOString(),
    };
  }

  async function decide(body: DecideRequest, principal: ApiKeyPrincipal): Promise<DecideResult | Refusal> {
    const now = clock.now();
    const sale = offlineChecks(body);
    if (sale.kind !== 'ok') return sale;
    const found = await lookUps(sale, principal);
    if (found.kind !== 'ok') return found;
    const treatment = treatmentOf(body, sale, found.buyerOutcome);
    if (treatment.kind !== 'ok') return treatment;
    const sources = [sourceOf('seller', found.sellerOutcome)];
    if (found.buyerOutcome) sources.push(sourceOf('buyer', found.buyerOutcome));
    return {
      kind: 'ok',
      data: dataOf(sale, found, treatment.decision, treatment.supplyDate, now),
      meta: { source_status: worstStatus(sources.map((s) => s.source_status)), sources },
      valid: found.buyerOutcome ? found.buyerOutcome.data.valid : null,
      answers: [found.sellerOutcome.fresh, found.buyerOutcome?.fresh].filter(
        (answer): answer is RegistryAnswersTable => answer !== undefined,
      ),
    };
  }

  return { decide };
}

/**
 * The decision when VIES could not answer for the buyer and only the buyer's national register did:
 * as when VIES is unavailable (`registry_unavailable`, retry later), naming the register's answer.
 */
function registerOnlyRefusal(buyer: Answered) {
  const fallback = buyer.meta.fallback;
  const retryAfter = 60;
  const said = buyer.data.valid
    ? 'lists it as a domestic VAT registration'
    : 'does not list it as registered';
  return refusal(
    'registry_unavailable',
    `buyer_vat: VIES could not answer for ${buyer.data.vat_number} (${fallback?.reason ?? 'unavailable'}); ` +
      `the national register ${buyer.meta.source} ${said}${fallback?.register_status ? ` (${fallback.register_status})` : ''}, ` +
      'which is not proof of a registration for intra-EU supplies, so no reverse charge is decided; retry when VIES answers.',
    {
      field: 'buyer_vat',
      source: 'vies',
      retry_after_seconds: retryAfter,
      register: {
        source: buyer.meta.source,
        valid: buyer.data.valid,
        registration_scope: 'domestic',
        register_status: fallback?.register_status ?? null,
        checked_at: fallback?.checked_at ?? buyer.data.verified_at,
        consultation_number: fallback?.consultation_number ?? null,
      },
    },
    retryAfter,
  );
}

export type DecideService = ReturnType<typeof createDecideService>;
