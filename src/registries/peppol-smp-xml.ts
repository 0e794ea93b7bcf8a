/**
 * Reading the XML an SMP sends: a ServiceGroup (the document types a participant has metadata
 * for) and a Peppol Directory business card. Namespace-aware, whatever prefixes the SMP uses:
 * phoss-smp writes `smp:`/`id:` prefixes, Oxalis-based SMPs a default namespace and `ns2:`/`ns3:`.
 *
 * Safe by construction: a document with a document type declaration (`<!DOCTYPE`, the carrier of
 * entity definitions and so of "billion laughs" expansion and external entities) is refused before
 * any parsing, since no SMP document has one; entities are never expanded (only the five predefined
 * ones and character references are decoded, into text that is not parsed again).
 *
 * Shapes read:
 * - Peppol SMP 1.x (`http://busdox.org/serviceMetadata/publishing/1.0/`): ServiceGroup /
 *   ServiceMetadataReferenceCollection / ServiceMetadataReference@href, the participant in
 *   `http://busdox.org/transport/identifiers/1.0/` ParticipantIdentifier;
 * - OASIS BDXR SMP 1.0 (`http://docs.oasis-open.org/bdxr/ns/SMP/2016/05`): the same elements in
 *   one namespace;
 * - OASIS BDXR SMP 2.0 (`http://docs.oasis-open.org/bdxr/ns/SMP/2/ServiceGroup`): ParticipantID and
 *   ServiceReference/ID with their schemeID;
 * - business cards of the Peppol Directory, 2016-01-12, 2016-11-23 and 2018-06-21 namespaces.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { excerpt, looksLikeHtml, registryText } from './http.js';

export const NS = Object.freeze({
  busdoxPublishing: 'http://busdox.org/serviceMetadata/publishing/1.0/',
  busdoxIdentifiers: 'http://busdox.org/transport/identifiers/1.0/',
  bdxr1: 'http://docs.oasis-open.org/bdxr/ns/SMP/2016/05',
  bdxr2ServiceGroup: 'http://docs.oasis-open.org/bdxr/ns/SMP/2/ServiceGroup',
  bdxr2Basic: 'http://docs.oasis-open.org/bdxr/ns/SMP/2/BasicComponents',
  bdxr2Aggregate: 'http://docs.oasis-open.org/bdxr/ns/SMP/2/AggregateComponents',
});

export const BUSINESS_CARD_NAMESPACES: readonly string[] = Object.freeze([
  'http://www.peppol.eu/schema/pd/businesscard/20160112/',
  'http://www.peppol.eu/schema/pd/businesscard/20161123/',
  'http://www.peppol.eu/schema/pd/businesscard/20180621/',
]);

export interface XmlElement {
  /** The namespace URI, or null for an element in no namespace. */
  ns: string | null;
  local: string;
  /** Attributes by their name as written (prefix included), xmlns declarations left out. */
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, decoded and trimmed. */
  text: string;
}

export type XmlRead = { ok: true; root: XmlElement } | { ok: false; message: string };

