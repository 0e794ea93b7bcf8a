// The place-of-supply rules of Council Directive 2006/112/EC as `treatment.ts` applies them: each rule
// drafts a decision (where the supply is taxed, whether VAT is charged, the articles and the
// explanation) before the rate of the country of taxation is looked up.

import type { DecideInput, Decision, SupplyType, ThresholdCheck } from './decision.js';

export const DIRECTIVE = 'Council Directive 2006/112/EC';

/** The EU-wide threshold of Art. 59c(1)(c), in euros, excluding VAT. */
export const OSS_THRESHOLD_EUR = 10_000;

/** The 27 member states, ISO 3166-1 alpha-2 (Greece is GR here, EL only in VAT numbers). */
export const MEMBER_STATES: ReadonlySet<string> = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '),
);

/** Member state for the purpose of this supply: XI counts for goods only. */
export function inEu(country: string, supplyType: SupplyType): boolean {
  return MEMBER_STATES.has(country) || (country === 'XI' && supplyType === 'goods');
}

function money(value: number): string {
  return `EUR ${value.toLocaleString('en', { minimumFractionDigits: 0, maximumFractionDigits: 2 })}`;
}

/** Art. 59c: exceeded when the current OR the previous calendar year is above EUR 10,000. */
export function checkThreshold(salesYtd: number | null, salesLastYear: number | null): ThresholdCheck {
  const over = (v: number | null) => v !== null && v > OSS_THRESHOLD_EUR;
  let exceeded: boolean | null;
  if (over(salesYtd) || over(salesLastYear)) exceeded = true;
  else if (salesYtd === null || salesLastYear === null) exceeded = null;
  else exceeded = false;
  return { threshold: OSS_THRESHOLD_EUR, salesYtd, salesLastYear, exceeded };
}

function thresholdSentence(t: ThresholdCheck): string {
  if (t.exceeded === true) {
    const which =
      t.salesYtd !== null && t.salesYtd > OSS_THRESHOLD_EUR
        ? `this year's cross-border B2C sales (${money(t.salesYtd)})`
        : `last year's cross-border B2C sales (${money(t.salesLastYear ?? 0)})`;
    return `The seller's ${which} are above the EU-wide threshold of ${money(OSS_THRESHOLD_EUR)} (Article 59c), so VAT is due in the buyer's country and can be declared through the One-Stop Shop (union scheme, Articles 369a to 369k).`;
  }
  if (t.exceeded === null) {
    return `The EU-wide threshold of ${money(OSS_THRESHOLD_EUR)} (Article 59c) could not be applied because seller_eu_b2c_sales_ytd and seller_eu_b2c_sales_last_year were not both given, so the general rule applies: VAT is due in the buyer's country and can be declared through the One-Stop Shop.`;
  }
  return `The seller's cross-border B2C sales (${money(t.salesYtd ?? 0)} this year, ${money(t.salesLastYear ?? 0)} last year) are not above the EU-wide threshold of ${money(OSS_THRESHOLD_EUR)} (Article 59c), so the seller's own VAT applies, unless the seller has opted for taxation in the buyer's country.`;
}

export type Draft = Omit<
  Decision,
  'rate' | 'standardRate' | 'legalBasis' | 'customerType' | 'noteArticle'
> & {
  legalBasis?: string;
  noteArticle?: string | null;
};

/** The sale as the rules read it: both countries, their names, and whether the buyer is a business. */
export interface Sale {
  input: DecideInput;
  /** The seller's and the buyer's country. */
  S: string;
  B: string;
  business: boolean;
  sellerName: string;
  buyerName: string;
}

/** A supply of services as the rules read it: what is supplied, and where a UK buyer is. */
export interface ServiceSale extends Sale {
  digital: boolean;
  what: string;
  buyerInEu: boolean;
  /** The buyer's country for services (Northern Ireland is part of the United Kingdom). */
  place: string;
  ukNote: string;
}

