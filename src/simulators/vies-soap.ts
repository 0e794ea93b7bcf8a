/**
 * The VIES simulator's SOAP wire format (`checkVatService`, `checkVatTestService`): reading a
 * request the way the real endpoint does (a non-XML content type answers the WebLogic HTML
 * "Error 500--Internal Server Error" page, a non-empty SOAPAction "does not match an operation", a
 * body that is not XML "Error reading XMLStreamReader.") and writing its `env:`/`ns2:` answers and
 * `env:Fault`s. What it answers is decided in vies.ts.
 */
import type { IncomingMessage } from 'node:http';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { SOAP_MATCH_CODES, traderSent } from './vies-approx.js';
import type { CheckOutcome } from './vies-outcome.js';

const soapParser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
});

const brusselsDate = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Brussels',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  timeZoneName: 'longOffset',
});

/** SOAP `xsd:date` with the Brussels offset, e.g. `2022-08-15+02:00`. */
export function soapDate(date: Date): string {
  const parts = Object.fromEntries(brusselsDate.formatToParts(date).map((p) => [p.type, p.value]));
  const offset = (parts.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  return `${parts.year}-${parts.month}-${parts.day}${offset}`;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function soapFault(faultcode: string, faultstring: string): string {
  return (
    '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Header/><env:Body>' +
    `<env:Fault><faultcode>${faultcode}</faultcode><faultstring>${escapeXml(faultstring)}</faultstring></env:Fault>` +
    '</env:Body></env:Envelope>'
  );
}

const WEBLOGIC_500 =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Draft//EN">\n<HTML>\n<HEAD>\n<TITLE>Error 500--Internal Server Error</TITLE>\n' +
  '</HEAD>\n<BODY bgcolor="white">\n<FONT FACE=Helvetica><BR CLEAR=all>\n<TABLE border=0 cellspacing=5><TR><TD><BR CLEAR=all>\n' +
  '<FONT FACE="Helvetica" COLOR="black" SIZE="3"><H2>Error 500--Internal Server Error</H2>\n</FONT></TD></TR>\n</TABLE>\n' +
  '</FONT>\n</BODY>\n</HTML>\n';

export type SoapRequest =
  | { kind: 'request'; approx: boolean; field: (name: string) => string }
  | { kind: 'reply'; status: number; contentType: string; body: string };

const xmlReply = (body: string): SoapRequest => ({
  kind: 'reply',
  status: 500,
  contentType: 'text/xml;charset=UTF-8',
  body,
});

/** The operation and its fields, or the reply the real endpoint gives to a request it cannot read. */
export function readSoapRequest(req: IncomingMessage, body: Buffer): SoapRequest {
  const contentType = String(req.headers['content-type'] ?? '');
  if (!/text\/xml/i.test(contentType)) {
    return { kind: 'reply', status: 500, contentType: 'text/html', body: WEBLOGIC_500 };
  }
  const action = String(req.headers.soapaction ?? '').trim();
  if (action !== '' && action !== '""') {
    return xmlReply(
      soapFault(
        'env:Client',
        `The given SOAPAction ${action.replace(/"/g, '')} does not match an operation.`,
      ),
    );
  }
  const text = body.toString('utf8');
  if (text.trim() === '' || XMLValidator.validate(text) !== true) {
    return xmlReply(soapFault('env:Client', 'Error reading XMLStreamReader.'));
  }
  const parsed = soapParser.parse(text) as Record<string, unknown>;
  const envelope = parsed.Envelope as Record<string, unknown> | undefined;
  const soapBody = (envelope?.Body ?? {}) as Record<string, unknown>;
  const approx = soapBody.checkVatApprox !== undefined;
  const request = (approx ? soapBody.checkVatApprox : soapBody.checkVat) as
    | Record<string, unknown>
    | undefined;
  if (request === undefined || request === null || typeof request !== 'object') {
    const operation = Object.keys(soapBody)[0] ?? 'none';
    return xmlReply(
      soapFault(
        'env:Client',
        `Cannot find dispatch method for {urn:ec.europa.eu:taxud:vies:services:checkVat:types}${operation}`,
      ),
    );
  }
  const field = (name: string) => (typeof request[name] === 'string' ? (request[name] as string) : '');
  return { kind: 'request', approx, field };
}

const el = (name: string, value: string) => `<ns2:${name}>${escapeXml(value)}</ns2:${name}>`;

type Answer = Extract<CheckOutcome, { kind: 'answer' }>;

/**
 * `checkVatApprox`'s trader elements in the WSDL's order. A member state that discloses no name
 * answers the name sent, and the street, postcode and town come back as sent, with the verdicts
 * as `matchCode`s, when trader fields were sent (the Spanish answer recorded in
 * infiniteloopltd/CheckVatNumberSpain `README.md`).
 */
function approxElements(outcome: Answer): string {
  const sent = traderSent(outcome.trader);
  const name =
    outcome.name === '---' && outcome.trader.name.trim() !== '' ? outcome.trader.name : outcome.name;
  let inner = el('traderName', name) + el('traderCompanyType', '---') + el('traderAddress', outcome.address);
  if (!sent) return inner;
  if (outcome.trader.street !== '') inner += el('traderStreet', outcome.trader.street);
  if (outcome.trader.postcode !== '') inner += el('traderPostcode', outcome.trader.postcode);
  if (outcome.trader.city !== '') inner += el('traderCity', outcome.trader.city);
  const code = (field: keyof Answer['traderMatch']) => SOAP_MATCH_CODES[outcome.traderMatch[field]];
  return (
    inner +
    el('traderNameMatch', code('name')) +
    el('traderCompanyTypeMatch', code('companyType')) +
    el('traderStreetMatch', code('street')) +
    el('traderPostcodeMatch', code('postcode')) +
    el('traderCityMatch', code('city'))
  );
}

/** The `checkVatResponse` or `checkVatApproxResponse` envelope of an answer. */
export function soapAnswer(approx: boolean, outcome: Answer): string {
  const common =
    el('countryCode', outcome.countryCode) +
    el('vatNumber', outcome.vatNumber) +
    el('requestDate', soapDate(outcome.requestDate)) +
    el('valid', String(outcome.valid));
  const inner = approx
    ? common + approxElements(outcome) + el('requestIdentifier', outcome.requestIdentifier)
    : common + el('name', outcome.name) + el('address', outcome.address);
  const operation = approx ? 'checkVatApproxResponse' : 'checkVatResponse';
  return (
    '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Header/><env:Body>' +
    `<ns2:${operation} xmlns:ns2="urn:ec.europa.eu:taxud:vies:services:checkVat:types">${inner}</ns2:${operation}>` +
    '</env:Body></env:Envelope>'
  );
}
