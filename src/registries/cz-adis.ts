/**
 * Czech register of VAT payers (Ministry of Finance / GFŘ, ADIS), SOAP service `rozhraniCRPDPH`,
 * operation `getStatusNespolehlivyPlatceRozsireny` (SOAPAction
 * `http://adis.mfcr.cz/rozhraniCRPDPH/getStatusNespolehlivyPlatceRozsireny`), the variant that adds
 * the payer's name and address. The endpoint is the full SOAP address, e.g.
 * `https://adisrws.mfcr.cz/dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP`.
 *
 * The answer `StatusNespolehlivyPlatceRozsirenyResponse` carries `status@statusCode` (0 OK; 1 OK
 * but only the first 100 DIČ answered; 2 the daily maintenance 0:00–0:10; 3 the service unavailable)
 * and one `statusPlatceDPH` per DIČ with `@dic`, `@nespolehlivyPlatce` (`NE` a reliable payer, `ANO`
 * an unreliable one, `NENALEZEN` not found: not a VAT payer), `@datumZverejneniNespolehlivosti`,
 * `@cisloFu` (the tax office), `nazevSubjektu` (padded with spaces) and `adresa/{uliceCislo,
 * castObce, mesto, psc, stat}`. `ANO` is a registered payer reported with the `unreliable_payer`
 * flag: a Czech buyer who pays an unreliable payer becomes liable for its VAT.
 *
 * `valid: false` only from `NENALEZEN` for the DIČ asked, in a 2xx answer with statusCode 0 or 1.
 * A fault, statusCode 2 or 3, an HTML page, another element or another DIČ is unavailability.
 *
 * Sources: recorded answers in qwerin/nanofaktura internal/vatreg/testdata/ (status_rozsireny.xml,
 * status_nespolehlivy.xml, status_odstavka.xml, fault.xml) and its client internal/vatreg/vatreg.go;
 * the status codes in the service's schema (`StatusType`, index id 24131312586); the service's
 * conditions (adisepo.mfcr.cz "Informace o webové službě … technické parametry", as quoted on
 * wladass.net): at most 10,000 requests in 24 hours, 2,000 in an hour and 4 at once per IP address.
 */
import { excerpt, type FetchFn, type HttpResponse, isRecord, transportFor } from './http.js';
import {
  isoDay,
  nationalAddress,
  nationalAnswer,
  nationalTransportFailure,
  squashedText,
  unexpectedStatus,
  zoneWallTime,
} from './national-common.js';
import { czDic } from './national-ids.js';
import {
  type NationalFlag,
  type NationalLimits,
  type NationalLookup,
  type NationalRegistryClient,
  type NationalResult,
  type NationalUnavailable,
  nationalUnavailable,
} from './national-port.js';
import { escapeXml, parseSoapEnvelope, xmlText } from './vies-soap.js';

