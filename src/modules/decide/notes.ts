// Invoice mentions, in English and in the official language(s) of the buyer's country.
//
// Reverse charge — Art. 226(11a) of Council Directive 2006/112/EC (inserted by Council Directive
// 2010/45/EU) requires the mention "Reverse charge" when the customer is liable for the tax. Each
// language version of Directive 2010/45/EU gives the wording member states expect; the table below
// follows those language versions as listed by the German Federal Ministry of Finance (BMF letter
// of 25 October 2013, BStBl. 2013 I p. 1305), which gives the English words for Slovenian. Croatia
// acceded after 2010; its wording, "prijenos porezne obveze", is the one listed by the German-Croatian
// Chamber of Commerce (reproduced in the IHK Rheinhessen table of invoice mentions). Irish has no
// version of Directive 2010/45/EU (the derogation for Irish then in force), so Ireland's mention is
// the English one.
//
// Exempt intra-Community supply and export — Art. 226(11) requires "a reference to the applicable
// provision of this Directive, or to the corresponding national provision, or any other reference
// indicating that the supply is exempt". The mentions below refer to Art. 138 and Art. 146 of the
// Directive itself, so they are correct whichever member state the seller is in (a national
// reference, such as "article 262 ter I du CGI" or "§ 4 Nr. 1 Buchst. b UStG", is valid only for a
// seller registered in that state). Directive abbreviations per language as in the official
// language versions of the Directive's title (EG, CE, ES, WE, …).
//
// Out of scope — no mention is required by the Directive; the note says why no EU VAT is charged.

import type { NoteKind } from './treatment.js';

export interface InvoiceNote {
  /** The mention in English. */
  text: string;
  /** The same mention in the official language(s) of the buyer's country (ISO 639-1), English excluded. */
  translations: { language: string; text: string }[];
}

/** Official languages of a country that have a version of the Directive (and Norwegian, Bokmål). */
export const COUNTRY_LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  AT: ['de'],
  BE: ['nl', 'fr', 'de'],
  BG: ['bg'],
  // Turkish is also official in Cyprus, but has no version of the Directive.
  CY: ['el'],
  CZ: ['cs'],
  DE: ['de'],
  DK: ['da'],
  EE: ['et'],
  ES: ['es'],
  FI: ['fi', 'sv'],
  FR: ['fr'],
  GR: ['el'],
  HR: ['hr'],
  HU: ['hu'],
  IE: ['en'],
  IT: ['it'],
  LT: ['lt'],
  // Luxembourgish has no version of the Directive; French and German are used for VAT.
  LU: ['fr', 'de'],
  LV: ['lv'],
  MT: ['mt', 'en'],
  NL: ['nl'],
  PL: ['pl'],
  PT: ['pt'],
  RO: ['ro'],
  SE: ['sv'],
  SI: ['sl'],
  SK: ['sk'],
  XI: ['en'],
  GB: ['en'],
  // Outside the EU: the languages the export and out-of-scope notes exist in.
  CH: ['de', 'fr', 'it'],
  LI: ['de'],
  NO: ['nb'],
  MC: ['fr'],
  SM: ['it'],
  VA: ['it'],
  AD: [],
  IS: [],
};

const REVERSE_CHARGE: Readonly<Record<string, string>> = {
  bg: 'Обратно начисляване',
  cs: 'Daň odvede zákazník',
  da: 'Omvendt betalingspligt',
  de: 'Steuerschuldnerschaft des Leistungsempfängers',
  el: 'Αντίστροφη επιβάρυνση',
  es: 'Inversión del sujeto pasivo',
  et: 'Pöördmaksustamine',
  fi: 'Käännetty verovelvollisuus',
  fr: 'Autoliquidation',
  hr: 'Prijenos porezne obveze',
  hu: 'Fordított adózás',
  it: 'Inversione contabile',
  lt: 'Atvirkštinis apmokestinimas',
  lv: 'Nodokļa apgrieztā maksāšana',
  mt: 'Inverżjoni tal-ħlas',
  nl: 'Btw verlegd',
  pl: 'Odwrotne obciążenie',
  pt: 'Autoliquidação',
  ro: 'Taxare inversă',
  sk: 'Prenesenie daňovej povinnosti',
  sl: 'Reverse charge',
  sv: 'Omvänd betalningsskyldighet',
};

