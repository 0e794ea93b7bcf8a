/**
 * Peppol document type identifiers: their parts, their readable names from OpenPeppol's document
 * types code list, and whether a participant that lists one can receive an invoice.
 *
 * A document type identifier is `scheme::root##customization::version` (Peppol Policy for use of
 * Identifiers 4.4, POLICY 15 ff.), e.g. `busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1`.
 * Identifiers are case-sensitive. The customization ID says how the document relates to the
 * European norm EN 16931: `urn:cen.eu:en16931:2017` is the norm itself, `#compliant#<id>` a core
 * invoice usage specification (CIUS: the norm restricted, so every such document is a valid
 * EN 16931 invoice), `#conformant#<id>` or `#extended#<id>` an extension (more than the norm).
 */
import type { CodeListState } from './code-list-types.js';
import { DOCUMENT_TYPE_ROWS, DOCUMENT_TYPES_VERSION } from './document-types.js';

export const DOCUMENT_TYPES_SOURCE = Object.freeze({
  list: 'Peppol Code Lists - Document types',
  version: DOCUMENT_TYPES_VERSION,
  publisher: 'OpenPeppol eDEC',
});

/** The customization of Peppol BIS Billing 3.0 (itself a CIUS of EN 16931). */
export const PEPPOL_BIS_BILLING_3 =
  'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
const EN_16931 = 'urn:cen.eu:en16931:2017';

/** Root elements of an invoice: UBL 2.x Invoice and UN/CEFACT Cross Industry Invoice. */
const INVOICE_ROOTS = new Set([
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice',
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice',
]);

/**
 * - `peppol-bis-billing-3`: Peppol BIS Billing 3.0;
 * - `en16931-cius`: another CIUS of EN 16931 (XRechnung, SI-UBL/NLCIUS, the French CIUS, …);
 * - `en16931`: the norm itself;
 * - `en16931-extension`: an extension of the norm or of a CIUS;
 * - `other`: anything else (orders, catalogues, PINT, pre-EN 16931 BIS, …).
 */
export type BillingKind = 'peppol-bis-billing-3' | 'en16931-cius' | 'en16931' | 'en16931-extension' | 'other';

export interface DocumentTypeParts {
  /** `busdox-docid-qns` or `peppol-doctype-wildcard`. */
  scheme: string;
  /** Everything after `scheme::`. */
  value: string;
  /** `namespace::localName` of the root element. */
  root: string;
  customization: string;
  version: string;
}

export interface DocumentTypeInfo {
  /** `scheme::value`. */
  id: string;
  /** The code list's name, or null for a document type it does not list. */
  name: string | null;
  /** The code list's state, or null for a document type it does not list. */
  state: CodeListState | null;
  /** The code list's category (`Invoice`, `Credit Note`, `Order`, …), or null. */
  category: string | null;
  kind: BillingKind;
  /**
   * Whether this is an invoice that a seller who sends Peppol BIS Billing 3.0 or another EN 16931
   * CIUS can deliver: an invoice root element, and BIS Billing 3.0, a CIUS of EN 16931 or the norm
   * itself, not self-billing. Credit notes, extensions and other documents are not.
   */
  invoice: boolean;
}

const KNOWN: ReadonlyMap<string, { name: string; state: CodeListState; category: string }> = new Map(
  DOCUMENT_TYPE_ROWS.map(([scheme, value, name, state, category]) => [
    `${scheme}::${value}`,
    { name, state, category },
  ]),
);

/** Splits `scheme::root##customization::version`; null when the identifier has another shape. */
export function documentTypeParts(id: string): DocumentTypeParts | null {
  const schemeEnd = id.indexOf('::');
  if (schemeEnd <= 0) return null;
  const scheme = id.slice(0, schemeEnd);
  const value = id.slice(schemeEnd + 2);
  const hashes = value.indexOf('##');
  if (hashes <= 0) return null;
  const root = value.slice(0, hashes);
  const tail = value.slice(hashes + 2);
  const versionAt = tail.lastIndexOf('::');
  if (versionAt <= 0) return null;
  return { scheme, value, root, customization: tail.slice(0, versionAt), version: tail.slice(versionAt + 2) };
}

/** How a customization ID relates to EN 16931. */
export function billingKind(customization: string): BillingKind {
  if (customization === PEPPOL_BIS_BILLING_3) return 'peppol-bis-billing-3';
  if (customization === EN_16931) return 'en16931';
  if (!customization.startsWith(`${EN_16931}#`)) return 'other';
  const steps = customization.slice(EN_16931.length).split('#').slice(1);
  // Pairs of (relation, specification): compliant all the way down is a CIUS.
  if (steps.length % 2 !== 0 || steps.some((step) => step === '')) return 'other';
  for (let i = 0; i < steps.length; i += 2) {
    if (steps[i] !== 'compliant')
      return steps[i] === 'conformant' || steps[i] === 'extended' ? 'en16931-extension' : 'other';
  }
  return 'en16931-cius';
}

/** Name, state, kind and whether it is a receivable invoice, for any document type identifier. */
export function describeDocumentType(id: string): DocumentTypeInfo {
  const known = KNOWN.get(id);
  const parts = documentTypeParts(id);
  const kind = parts ? billingKind(parts.customization) : 'other';
  const invoice =
    parts !== null &&
    INVOICE_ROOTS.has(parts.root) &&
    kind !== 'other' &&
    kind !== 'en16931-extension' &&
    !parts.customization.includes(':selfbilling:');
  return {
    id,
    name: known?.name ?? null,
    state: known?.state ?? null,
    category: known?.category ?? null,
    kind,
    invoice,
  };
}

/** Every document type of the code list with its description, in the list's order. */
export function knownDocumentTypes(): DocumentTypeInfo[] {
  return [...KNOWN.keys()].map(describeDocumentType);
}