export interface CzAdisClientOptions {
  /** The SOAP endpoint, e.g. `https://adisrws.mfcr.cz/dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP`. */
  url: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

const SOURCE = 'cz_adis';
const LABEL = 'the Czech register of VAT payers';
export const CZ_ADIS_NAMESPACE = 'http://adis.mfcr.cz/rozhraniCRPDPH/';
export const CZ_ADIS_SOAP_ACTION = `${CZ_ADIS_NAMESPACE}getStatusNespolehlivyPlatceRozsireny`;
export const CZ_TIME_ZONE = 'Europe/Prague';

export const CZ_ADIS_LIMITS: NationalLimits = Object.freeze({
  concurrency: 4,
  rates: [
    { requests: 2_000, windowMs: 3_600_000 },
    { requests: 10_000, windowMs: 86_400_000 },
  ],
  daily: null,
  numbersPerRequest: 100,
  maintenance: { from: '00:00', to: '00:10', timeZone: CZ_TIME_ZONE },
  published: true,
  source:
    'GFŘ, conditions of the web service (adisepo.mfcr.cz): 10,000 requests in 24 h, 2,000 an hour, 4 at once per IP; 100 DIČ per request; maintenance 0:00–0:10',
});

/** `nespolehlivyPlatce` values: whether the DIČ is a registered payer. */
const PAYER: ReadonlyMap<string, boolean> = new Map([
  ['NE', true],
  ['ANO', true],
  ['NENALEZEN', false],
]);

export function czAdisEnvelope(dics: string[]): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:roz="${CZ_ADIS_NAMESPACE}">` +
    '<soapenv:Header/><soapenv:Body><roz:StatusNespolehlivyPlatceRozsirenyRequest>' +
    dics.map((dic) => `<roz:dic>${escapeXml(dic)}</roz:dic>`).join('') +
    '</roz:StatusNespolehlivyPlatceRozsirenyRequest></soapenv:Body></soapenv:Envelope>'
  );
}

export function createCzAdisClient(options: CzAdisClientOptions): NationalRegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  async function ask(dics: string[], signal?: AbortSignal): Promise<NationalResult[]> {
    const outcome = await send({
      url: options.url,
      method: 'POST',
      headers: {
        'content-type': 'text/xml; charset=utf-8',
        accept: 'text/xml',
        soapaction: `"${CZ_ADIS_SOAP_ACTION}"`,
      },
      body: czAdisEnvelope(dics),
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    if (!outcome.ok) {
      const failure = nationalTransportFailure(SOURCE, LABEL, outcome);
      return dics.map(() => failure);
    }
    return interpretCzStatus(outcome, dics, now());
  }

  async function lookup(request: NationalLookup): Promise<NationalResult> {
    const dic = czDic(request.vat.national);
    if (!dic.ok) return nationalUnavailable(SOURCE, 'rejected', dic.message);
    const [result] = await ask([dic.id], request.signal);
    return result ?? nationalUnavailable(SOURCE, 'bad_response', 'no answer was assembled');
  }

  async function lookupMany(requests: NationalLookup[]): Promise<NationalResult[]> {
    const results: (NationalResult | undefined)[] = new Array(requests.length);
    const wanted: { dic: string; indexes: number[] }[] = [];
    requests.forEach((request, index) => {
      const dic = czDic(request.vat.national);
      if (!dic.ok) {
        results[index] = nationalUnavailable(SOURCE, 'rejected', dic.message);
        return;
      }
      const same = wanted.find((item) => item.dic === dic.id);
      if (same) same.indexes.push(index);
      else wanted.push({ dic: dic.id, indexes: [index] });
    });
    const signal = requests.find((request) => request.signal)?.signal;
    for (let start = 0; start < wanted.length; start += CZ_ADIS_LIMITS.numbersPerRequest) {
      const chunk = wanted.slice(start, start + CZ_ADIS_LIMITS.numbersPerRequest);
      const answers = await ask(
        chunk.map((item) => item.dic),
        signal,
      );
      chunk.forEach((item, i) => {
        for (const index of item.indexes) results[index] = answers[i];
      });
    }
    return results.map(
      (result) => result ?? nationalUnavailable(SOURCE, 'bad_response', 'no answer was assembled'),
    );
  }

  return { source: SOURCE, country: 'CZ', limits: CZ_ADIS_LIMITS, lookup, lookupMany };
}

/** The answer for each DIČ asked, in order (pure: the HTTP answer and when it arrived). */
export function interpretCzStatus(outcome: HttpResponse, dics: string[], received: Date): NationalResult[] {
  const response = statusResponse(outcome, received);
  if (response.kind === 'unavailable') return dics.map(() => response);
  return dics.map((dic) => payerAnswer(response.payers, dic, received));
}

type StatusResponse = { kind: 'payers'; payers: Record<string, unknown>[] } | NationalUnavailable;

/** The envelope, the fault or the status of the answer, before any DIČ in it is read. */
function statusResponse(outcome: HttpResponse, received: Date): StatusResponse {
  const parsed = parseSoapEnvelope(outcome.body);
  if (parsed.kind === 'fault') {
    const code = parsed.faultcode;
    const reason = /client|sender/i.test(code) ? 'rejected' : 'down';
    return nationalUnavailable(
      SOURCE,
      reason,
      `${LABEL} answered a fault: ${excerpt(parsed.faultstring || code, 160)}`,
      { upstreamCode: parsed.faultstring.trim() || code },
    );
  }
  if (parsed.kind === 'not_soap') {
    return unexpectedStatus(SOURCE, LABEL, outcome, received);
  }
  const response = parsed.body.StatusNespolehlivyPlatceRozsirenyResponse;
  const status = isRecord(response) && isRecord(response.status) ? response.status : null;
  const code = status ? xmlText(status['@_statusCode']) : null;
  if (!isRecord(response) || !status || code === null) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered without StatusNespolehlivyPlatceRozsirenyResponse/status: ${excerpt(outcome.body)}`,
    );
  }
  const text = xmlText(status['@_statusText'])?.trim() ?? '';
  if (code === '2') {
    return nationalUnavailable(
      SOURCE,
      'down',
      `${LABEL} is in its daily maintenance (${text || 'statusCode 2'})`,
      {
        upstreamCode: 'statusCode 2',
        retryAfterSeconds: secondsToMaintenanceEnd(received),
      },
    );
  }
  if (code !== '0' && code !== '1') {
    return nationalUnavailable(SOURCE, 'down', `${LABEL} is unavailable (statusCode ${code}: ${text})`, {
      upstreamCode: `statusCode ${code}`,
    });
  }
  if (outcome.status < 200 || outcome.status >= 300) {
    return unexpectedStatus(SOURCE, LABEL, outcome, received);
  }
  const raw = response.statusPlatceDPH;
  const payers = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(isRecord);
  return { kind: 'payers', payers };
}

