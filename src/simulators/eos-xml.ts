/**
 * The XML of the EOS simulator: reading a `validateEORI` request with its namespaces as a JAX-WS
 * endpoint binds it (the operation and its `eori` children must be in `http://eori.ws.eos.dds.s/`;
 * an unqualified child is not bound), and writing the answers and faults in the shapes described
 * in `eos.ts`.
 */
import { XMLParser } from 'fast-xml-parser';

export const EOS_SIM_NAMESPACE = 'http://eori.ws.eos.dds.s/';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

export interface EosTrader {
  name: string;
  street: string;
  postalCode: string;
  city: string;
  country: string;
}

/** One number's result: a status with what is published, or an `errorReason`. */
export type EosResultAnswer = { status: 0 | 1; trader: EosTrader | null } | { errorReason: string };

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A JAX-WS RI fault, as its SOAPFaultBuilder writes one. */
export function eosFault(faultcode: 'S:Client' | 'S:Server', faultstring: string): string {
  return (
    `<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="${SOAP_NS}"><S:Body>` +
    `<S:Fault xmlns:ns4="http://www.w3.org/2003/05/soap-envelope"><faultcode>${faultcode}</faultcode>` +
    `<faultstring>${escapeXml(faultstring)}</faultstring></S:Fault></S:Body></S:Envelope>`
  );
}

const brusselsDay = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/Brussels',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** `dd/MM/yyyy` on Brussels time, as EOS writes `requestDate`. */
export function eosRequestDate(date: Date): string {
  return brusselsDay.format(date);
}

const parser = new XMLParser({
  ignoreAttributes: false,
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // The operation's children (`Envelope.Body.validateEORI.eori`) are read as lists.
  isArray: (_name, jpath, _leaf, isAttribute) =>
    !isAttribute && typeof jpath === 'string' && jpath.split('.').length === 4,
});

type Element = Record<string, unknown>;

function isElement(value: unknown): value is Element {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function localName(name: string): string {
  const at = name.indexOf(':');
  return at === -1 ? name : name.slice(at + 1);
}

/** The namespace of a (prefixed or unprefixed) element name, from the declarations in scope (innermost first). */
function namespaceOf(name: string, scopes: readonly Element[]): string {
  const at = name.indexOf(':');
  const attribute = at === -1 ? '@_xmlns' : `@_xmlns:${name.slice(0, at)}`;
  for (const scope of scopes) {
    const value = scope[attribute];
    if (typeof value === 'string') return value;
  }
  return '';
}

function childElements(element: Element): [string, unknown][] {
  return Object.entries(element).filter(([key]) => !key.startsWith('@_') && key !== '#text');
}

export type ReadRequest =
  | { kind: 'operation'; eoris: string[] }
  | { kind: 'dispatch'; payload: string }
  | { kind: 'not_soap' };

/** The SOAP body's operation and its qualified `eori` children. */
export function readRequest(text: string): ReadRequest {
  const parsed = parser.parse(text) as Element;
  const [envelopeName, envelope] = childElements(parsed).find(([key]) => localName(key) === 'Envelope') ?? [];
  if (!envelopeName || !isElement(envelope) || namespaceOf(envelopeName, [envelope]) !== SOAP_NS) {
    return { kind: 'not_soap' };
  }
  const [bodyName, bodyValue] = childElements(envelope).find(([key]) => localName(key) === 'Body') ?? [];
  const body = Array.isArray(bodyValue) ? bodyValue[0] : bodyValue;
  if (!bodyName || !isElement(body)) return { kind: 'dispatch', payload: '{}' };
  const [operationName, operationValue] = childElements(body)[0] ?? [];
  if (!operationName) return { kind: 'dispatch', payload: '{}' };
  const operation = (Array.isArray(operationValue) ? operationValue[0] : operationValue) ?? '';
  const scope = isElement(operation) ? [operation, body, envelope] : [body, envelope];
  const namespace = namespaceOf(operationName, scope);
  if (namespace !== EOS_SIM_NAMESPACE || localName(operationName) !== 'validateEORI') {
    return { kind: 'dispatch', payload: `{${namespace}}${localName(operationName)}` };
  }
  const eoris: string[] = [];
  if (isElement(operation)) {
    for (const [name, value] of childElements(operation)) {
      if (localName(name) !== 'eori') continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        const own = isElement(item) ? [item, ...scope] : scope;
        if (namespaceOf(name, own) !== EOS_SIM_NAMESPACE) continue; // unqualified: not bound
        const text = isElement(item) ? item['#text'] : item;
        eoris.push(typeof text === 'string' ? text.trim() : '');
      }
    }
  }
  return { kind: 'operation', eoris };
}

export function resultXml(eori: string, expected: EosResultAnswer): string {
  const el = (name: string, value: string) => `<${name}>${escapeXml(value)}</${name}>`;
  if ('errorReason' in expected) {
    return `<result>${el('eori', eori)}${el('status', '1')}${el('statusDescr', 'Not valid')}${el('errorReason', expected.errorReason)}</result>`;
  }
  let inner = el('eori', eori) + el('status', String(expected.status));
  inner += el('statusDescr', expected.status === 0 ? 'Valid' : 'Not valid');
  const trader = expected.trader;
  if (trader) {
    inner +=
      el('name', trader.name) +
      el('street', trader.street) +
      el('postalCode', trader.postalCode) +
      el('city', trader.city) +
      el('country', trader.country);
  }
  return `<result>${inner}</result>`;
}

export function answerXml(inner: string): string {
  return (
    `<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="${SOAP_NS}"><S:Body>` +
    `<ns0:validateEORIResponse xmlns:ns0="${EOS_SIM_NAMESPACE}"><return>${inner}</return></ns0:validateEORIResponse>` +
    '</S:Body></S:Envelope>'
  );
}
