/**
 * Brønnøysund Enhetsregisteret client (Norway): `GET /enhetsregisteret/api/enheter/{orgnr}`.
 * A unit is a valid VAT number when it is registered in the VAT register
 * (`registrertIMvaregisteret: true`). `valid: false` only on the register's own word about this unit:
 * the unit with `registrertIMvaregisteret: false`, the register's 404 error body naming the unit's
 * path (no such unit) or its 410 body naming the unit (deleted unit). Any other 404 or 410 (an HTML
 * page from a proxy, an endpoint that moved, another JSON shape) is unavailability, never an answer.
 */
import {
  cleanText,
  excerpt,
  type FetchFn,
  isRecord,
  joinUrl,
  looksLikeHtml,
  parseJson,
  retryAfterSeconds,
  transportFailure,
  transportFor,
  unavailable,
} from './http.js';
import type { RegistryClient, RegistryLookup, RegistryResult } from './port.js';

export interface BrregClientOptions {
  /** API host, e.g. `https://data.brreg.no`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

export const BRREG_COUNTRIES: readonly string[] = Object.freeze(['NO']);
export const BRREG_ACCEPT = 'application/vnd.enhetsregisteret.enhet.v1+json, application/json;q=0.9';

export function createBrregClient(options: BrregClientOptions): RegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  async function lookup(request: RegistryLookup): Promise<RegistryResult> {
    const orgnr = request.vat.national.toUpperCase().replace(/MVA$/, '').replace(/\D/g, '');
    if (orgnr.length !== 9) {
      return unavailable('brreg', 'rejected', 'a Norwegian organisation number has 9 digits');
    }
    const outcome = await send({
      url: joinUrl(options.baseUrl, `/enhetsregisteret/api/enheter/${orgnr}`),
      method: 'GET',
      headers: { accept: BRREG_ACCEPT },
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) return transportFailure('brreg', 'Brønnøysund', outcome);
    const status = outcome.status;
    const received = now();
    if (status === 404 || status === 410) {
      if (!saysUnitNotFound(status, parseJson(outcome.body), orgnr)) {
        const what = looksLikeHtml(outcome.body) ? 'an HTML page' : excerpt(outcome.body);
        return unavailable(
          'brreg',
          'bad_response',
          `Brønnøysund answered HTTP ${status} without the register's answer for unit ${orgnr}: ${what}`,
        );
      }
      return {
        kind: 'answer',
        source: 'brreg',
        valid: false,
        name: null,
        address: null,
        consultationNumber: null,
        checkedAt: received,
      };
    }
    if (status === 200) {
      const json = parseJson(outcome.body);
      if (!isRecord(json) || typeof json.registrertIMvaregisteret !== 'boolean') {
        return unavailable(
          'brreg',
          'bad_response',
          `Brønnøysund answered 200 without registrertIMvaregisteret: ${excerpt(outcome.body)}`,
        );
      }
      if (json.organisasjonsnummer !== orgnr) {
        return unavailable(
          'brreg',
          'bad_response',
          typeof json.organisasjonsnummer === 'string'
            ? `Brønnøysund answered for ${json.organisasjonsnummer} instead of ${orgnr}`
            : `Brønnøysund answered 200 without organisasjonsnummer: ${excerpt(outcome.body)}`,
        );
      }
      return {
        kind: 'answer',
        source: 'brreg',
        valid: json.registrertIMvaregisteret,
        name: cleanText(json.navn),
        address: formatAddress(json.forretningsadresse) ?? formatAddress(json.postadresse),
        consultationNumber: null,
        checkedAt: received,
      };
    }
    if (status === 400)
      return unavailable('brreg', 'rejected', 'Brønnøysund rejected the organisation number (HTTP 400)');
    const retryAfter = retryAfterSeconds(outcome.headers, received);
    const extra = retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {};
    if (status === 429)
      return unavailable('brreg', 'throttled', 'Brønnøysund throttled the request (HTTP 429)', extra);
    if (status === 504)
      return unavailable('brreg', 'timeout', 'Brønnøysund gateway timed out (HTTP 504)', extra);
    if (status >= 500)
      return unavailable('brreg', 'down', `Brønnøysund is unavailable (HTTP ${status})`, extra);
    return unavailable(
      'brreg',
      'bad_response',
      `Brønnøysund answered HTTP ${status}: ${excerpt(outcome.body)}`,
    );
  }

  return { source: 'brreg', countries: BRREG_COUNTRIES, lookup };
}

/**
 * Whether a 404 or 410 body is the register's own word that the unit does not exist or was deleted:
 * for 404 its error body (`{timestamp, status: 404, error, message, path}`) whose `path` is this
 * unit's; for 410 the deleted unit (`{organisasjonsnummer, slettedato, _links}`) with this number.
 */
function saysUnitNotFound(status: 404 | 410, json: unknown, orgnr: string): boolean {
  if (!isRecord(json)) return false;
  if (status === 410) return json.organisasjonsnummer === orgnr;
  return (
    json.status === 404 &&
    typeof json.path === 'string' &&
    json.path.replace(/\/+$/, '').endsWith(`/enhetsregisteret/api/enheter/${orgnr}`)
  );
}

/** `{adresse: [...], postnummer, poststed, land}` → one multi-line string. */
function formatAddress(address: unknown): string | null {
  if (!isRecord(address)) return null;
  const lines: string[] = [];
  if (Array.isArray(address.adresse)) {
    for (const line of address.adresse) {
      const text = cleanText(line);
      if (text) lines.push(text);
    }
  }
  const place = [cleanText(address.postnummer), cleanText(address.poststed)].filter(Boolean).join(' ');
  if (place) lines.push(place);
  const country = cleanText(address.land);
  if (country && lines.length > 0 && cleanText(address.landkode) !== 'NO') lines.push(country);
  return lines.length > 0 ? lines.join('\n') : null;
}