/** One DIČ's `statusPlatceDPH` as an answer. */
function payerAnswer(payers: Record<string, unknown>[], dic: string, checkedAt: Date): NationalResult {
  const payer = payers.find((entry) => sameDic(xmlText(entry['@_dic']), dic));
  if (!payer) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered without statusPlatceDPH for ${dic}`,
    );
  }
  const word = xmlText(payer['@_nespolehlivyPlatce'])?.trim() ?? '';
  const valid = PAYER.get(word);
  if (valid === undefined) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered an unknown nespolehlivyPlatce for ${dic}: ${excerpt(word || '(none)')}`,
    );
  }
  const identifiers: Record<string, string> = { dic };
  const taxOffice = xmlText(payer['@_cisloFu'])?.trim();
  if (taxOffice) identifiers.taxOffice = taxOffice;
  const flags: NationalFlag[] =
    word === 'ANO'
      ? [
          {
            code: 'unreliable_payer',
            since: isoDay(xmlText(payer['@_datumZverejneniNespolehlivosti'])),
            registerValue: 'ANO',
          },
        ]
      : [];
  return nationalAnswer({
    source: SOURCE,
    country: 'CZ',
    national: dic,
    valid,
    registerStatus: word,
    name: valid ? squashedText(xmlText(payer.nazevSubjektu)) : null,
    address: valid ? czAddress(payer.adresa) : null,
    identifiers,
    flags,
    checkedAt,
  });
}

/** `@dic` as recorded (`27082440`) or with the country prefix (`CZ27082440`). */
function sameDic(answered: string | null, asked: string): boolean {
  if (answered === null) return false;
  const digits = answered.trim().toUpperCase().replace(/^CZ/, '');
  return digits === asked;
}

/** `adresa/{uliceCislo, castObce, mesto, psc, stat}`. */
export function czAddress(value: unknown) {
  if (!isRecord(value)) return null;
  const street = squashedText(xmlText(value.uliceCislo));
  const part = squashedText(xmlText(value.castObce));
  const city = squashedText(xmlText(value.mesto));
  const postcode = squashedText(xmlText(value.psc))?.replace(/\s/g, '') ?? null;
  const country = squashedText(xmlText(value.stat));
  const place = [postcode, city].filter(Boolean).join(' ') || null;
  const showPart = part && part.toUpperCase() !== city?.toUpperCase() ? part : null;
  return nationalAddress({ street, postcode, city, country, lines: [street, showPart, place] });
}

/** Seconds until 0:10 Prague time when inside the maintenance window, else a short pause. */
function secondsToMaintenanceEnd(received: Date): number {
  const wall = zoneWallTime(CZ_TIME_ZONE, received);
  const seconds = wall.hour * 3600 + wall.minute * 60 + wall.second;
  return seconds < 600 ? 600 - seconds : 60;
}
