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

export type SupplyType = 'goods' | 'services' | 'digital_services';
export type Mechanism = 'standard' | 'reverse_charge' | 'zero_rated' | 'out_of_scope';
export type CustomerType = 'business' | 'consumer';
/** Which invoice mention a decision needs (see `notes.ts`); null when none is required. */
export type NoteKind = 'reverse_charge' | 'intra_community_supply' | 'export' | 'out_of_scope';

/** The EU-wide threshold of Art. 59c(1)(c), in euros, excluding VAT. */
export const OSS_THRESHOLD_EUR = 10_000;

/** The 27 member states, ISO 3166-1 alpha-2 (Greece is GR here, EL only in VAT numbers). */
export const MEMBER_STATES: ReadonlySet<string> = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '),
);

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

const DIRECTIVE = 'Council Directive 2006/112/EC';

/** True for a country the seller may be established in for this supply type. */
export function sellerSupported(country: string, supplyType: SupplyType): boolean {
  return MEMBER_STATES.has(country) || (country === 'XI' && supplyType === 'goods');
}

/** Member state for the purpose of this supply: XI counts for goods only. */
function inEu(country: string, supplyType: SupplyType): boolean {
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

type Draft = Omit<Decision, 'rate' | 'standardRate' | 'legalBasis' | 'customerType' | 'noteArticle'> & {
  legalBasis?: string;
  noteArticle?: string | null;
};

/** The sale as the rules read it: both countries, their names, and whether the buyer is a business. */
interface Sale {
  input: DecideInput;
  /** The seller's and the buyer's country. */
  S: string;
  B: string;
  business: boolean;
  sellerName: string;
  buyerName: string;
}

/** A supply of services as the rules read it: what is supplied, and where a UK buyer is. */
interface ServiceSale extends Sale {
  digital: boolean;
  what: string;
  buyerInEu: boolean;
  /** The buyer's country for services (Northern Ireland is part of the United Kingdom). */
  place: string;
  ukNote: string;
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

/** Goods: domestic (Art. 32), Northern Ireland to Great Britain, intra-Community (Art. 138, 33(a)), export (Art. 146). */
function goods(sale: Sale): Draft {
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
function services(sale: Sale): Draft {
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