/** Goods: domestic (Art. 32), Northern Ireland to Great Britain, intra-Community (Art. 138, 33(a)), export (Art. 146). */
export function goods(sale: Sale): Draft {
  const { S, B } = sale;
  if (S === B) return domesticGoods(sale);
  if (S === 'XI' && B === 'GB') return goodsWithinUk();
  if (inEu(B, 'goods')) return sale.business ? intraCommunitySupply(sale) : distanceSaleOfGoods(sale);
  return exportOfGoods(sale);
}

function domesticGoods({ S, sellerName }: Sale): Draft {
  return {
    chargeVat: true,
    mechanism: 'standard',
    countryOfTaxation: S,
    articles: ['32', '193'],
    note: null,
    threshold: null,
    explanation: `A domestic sale of goods: the goods are supplied where they are when the dispatch begins, in ${sellerName} (Articles 31 and 32), and the seller charges ${sellerName}'s VAT (Article 193).`,
  };
}

function goodsWithinUk(): Draft {
  return {
    chargeVat: true,
    mechanism: 'standard',
    countryOfTaxation: 'GB',
    articles: [],
    legalBasis:
      'Windsor Framework: goods moving from Northern Ireland to Great Britain are a supply within the United Kingdom, taxed under UK VAT law; Council Directive 2006/112/EC does not apply.',
    note: null,
    threshold: null,
    explanation: `Goods sent from Northern Ireland to Great Britain stay within the United Kingdom: the seller charges UK VAT.`,
  };
}

function intraCommunitySupply({ B, sellerName, buyerName }: Sale): Draft {
  return {
    chargeVat: false,
    mechanism: 'zero_rated',
    countryOfTaxation: B,
    articles: ['138'],
    note: 'intra_community_supply',
    threshold: null,
    explanation: `An intra-Community supply of goods to a business registered for VAT in ${buyerName}: exempt in ${sellerName} with the right to deduct (Article 138), provided the goods are transported to ${buyerName} and the buyer's VAT number is on the invoice. The buyer declares the intra-Community acquisition in ${buyerName} (Articles 2(1)(b) and 40). The sale is reported in the seller's recapitulative statement (Article 262).`,
  };
}

function distanceSaleOfGoods({ input, S, B, buyerName }: Sale): Draft {
  const t = checkThreshold(input.salesYtd, input.salesLastYear);
  const destination = t.exceeded !== false;
  return {
    chargeVat: true,
    mechanism: 'standard',
    countryOfTaxation: destination ? B : S,
    articles: destination ? ['33(a)'] : ['32', '59c'],
    note: null,
    threshold: t,
    explanation: `An intra-Community distance sale of goods to a consumer in ${buyerName} (Article 14(4)(1)). ${thresholdSentence(t)}`,
  };
}

function exportOfGoods({ S, sellerName, buyerName }: Sale): Draft {
  return {
    chargeVat: false,
    mechanism: 'zero_rated',
    countryOfTaxation: S,
    articles: ['146'],
    legalBasis: `Article 146(1)(a) of ${DIRECTIVE}`,
    note: 'export',
    threshold: null,
    explanation: `An export of goods to ${buyerName}, outside the EU VAT area: exempt in ${sellerName} with the right to deduct (Article 146(1)), provided the goods leave the EU and the export is evidenced by the customs exit record. Import VAT and duties may be due in ${buyerName}.`,
  };
}

/** Services: to a business (Art. 44, 196), to a consumer (Art. 45), digital services to a consumer (Art. 58). */
export function services(sale: Sale): Draft {
  const { input, B } = sale;
  const digital = input.supplyType === 'digital_services';
  const service: ServiceSale = {
    ...sale,
    digital,
    what: digital ? 'telecommunications, broadcasting or electronically supplied services' : 'services',
    buyerInEu: inEu(B, input.supplyType),
    // For services Northern Ireland is part of the United Kingdom.
    place: B === 'XI' ? 'GB' : B,
    ukNote: B === 'XI' ? ' (Northern Ireland counts as part of the United Kingdom for services)' : '',
  };
  if (sale.business) return businessServices(service);
  if (!digital) return consumerServices(service);
  return consumerDigitalServices(service);
}

