// The VAT treatment of a sale under Council Directive 2006/112/EC (the VAT Directive), as a pure
// function: no I/O, no clock. The service validates the VAT numbers and looks up the rates; this
// module only decides.
//
// Place-of-supply rules applied (article numbers of Directive 2006/112/EC as amended by Directives
// 2008/8/EC and (EU) 2017/2455):
// - goods: Art. 32 (dispatched goods: where the dispatch begins), Art. 33(a) (intra-Community
//   distance sales: where the goods arrive), Art. 59c (the EUR 10,000 threshold), Art. 138
//   (exempt intra-Community supply to a VAT-registered business), Art. 146 (exempt export);
// - services: Art. 44 (to a taxable person: where the customer is established), Art. 45 (to a
//   non-taxable person: where the supplier is established), Art. 58 (telecommunications,
//   broadcasting and electronically supplied services to a non-taxable person: where the customer
//   lives), Art. 59c (the threshold), Art. 196 (the customer accounts for the VAT: reverse charge);
// - who pays: Art. 193 (the supplier).
// Northern Ireland (XI) is treated as a member state for goods and as part of the United Kingdom
// for services (Windsor Framework, Art. 8 and Annex 3).

import type { DecideInput, DecideResult, RateLookup, SupplyType } from './decision.js';
import {
  checkThreshold,
  DIRECTIVE,
  type Draft,
  goods,
  MEMBER_STATES,
  OSS_THRESHOLD_EUR,
  type Sale,
  services,
} from './place-of-supply.js';

export type {
  CustomerType,
  DecideInput,
  DecideResult,
  Decision,
  Mechanism,
  NoteKind,
  RateLookup,
  SupplyType,
  ThresholdCheck,
} from './decision.js';
export { checkThreshold, MEMBER_STATES, OSS_THRESHOLD_EUR };

/** True for a country the seller may be established in for this supply type. */
export function sellerSupported(country: string, supplyType: SupplyType): boolean {
  return MEMBER_STATES.has(country) || (country === 'XI' && supplyType === 'goods');
}

function legalBasis(articles: string[]): string {
  if (articles.length === 0) return '';
  const list =
    articles.length === 1
      ? articles[0]
      : `${articles.slice(0, -1).join(', ')} and ${articles[articles.length - 1]}`;
  return `${articles.length === 1 ? 'Article' : 'Articles'} ${list} of ${DIRECTIVE}`;
}

function pct(rate: number): string {
  return `${rate}%`;
}

/**
 * Decides the VAT treatment of one sale. `rates` gives the standard rate of a country on the supply
 * date; `name` gives a country's English name for the explanation.
 */
export function decide(
  input: DecideInput,
  rates: RateLookup,
  name: (country: string) => string = (c) => c,
): DecideResult {
  const { seller, buyer, supplyType } = input;
  if (!sellerSupported(seller.country, supplyType)) return unsupportedSeller(seller.country);
  const sale: Sale = {
    input,
    S: seller.country,
    B: buyer.country,
    business: buyer.vat?.valid === true,
    sellerName: name(seller.country),
    buyerName: name(buyer.country),
  };
  const draft = supplyType === 'goods' ? goods(sale) : services(sale);
  return priced(sale, draft, rates, name);
}

function unsupportedSeller(S: string): DecideResult {
  return {
    kind: 'undecided',
    reason: 'seller_country_unsupported',
    message:
      S === 'XI'
        ? 'A Northern Ireland (XI) VAT number counts as an EU number for goods only; services supplied from Northern Ireland fall under UK VAT rules.'
        : `The seller must be established in an EU member state; ${S} is not one.`,
  };
}

/** The decision of a draft: the rate charged (refused when it is not recorded), its legal basis and explanation. */
function priced(
  sale: Sale,
  draft: Draft,
  rates: RateLookup,
  name: (country: string) => string,
): DecideResult {
  const { buyer, supplyDate } = sale.input;
  const standardRate = rates(draft.countryOfTaxation, supplyDate);
  if (draft.chargeVat && standardRate === null) {
    return {
      kind: 'undecided',
      reason: 'no_rates',
      country: draft.countryOfTaxation,
      message: `No VAT rates are recorded for ${draft.countryOfTaxation} on ${supplyDate}.`,
    };
  }
  const intro =
    buyer.vat !== null && !buyer.vat.valid
      ? `The registry reports the buyer's VAT number as not valid, so the buyer is treated as a consumer (B2C) and the sale as a sale to a private person. `
      : '';
  const rate = draft.chargeVat ? (standardRate as number) : 0;
  const charged = draft.chargeVat
    ? ` The standard rate of ${name(draft.countryOfTaxation)} on ${supplyDate} is ${pct(rate)}; a reduced rate may apply to some goods and services.`
    : draft.mechanism === 'reverse_charge' && standardRate !== null
      ? ` The standard rate the buyer accounts for in ${name(draft.countryOfTaxation)} on ${supplyDate} is ${pct(standardRate)}.`
      : '';
  return {
    kind: 'ok',
    decision: {
      chargeVat: draft.chargeVat,
      rate,
      standardRate,
      mechanism: draft.mechanism,
      countryOfTaxation: draft.countryOfTaxation,
      articles: draft.articles,
      legalBasis: draft.legalBasis ?? legalBasis(draft.articles),
      customerType: sale.business ? 'business' : 'consumer',
      note: draft.note,
      noteArticle: draft.noteArticle ?? null,
      explanation: `${intro}${draft.explanation}${charged}`,
      threshold: draft.threshold,
    },
  };
}