const parser = new XMLParser({
  ignoreAttributes: false,
  preserveOrder: true,
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  trimValues: true,
  commentPropName: false,
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The five predefined entities and character references, decoded once. */
export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|lt|gt|amp|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return PREDEFINED[ref] ?? whole;
    const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

type Node = Record<string, unknown>;

/** Elements deeper than this are left out: no SMP document nests more than a few levels. */
const MAX_DEPTH = 32;

function build(name: string, node: Node, scope: Record<string, string>, depth = 0): XmlElement {
  const raw = (node[':@'] ?? {}) as Record<string, string>;
  const own: Record<string, string> = { ...scope };
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    const attribute = key.replace(/^@_/, '');
    if (attribute === 'xmlns') own[''] = value;
    else if (attribute.startsWith('xmlns:')) own[attribute.slice(6)] = value;
    else attributes[attribute] = decodeXmlText(value);
  }
  const colon = name.indexOf(':');
  const prefix = colon >= 0 ? name.slice(0, colon) : '';
  const local = colon >= 0 ? name.slice(colon + 1) : name;
  const children: XmlElement[] = [];
  let text = '';
  for (const child of (node[name] ?? []) as Node[]) {
    if (typeof child['#text'] === 'string') text += child['#text'];
    const childName = Object.keys(child).find((key) => key !== ':@' && key !== '#text');
    if (childName && !childName.startsWith('?') && depth < MAX_DEPTH) {
      children.push(build(childName, child, own, depth + 1));
    }
  }
  return { ns: own[prefix] ?? null, local, attributes, children, text: decodeXmlText(text).trim() };
}

/** Parses a whole document into its root element; refuses DTDs, HTML and malformed XML. Never throws. */
export function readXml(body: string): XmlRead {
  if (body.trim() === '') return { ok: false, message: 'an empty body' };
  if (/<!DOCTYPE|<!ENTITY/i.test(body)) {
    if (looksLikeHtml(body) || /<!DOCTYPE\s+html/i.test(body)) return { ok: false, message: 'an HTML page' };
    return { ok: false, message: 'XML with a document type declaration (refused: SMP documents have none)' };
  }
  if (looksLikeHtml(body)) return { ok: false, message: 'an HTML page' };
  if (XMLValidator.validate(body) !== true)
    return { ok: false, message: `not well-formed XML: ${excerpt(body)}` };
  try {
    for (const node of parser.parse(body) as Node[]) {
      const name = Object.keys(node).find((key) => key !== ':@' && key !== '#text');
      if (name && !name.startsWith('?')) return { ok: true, root: build(name, node, {}) };
    }
  } catch {
    return { ok: false, message: `unreadable XML: ${excerpt(body)}` };
  }
  return { ok: false, message: `XML without a root element: ${excerpt(body)}` };
}

function child(element: XmlElement, ns: string, local: string): XmlElement | undefined {
  return element.children.find((c) => c.ns === ns && c.local === local);
}

function childrenOf(element: XmlElement, ns: string, local: string): XmlElement[] {
  return element.children.filter((c) => c.ns === ns && c.local === local);
}

export interface ServiceGroupDocument {
  /** `busdox`, `bdxr1` or `bdxr2`. */
  shape: 'busdox' | 'bdxr1' | 'bdxr2';
  /** `scheme::value` of the participant the document is for, as the SMP wrote it; null when absent. */
  participant: string | null;
  /** Document type identifiers `scheme::value`, in the document's order, without repeats. */
  documentTypes: string[];
  /** References whose document type could not be read (no `/services/` part, bad escaping). */
  unreadable: number;
}

/**
 * The document type of a ServiceMetadataReference href: the part after the last `/services/`,
 * URL-decoded (SMPs write it encoded, `busdox-docid-qns%3A%3Aurn%3Aoasis…`; some leave `::` and
 * `#` as they are, so the href is not parsed as a URL: its `##` would be taken for a fragment).
 */
export function documentTypeOfHref(href: string): string | null {
  const at = href.lastIndexOf('/services/');
  if (at < 0) return null;
  const tail = href.slice(at + '/services/'.length);
  let decoded: string;
  try {
    decoded = decodeURIComponent(tail);
  } catch {
    return null;
  }
  return /^[A-Za-z0-9._-]+::\S+$/.test(decoded) ? decoded : null;
}

function identifier(element: XmlElement | undefined, schemeAttribute: string): string | null {
  if (!element || element.text === '') return null;
  const scheme = element.attributes[schemeAttribute];
  return scheme ? `${scheme}::${element.text}` : element.text;
}

/** Reads a ServiceGroup of any of the three shapes; null when the root is not one. */
export function readServiceGroup(root: XmlElement): ServiceGroupDocument | null {
  if (root.local !== 'ServiceGroup') return null;
  const seen = new Set<string>();
  let unreadable = 0;
  const add = (id: string | null) => {
    if (id === null) unreadable++;
    else seen.add(id);
  };
  if (root.ns === NS.busdoxPublishing || root.ns === NS.bdxr1) {
    const shape = root.ns === NS.bdxr1 ? 'bdxr1' : 'busdox';
    const idNs = shape === 'bdxr1' ? NS.bdxr1 : NS.busdoxIdentifiers;
    const collection = child(root, root.ns, 'ServiceMetadataReferenceCollection');
    for (const reference of collection ? childrenOf(collection, root.ns, 'ServiceMetadataReference') : []) {
      add(documentTypeOfHref(reference.attributes.href ?? ''));
    }
    const participant = identifier(child(root, idNs, 'ParticipantIdentifier'), 'scheme');
    return { shape, participant, documentTypes: [...seen], unreadable };
  }
  if (root.ns === NS.bdxr2ServiceGroup) {
    for (const reference of childrenOf(root, NS.bdxr2Aggregate, 'ServiceReference')) {
      const id = identifier(child(reference, NS.bdxr2Basic, 'ID'), 'schemeID');
      add(id?.includes('::') ? id : null);
    }
    const participant = identifier(child(root, NS.bdxr2Basic, 'ParticipantID'), 'schemeID');
    return { shape: 'bdxr2', participant, documentTypes: [...seen], unreadable };
  }
  return null;
}

export interface BusinessCardDocument {
  /** `scheme::value` of the participant, as written; null when absent. */
  participant: string | null;
  /** The first business entity's (first) name, cleaned; null when none. */
  name: string | null;
  /** The first business entity's country code, upper case; null when none. */
  countryCode: string | null;
  /** How many business entities the card has. */
  entities: number;
}

const MAX_NAME_LENGTH = 500;

/** Reads a business card of any of the three versions; null when the root is not one. */
export function readBusinessCard(root: XmlElement): BusinessCardDocument | null {
  if (root.local !== 'BusinessCard' || !root.ns || !BUSINESS_CARD_NAMESPACES.includes(root.ns)) return null;
  const ns = root.ns;
  const entities = childrenOf(root, ns, 'BusinessEntity');
  const first = entities[0];
  // Version 3 has one Name element per language (text, @language); versions 1 and 2 one Name.
  const rawName = first ? (childrenOf(first, ns, 'Name').find((n) => n.text !== '')?.text ?? '') : '';
  const name = registryText(rawName).replace(/\s+/g, ' ').trim().slice(0, MAX_NAME_LENGTH);
  const country = first ? (child(first, ns, 'CountryCode')?.text ?? '') : '';
  return {
    participant: identifier(child(root, ns, 'ParticipantIdentifier'), 'scheme'),
    name: name === '' ? null : name,
    countryCode: /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null,
    entities: entities.length,
  };
}
