/**
 * Swiss UID register (BFS) client: SOAP `ValidateVatNumber` on `.../V5.0/PublicServices.svc`
 * (SOAPAction `http://www.uid.admin.ch/xmlns/uid-wse/IPublicServices/ValidateVatNumber`), which
 * answers a boolean: whether the number is an active Swiss VAT (MWST) registration. The register
 * returns no name or address for this operation. Faults (HTTP 200 or 500) carry the register's
 * error in `faultstring` and in `detail/*Fault/error`; `Request_limit_exceeded` is its throttle.
 * `valid: false` only from a 2xx `ValidateVatNumberResponse` whose result is `false`; any other body
 * (an HTML page, another envelope, JSON) is unavailability.
 */
import {
  excerpt,
  type FetchFn,
  isRecord,
  looksLikeHtml,
  retryAfterSeconds,
  transportFailure,
  transportFor,
  unavailable,
} from './http.js';
import type { RegistryClient, RegistryLookup, RegistryResult, RegistryUnavailable } from './port.js';
import { escapeXml, parseSoapEnvelope, xmlText } from './vies-soap.js';

export interface BfsClientOptions {
  /** The service endpoint, e.g. `https://www.uid-wse.admin.ch/V5.0/PublicServices.svc`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

export const BFS_NAMESPACE = 'http://www.uid.admin.ch/xmlns/uid-wse';
export const BFS_SOAP_ACTION_VALIDATE = `${BFS_NAMESPACE}/IPublicServices/ValidateVatNumber`;
export const BFS_COUNTRIES: readonly string[] = Object.freeze(['CH']);

/** `CHE-123.456.789 MWST`: the register wants the formatted number with a space before the suffix. */
export function formatSwissVat(digits: string): string {
  return `CHE-${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6, 9)} MWST`;
}

export function createBfsClient(options: BfsClientOptions): RegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  async function lookup(request: RegistryLookup): Promise<RegistryResult> {
    const digits = request.vat.national
      .toUpperCase()
      .replace(/^CHE/, '')
      .replace(/(MWST|TVA|IVA)$/, '')
      .replace(/\D/g, '');
    if (digits.length !== 9) {
      return unavailable('bfs', 'rejected', 'a Swiss UID has 9 digits after CHE');
    }
    const envelope =
      '<?xml version="1.0" encoding="UTF-8"?>' +
      `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:uid="${BFS_NAMESPACE}">` +
      '<soapenv:Header/><soapenv:Body><uid:ValidateVatNumber>' +
      `<uid:vatNumber>${escapeXml(formatSwissVat(digits))}</uid:vatNumber>` +
      '</uid:ValidateVatNumber></soapenv:Body></soapenv:Envelope>';
    const outcome = await send({
      url: options.baseUrl,
      method: 'POST',
      headers: {
        'content-type': 'text/xml; charset=utf-8',
        accept: 'text/xml',
        soapaction: `"${BFS_SOAP_ACTION_VALIDATE}"`,
      },
      body: envelope,
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) return transportFailure('bfs', 'Swiss UID register', outcome);
    const parsed = parseSoapEnvelope(outcome.body);
    if (parsed.kind === 'fault') {
      const result = bfsFault(parsed.faultcode, parsed.faultstring, parsed.detail);
      const retryAfter = retryAfterSeconds(outcome.headers, now());
      return retryAfter !== undefined && result.reason === 'throttled'
        ? { ...result, retryAfterSeconds: retryAfter }
        : result;
    }
    if (parsed.kind === 'not_soap') {
      const what = looksLikeHtml(outcome.body) ? 'an HTML page' : parsed.message;
      if (outcome.status === 429) {
        return unavailable('bfs', 'throttled', 'the Swiss UID register throttled the request (HTTP 429)');
      }
      return unavailable(
        'bfs',
        outcome.status >= 500 ? 'down' : 'bad_response',
        `the Swiss UID register answered HTTP ${outcome.status} with ${what}`,
      );
    }
    const response = parsed.body.ValidateVatNumberResponse;
    const flag = isRecord(response) ? xmlText(response.ValidateVatNumberResult) : null;
    if (flag !== 'true' && flag !== 'false') {
      return unavailable(
        'bfs',
        'bad_response',
        `the Swiss UID register answer has no ValidateVatNumberResult: ${excerpt(outcome.body)}`,
      );
    }
    if (outcome.status < 200 || outcome.status >= 300) {
      return unavailable(
        'bfs',
        outcome.status >= 500 ? 'down' : 'bad_response',
        `the Swiss UID register answered HTTP ${outcome.status} with a ValidateVatNumberResponse`,
      );
    }
    return {
      kind: 'answer',
      source: 'bfs',
      valid: flag === 'true',
      name: null,
      address: null,
      consultationNumber: null,
      checkedAt: now(),
    };
  }

  return { source: 'bfs', countries: BFS_COUNTRIES, lookup };
}

/** Maps a UID register fault (`infrastructureFault`, `businessFault`, `securityFault`, …). */
export function bfsFault(faultcode: string, faultstring: string, detail: unknown): RegistryUnavailable {
  const { kinds, errors } = faultDetail(detail);
  const text = [faultstring, ...errors].join(' ');
  const code = errors[0] ?? (faultstring.trim() || faultcode);
  const message = `the Swiss UID register answered a fault: ${excerpt(faultstring || errors.join(', ') || faultcode, 160)}`;
  if (/request_limit_exceeded|limit/i.test(text)) {
    return unavailable('bfs', 'throttled', message, { upstreamCode: 'Request_limit_exceeded' });
  }
  if (
    kinds.includes('securityFault') ||
    kinds.includes('businessFault') ||
    /client|sender/i.test(faultcode)
  ) {
    return unavailable('bfs', 'rejected', message, { upstreamCode: code });
  }
  return unavailable('bfs', 'down', message, { upstreamCode: code });
}

function faultDetail(detail: unknown): { kinds: string[]; errors: string[] } {
  const kinds: string[] = [];
  const errors: string[] = [];
  if (!isRecord(detail)) return { kinds, errors };
  for (const [key, value] of Object.entries(detail)) {
    if (key.startsWith('@_') || key === '#text') continue;
    kinds.push(key);
    if (isRecord(value)) {
      const error = xmlText(value.error);
      if (error) errors.push(error);
    }
  }
  return { kinds, errors };
}