const INTRA_COMMUNITY_SUPPLY: Readonly<Record<string, string>> = {
  bg: 'Освободена вътреобщностна доставка на стоки (чл. 138 от Директива 2006/112/ЕО)',
  cs: 'Osvobozené dodání zboží do jiného členského státu (čl. 138 směrnice 2006/112/ES)',
  da: 'Momsfri levering af varer til et andet EU-land (artikel 138 i direktiv 2006/112/EF)',
  de: 'Steuerfreie innergemeinschaftliche Lieferung (Art. 138 der Richtlinie 2006/112/EG)',
  el: 'Απαλλασσόμενη ενδοκοινοτική παράδοση αγαθών (άρθρο 138 της οδηγίας 2006/112/ΕΚ)',
  es: 'Entrega intracomunitaria de bienes exenta (artículo 138 de la Directiva 2006/112/CE)',
  et: 'Maksuvaba ühendusesisene kaubatarne (direktiivi 2006/112/EÜ artikkel 138)',
  fi: 'Veroton yhteisömyynti (direktiivin 2006/112/EY 138 artikla)',
  fr: 'Livraison intracommunautaire exonérée de TVA (article 138 de la directive 2006/112/CE)',
  hr: 'Oslobođena isporuka dobara unutar Unije (članak 138. Direktive 2006/112/EZ)',
  hu: 'Adómentes Közösségen belüli termékértékesítés (a 2006/112/EK irányelv 138. cikke)',
  it: 'Cessione intracomunitaria non imponibile (articolo 138 della direttiva 2006/112/CE)',
  lt: 'PVM neapmokestinamas prekių tiekimas į kitą valstybę narę (Direktyvos 2006/112/EB 138 straipsnis)',
  lv: 'Ar PVN neapliekama preču piegāde Kopienas iekšienē (Direktīvas 2006/112/EK 138. pants)',
  mt: 'Provvista intra-Komunitarja eżentata (Artikolu 138 tad-Direttiva 2006/112/KE)',
  nl: 'Vrijgestelde intracommunautaire levering (artikel 138 van Richtlijn 2006/112/EG)',
  pl: 'Wewnątrzwspólnotowa dostawa towarów (art. 138 dyrektywy 2006/112/WE)',
  pt: 'Transmissão intracomunitária de bens isenta (artigo 138.º da Diretiva 2006/112/CE)',
  ro: 'Livrare intracomunitară scutită de TVA (articolul 138 din Directiva 2006/112/CE)',
  sk: 'Oslobodené dodanie tovaru do iného členského štátu (článok 138 smernice 2006/112/ES)',
  sl: 'Oproščena dobava blaga znotraj Skupnosti (člen 138 Direktive 2006/112/ES)',
  sv: 'Gemenskapsintern varuleverans, undantagen från mervärdesskatt (artikel 138 i direktiv 2006/112/EG)',
};

// Exports and out-of-scope supplies go to buyers outside the EU; the notes exist in the languages of
// the neighbouring countries that use a Directive language (CH, LI, MC, SM, VA) and in Norwegian.
const EXPORT: Readonly<Record<string, string>> = {
  de: 'Steuerfreie Ausfuhrlieferung (Art. 146 der Richtlinie 2006/112/EG)',
  fr: 'Exportation exonérée de TVA (article 146 de la directive 2006/112/CE)',
  it: "Cessione all'esportazione non imponibile (articolo 146 della direttiva 2006/112/CE)",
  nb: 'Merverdiavgiftsfri eksport (artikkel 146 i direktiv 2006/112/EF)',
};

const OUT_OF_SCOPE: Readonly<Record<string, (article: string) => string>> = {
  de: (a) =>
    `Nicht im Anwendungsbereich der EU-Mehrwertsteuer: Leistungsort außerhalb der EU (Art. ${a} der Richtlinie 2006/112/EG)`,
  fr: (a) =>
    `Hors du champ d'application de la TVA de l'UE : lieu de prestation hors de l'UE (article ${a} de la directive 2006/112/CE)`,
  it: (a) =>
    `Operazione fuori campo IVA UE: luogo della prestazione fuori dall'UE (articolo ${a} della direttiva 2006/112/CE)`,
  nb: (a) =>
    `Utenfor EUs merverdiavgiftsområde: leveringssted utenfor EU (artikkel ${a} i direktiv 2006/112/EF)`,
};

const ENGLISH = {
  reverse_charge: () =>
    'Reverse charge: VAT to be accounted for by the recipient (Article 196 of Council Directive 2006/112/EC)',
  intra_community_supply: () =>
    'Exempt intra-Community supply of goods (Article 138 of Council Directive 2006/112/EC)',
  export: () => 'Exempt export of goods (Article 146 of Council Directive 2006/112/EC)',
  out_of_scope: (a: string) =>
    `Outside the scope of EU VAT: place of supply outside the EU (Article ${a} of Council Directive 2006/112/EC)`,
} satisfies Record<NoteKind, (article: string) => string>;

function localText(kind: NoteKind, language: string, article: string): string | undefined {
  switch (kind) {
    case 'reverse_charge':
      return REVERSE_CHARGE[language];
    case 'intra_community_supply':
      return INTRA_COMMUNITY_SUPPLY[language];
    case 'export':
      return EXPORT[language];
    case 'out_of_scope':
      return OUT_OF_SCOPE[language]?.(article);
  }
}

/** The invoice mention of a decision, in English and the buyer country's languages. */
export function invoiceNote(kind: NoteKind, buyerCountry: string, article = ''): InvoiceNote {
  const translations: InvoiceNote['translations'] = [];
  for (const language of COUNTRY_LANGUAGES[buyerCountry] ?? []) {
    if (language === 'en') continue;
    const text = localText(kind, language, article);
    if (text) translations.push({ language, text });
  }
  return { text: ENGLISH[kind](article), translations };
}

export const DISCLAIMER =
  'Determined automatically from the data supplied and the general rules of Council Directive 2006/112/EC. ' +
  'It does not cover reduced rates, exemptions for particular goods or services, domestic reverse-charge schemes, ' +
  'special schemes (margin schemes, triangulation, call-off stock), special territories (such as the Canary Islands, ' +
  'the Åland Islands or Mount Athos), or the particular place-of-supply rules for services connected with immovable ' +
  'property, passenger transport, admission to events, restaurant services and the hire of means of transport. ' +
  'It is not tax advice.';
