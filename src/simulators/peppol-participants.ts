/**
 * The documented participants of the Peppol simulators (docs/peppol.md): what the simulated SML
 * answers for each one's hashed name, and what its simulated SMP publishes. The VAT numbers are
 * valid (check digits included) and fictitious; each company's other derived identifiers are not
 * registered (NXDOMAIN).
 */

/** The simulated SMPs, mounted under `/peppol-smp/<name>`. */
export type SimulatedSmpName = 'invoices' | 'orders' | 'down' | 'hostile';

/** What the simulated SML answers for a participant's name. */
export type SmlEntry =
  /** The Meta:SMP U-NAPTR record pointing at a simulated SMP (a trailing slash as ELMA's record has, when asked). */
  | { kind: 'smp'; smp: SimulatedSmpName; trailingSlash?: boolean }
  /** Forty NAPTR records, too many for a UDP answer: the answer comes truncated, then whole over TCP. */
  | { kind: 'many_records'; smp: SimulatedSmpName }
  /** A record whose service field holds the SMP URL instead of Meta:SMP (phax/phoss-smp#482). */
  | { kind: 'misconfigured' }
  /** The name exists, with a TXT record and no NAPTR record (NODATA for a NAPTR query). */
  | { kind: 'no_naptr' }
  /** A Meta:SMP record pointing at a private address (10.0.0.1), which an SSRF guard refuses. */
  | { kind: 'private_smp' }
  /** SERVFAIL, REFUSED, or no answer at all, every time. */
  | { kind: 'servfail' | 'refused' | 'no_answer' };

export interface SimulatedParticipant {
  /** `ICD:value`, as the peppol module writes it. */
  id: string;
  /** The company's VAT number. */
  vatNumber: string;
  sml: SmlEntry;
  /** What the SMP holds for it; absent when the SMP does not know the participant (404). */
  smp?: { documentTypes: readonly string[]; businessCard?: { name: string; countryCode: string } };
  /** For docs: what the participant shows. */
  description: string;
}

const UBL_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice';
const UBL_CREDIT_NOTE = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote';
const CII = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice';
const BIS3 = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
const XRECHNUNG_3 = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';

/** Document type identifiers of the Peppol document types code list 9.7. */
export const DOCUMENT_TYPES = Object.freeze({
  bisInvoice: `busdox-docid-qns::${UBL_INVOICE}##${BIS3}::2.1`,
  bisCreditNote: `busdox-docid-qns::${UBL_CREDIT_NOTE}##${BIS3}::2.1`,
  bisCiiInvoice: `busdox-docid-qns::${CII}##${BIS3}::D16B`,
  xrechnungUbl: `busdox-docid-qns::${UBL_INVOICE}##${XRECHNUNG_3}::2.1`,
  xrechnungCii: `busdox-docid-qns::${CII}##${XRECHNUNG_3}::D16B`,
  order:
    'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1',
  orderResponse:
    'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2::OrderResponse##urn:fdc:peppol.eu:poacc:trns:order_response:3::2.1',
  catalogue:
    'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Catalogue-2::Catalogue##urn:fdc:peppol.eu:poacc:trns:catalogue:3::2.1',
});

const BIS_BILLING = [DOCUMENT_TYPES.bisInvoice, DOCUMENT_TYPES.bisCreditNote, DOCUMENT_TYPES.bisCiiInvoice];
const BELGIAN_CARD = { name: 'Nordlicht Trading BV', countryCode: 'BE' };

export const SIMULATED_PARTICIPANTS: readonly SimulatedParticipant[] = [
  {
    id: '0208:0999000030',
    vatNumber: 'BE0999000030',
    sml: { kind: 'smp', smp: 'invoices' },
    smp: { documentTypes: BIS_BILLING, businessCard: BELGIAN_CARD },
    description:
      'Belgian company under its enterprise number: BIS Billing 3.0 invoices and credit notes, business card',
  },
  {
    id: '9925:be0999000030',
    vatNumber: 'BE0999000030',
    sml: { kind: 'smp', smp: 'invoices' },
    smp: { documentTypes: BIS_BILLING, businessCard: BELGIAN_CARD },
    description: 'the same Belgian company under its VAT number',
  },
  {
    id: '9930:de999000009',
    vatNumber: 'DE999000009',
    sml: { kind: 'smp', smp: 'invoices' },
    smp: {
      documentTypes: [DOCUMENT_TYPES.xrechnungUbl, DOCUMENT_TYPES.xrechnungCii],
      businessCard: { name: 'Alpen Software GmbH', countryCode: 'DE' },
    },
    description: 'German company receiving XRechnung 3.0 (UBL and CII) only, business card',
  },
  {
    id: '0192:999000002',
    vatNumber: 'NO999000002',
    sml: { kind: 'smp', smp: 'orders', trailingSlash: true },
    smp: { documentTypes: [DOCUMENT_TYPES.order, DOCUMENT_TYPES.orderResponse, DOCUMENT_TYPES.catalogue] },
    description:
      'Norwegian company registered with orders, order responses and catalogues only; no business card',
  },
  {
    id: '9944:nl999000001b01',
    vatNumber: 'NL999000001B01',
    sml: { kind: 'smp', smp: 'down' },
    description: 'Dutch company whose SMP answers HTTP 500 with an HTML error page',
  },
  {
    id: '0216:003799900008',
    vatNumber: 'FI99900008',
    sml: { kind: 'smp', smp: 'hostile' },
    description: 'Finnish company whose SMP answers an XML bomb (entity expansion)',
  },
  {
    id: '0007:9990000003',
    vatNumber: 'SE999000000301',
    sml: { kind: 'smp', smp: 'hostile' },
    description: 'Swedish company whose SMP answers a ServiceGroup of 50 MB',
  },
  {
    id: '0211:it99900000011',
    vatNumber: 'IT99900000011',
    sml: { kind: 'many_records', smp: 'invoices' },
    smp: { documentTypes: [DOCUMENT_TYPES.bisInvoice] },
    description:
      'Italian company whose SML answer is too large for UDP (read again over TCP): BIS Billing 3.0 invoices',
  },
  {
    id: '9920:esb99900003',
    vatNumber: 'ESB99900003',
    sml: { kind: 'smp', smp: 'invoices' },
    description: 'Spanish company registered in the SML at an SMP that does not know it (404)',
  },
  {
    id: '0184:99900008',
    vatNumber: 'DK99900008',
    sml: { kind: 'misconfigured' },
    description:
      'Danish company whose NAPTR record has no Meta:SMP service (its SMP URL in the service field)',
  },
  {
    id: '0002:999000003',
    vatNumber: 'FR42999000003',
    sml: { kind: 'private_smp' },
    description: 'French company whose SMP address is private (10.0.0.1)',
  },
  {
    id: '9910:hu99900009',
    vatNumber: 'HU99900009',
    sml: { kind: 'no_naptr' },
    description: 'Hungarian company whose name exists in the SML without a NAPTR record (NODATA)',
  },
  {
    id: '9914:atu99990019',
    vatNumber: 'ATU99990019',
    sml: { kind: 'servfail' },
    description: 'Austrian company whose look-up always answers SERVFAIL',
  },
  {
    id: '9945:pl9990000008',
    vatNumber: 'PL9990000008',
    sml: { kind: 'refused' },
    description: 'Polish company whose look-up always answers REFUSED',
  },
  {
    id: '9946:pt999000004',
    vatNumber: 'PT999000004',
    sml: { kind: 'no_answer' },
    description: 'Portuguese company whose look-up is never answered (timeout)',
  },
];