function businessServices({
  S,
  B,
  what,
  buyerInEu,
  place,
  ukNote,
  sellerName,
  buyerName,
}: ServiceSale): Draft {
  if (B === S) {
    return {
      chargeVat: true,
      mechanism: 'standard',
      countryOfTaxation: S,
      articles: ['44', '193'],
      note: null,
      threshold: null,
      explanation: `Domestic B2B ${what}: the place of supply is where the buyer is established, ${buyerName} (Article 44), which is also the seller's country, so the seller charges ${sellerName}'s VAT (Article 193).`,
    };
  }
  if (buyerInEu) {
    return {
      chargeVat: false,
      mechanism: 'reverse_charge',
      countryOfTaxation: B,
      articles: ['44', '196'],
      note: 'reverse_charge',
      threshold: null,
      explanation: `B2B ${what} to a business registered for VAT in ${buyerName}: the place of supply is where the buyer is established (Article 44), so the seller charges no VAT and the buyer accounts for ${buyerName}'s VAT under the reverse charge (Article 196). The invoice must say "Reverse charge" (Article 226(11a)) and the sale is reported in the seller's recapitulative statement (Article 262).`,
    };
  }
  return {
    chargeVat: false,
    mechanism: 'out_of_scope',
    countryOfTaxation: place,
    articles: ['44'],
    note: 'out_of_scope',
    noteArticle: '44',
    threshold: null,
    explanation: `B2B ${what} to a business in ${buyerName}${ukNote}: the place of supply is where the buyer is established (Article 44), outside the EU, so no EU VAT is charged. The buyer may have to account for VAT in ${buyerName} under its own rules.`,
  };
}

function consumerServices({ S, buyerInEu, sellerName }: ServiceSale): Draft {
  const outside = buyerInEu
    ? ''
    : ' Some services to consumers outside the EU (such as consultancy, legal, accounting, advertising, financial and insurance services, and the supply of staff) are instead supplied where the consumer lives (Article 59) and are outside the scope of EU VAT.';
  return {
    chargeVat: true,
    mechanism: 'standard',
    countryOfTaxation: S,
    articles: ['45'],
    note: null,
    threshold: null,
    explanation: `B2C services: the place of supply is where the seller is established, ${sellerName} (Article 45), so the seller charges ${sellerName}'s VAT.${outside}`,
  };
}

function consumerDigitalServices(sale: ServiceSale): Draft {
  const { input, S, B, what, buyerInEu, place, ukNote, sellerName, buyerName } = sale;
  if (B === S) {
    return {
      chargeVat: true,
      mechanism: 'standard',
      countryOfTaxation: S,
      articles: ['58'],
      note: null,
      threshold: null,
      explanation: `Domestic B2C ${what}: the place of supply is where the consumer lives, ${buyerName} (Article 58), which is also the seller's country, so the seller charges ${sellerName}'s VAT.`,
    };
  }
  if (buyerInEu) {
    const t = checkThreshold(input.salesYtd, input.salesLastYear);
    const destination = t.exceeded !== false;
    return {
      chargeVat: true,
      mechanism: 'standard',
      countryOfTaxation: destination ? B : S,
      articles: destination ? ['58'] : ['59c'],
      note: null,
      threshold: t,
      explanation: `B2C ${what} to a consumer in ${buyerName}: supplied where the consumer lives (Article 58), unless the seller stays under the threshold. ${thresholdSentence(t)}`,
    };
  }
  return {
    chargeVat: false,
    mechanism: 'out_of_scope',
    countryOfTaxation: place,
    articles: ['58'],
    note: 'out_of_scope',
    noteArticle: '58',
    threshold: null,
    explanation: `B2C ${what} to a consumer in ${buyerName}${ukNote}: supplied where the consumer lives (Article 58), outside the EU, so no EU VAT is charged. ${buyerName} may tax these services itself and require the seller to register there (as the United Kingdom, Switzerland, Norway and many other countries do for digital services).`,
  };
}
