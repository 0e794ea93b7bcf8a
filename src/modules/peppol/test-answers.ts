/**
 * What test keys get from `GET /v1/peppol/{identifier}`: a fixed table, never a DNS query nor an
 * SMP request. The companies are the fictitious ones of the Peppol simulators (docs/peppol.md), so a
 * test key and a live key against `openvat simulate` see the same participants. Every other
 * identifier is not registered.
 */
import { PEPPOL_BIS_BILLING_3 } from './document-classes.js';
import type { ParticipantId } from './identifiers.js';
import type { StoredParticipant } from './types.js';

const UBL_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice';
const UBL_CREDIT_NOTE = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote';
const XRECHNUNG_3 = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
const ORDER =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1';

const BIS_INVOICE = `busdox-docid-qns::${UBL_INVOICE}##${PEPPOL_BIS_BILLING_3}::2.1`;
const BIS_CREDIT_NOTE = `busdox-docid-qns::${UBL_CREDIT_NOTE}##${PEPPOL_BIS_BILLING_3}::2.1`;
const XRECHNUNG_UBL = `busdox-docid-qns::${UBL_INVOICE}##${XRECHNUNG_3}::2.1`;

const TEST_SMP = 'https://smp.test.openvat.invalid';
const BELGIAN_CARD = { name: 'Nordlicht Trading BV', country_code: 'BE' };

type TestEntry =
  | { kind: 'registered'; documentTypes: string[]; card: StoredParticipant['business_card'] }
  | { kind: 'smp_unavailable' }
  | { kind: 'sml_unavailable' };

/** The test table: participant identifier → what it answers; with the VAT number it derives from. */
export const PEPPOL_TEST_TABLE: ReadonlyArray<{ id: string; vat: string; entry: TestEntry; answer: string }> =
  [
    {
      id: '0208:0999000030',
      vat: 'BE0999000030',
      entry: { kind: 'registered', documentTypes: [BIS_INVOICE, BIS_CREDIT_NOTE], card: BELGIAN_CARD },
      answer: 'registered, BIS Billing 3.0 invoices and credit notes, business card',
    },
    {
      id: '9925:be0999000030',
      vat: 'BE0999000030',
      entry: { kind: 'registered', documentTypes: [BIS_INVOICE, BIS_CREDIT_NOTE], card: BELGIAN_CARD },
      answer: 'the same company under its VAT number',
    },
    {
      id: '9930:de999000009',
      vat: 'DE999000009',
      entry: {
        kind: 'registered',
        documentTypes: [XRECHNUNG_UBL],
        card: { name: 'Alpen Software GmbH', country_code: 'DE' },
      },
      answer: 'registered, XRechnung 3.0 invoices only (`can_receive_invoices: true`)',
    },
    {
      id: '0192:999000002',
      vat: 'NO999000002',
      entry: { kind: 'registered', documentTypes: [ORDER], card: null },
      answer: 'registered, orders only (`can_receive_invoices: false`)',
    },
    {
      id: '9944:nl999000001b01',
      vat: 'NL999000001B01',
      entry: { kind: 'smp_unavailable' },
      answer: 'registered, `smp_status: "unavailable"` (`can_receive_invoices: null`)',
    },
    {
      id: '9914:atu99990019',
      vat: 'ATU99990019',
      entry: { kind: 'sml_unavailable' },
      answer: '502 `registry_unavailable` with `Retry-After` (the SML answers SERVFAIL)',
    },
  ];

const BY_ID = new Map(PEPPOL_TEST_TABLE.map((row) => [row.id, row.entry]));

/** A test key's answer for one participant, or `unavailable`. */
export function testParticipant(
  participant: ParticipantId,
): { kind: 'answer'; participant: StoredParticipant } | { kind: 'unavailable'; message: string } {
  const entry = BY_ID.get(participant.id);
  const base = { id: participant.id, icd: participant.icd };
  if (!entry) {
    return {
      kind: 'answer',
      participant: {
        ...base,
        registered: false,
        smp_url: null,
        smp_status: null,
        document_types: null,
        business_card: null,
      },
    };
  }
  if (entry.kind === 'sml_unavailable') {
    return { kind: 'unavailable', message: 'Test mode: the Peppol SML answered SERVFAIL.' };
  }
  const smpUrl = `${TEST_SMP}/${participant.icd}`;
  if (entry.kind === 'smp_unavailable') {
    return {
      kind: 'answer',
      participant: {
        ...base,
        registered: true,
        smp_url: smpUrl,
        smp_status: 'unavailable',
        document_types: null,
        business_card: null,
      },
    };
  }
  return {
    kind: 'answer',
    participant: {
      ...base,
      registered: true,
      smp_url: smpUrl,
      smp_status: 'ok',
      document_types: entry.documentTypes,
      business_card: entry.card,
    },
  };
}

/** Markdown table of the test identifiers, for docs/peppol.md and the route's description. */
export function peppolTestTable(): string {
  const rows = PEPPOL_TEST_TABLE.map((row) => `| \`${row.vat}\` | \`${row.id}\` | ${row.answer} |`);
  return ['| VAT number | Participant | Answer |', '|---|---|---|', ...rows].join('\n');
}
