/**
 * TEDB `VatRetrievalService` simulator: `POST /tedb/ws/` with `retrieveVatRates`, answering rows in
 * TEDB's own shape for the 27 member states, with every quirk the real service is known for.
 *
 * The answer's shape is that of recorded answers of the real service: HMRC's TEDB stub
 * (hmrc/eu-vat-rates-stub, `conf/resources/xml/response.xml`, replayed by
 * `app/uk/gov/hmrc/euvatratesstub/utils/EuVatRatesXmlService.scala`) and the example answer in the
 * tests of HMRC's client (hmrc/eu-vat-rates, `conf/resources/examples/example-response.xml`):
 *
 * - the envelope `env:`, the message `ns0:retrieveVatRatesRespMsg` with the types namespace as the
 *   default one, and an empty `<additionalInformation/>` (it lists countries only when CN or CPA
 *   codes are asked for, which openvat never does and this simulator does not answer);
 * - each row `memberState`, `type`, `rate{type, value}`, `situationOn`, then `category` and
 *   `comment` where it has them;
 * - rows come in situations: every row of a member state's situation carries the day that situation
 *   began, even a rate that has not changed for years (Germany's 19% is dated from the start of its
 *   latest situation); a `situationOn=D` query answers the situation in force on D, a `from`/`to`
 *   query every situation in force at some day of the range;
 *
 * and the quirks:
 *
 * - no `SOAPAction` header → a bare 404 with an empty body (not a fault);
 * - request children outside the `…IVatRetrievalService:types` namespace → fault `TEDB-ERR-2`;
 * - Greece is `EL` (an `isoCode` of `GR` is not a member state: it is left out of the answer);
 * - dates carry an offset (`2024-01-01+01:00`);
 * - Spain has two `STANDARD`/`DEFAULT` rows, 21 and 7 (comment "VAT - Canary Islands");
 * - Austria's 19% for Jungholz and Mittelberg is a `REDUCED` row of category `REGION`, as are
 *   Portugal's Madeira rate and Greece's island rates;
 * - `EXEMPTED`, `OUT_OF_SCOPE` and `NOT_APPLICABLE` rows carry 0.0, and a zero rate can also come
 *   labelled as a band (Italy's `SUPER_REDUCED_RATE` 0.0, as in the recorded answers);
 * - labels that disagree with the Commission's classic table (PL 8, PT 6 and GR 13 as
 *   `SUPER_REDUCED_RATE`), and one category with several rates (French pharmaceuticals 2.1/5.5/10).
 *
 * Controls (`POST /_control` with `{"tedb": …}`): `announce: {country, from, standard?, reduced?,
 * super_reduced?, parking?}` adds a situation from a day on (replacing that country's rows of those
 * kinds from then); `fault: 'soap' | 'not_xml' | 'partial' | 'empty' | null` answers every call that
 * way (`partial`: three member states have no rows); and the common controls (`serviceDown`, `hang`,
 * `latencyMs`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { XMLParser } from 'fast-xml-parser';
import { VIES_COUNTRIES } from '../registries/vies-common.js';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
} from './controls.js';
import { initialRows, type Kind, rowsOf, type SimRow } from './tedb-rates.js';

const SOAP_ACTION = 'urn:ec.europa.eu:taxud:tedb:services:v1:VatRetrievalService/RetrieveVatRates';
const SERVICE_NS = 'urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService';
const TYPES_NS = `${SERVICE_NS}:types`;

/** The member states TEDB answers for: VIES's list (Greece `EL`) without Northern Ireland. */
export const TEDB_MEMBER_STATES: readonly string[] = VIES_COUNTRIES.filter((code) => code !== 'XI');

const OFFSETS: Record<string, string> = { PT: '+00:00', IE: '+00:00', FI: '+02:00', EL: '+02:00' };
/** TEDB's dates carry an offset; most member states answer in CET. */
const withOffset = (state: string, day: string) => `${day}${OFFSETS[state] ?? '+01:00'}`;

const parser = new XMLParser({
  ignoreAttributes: false,
  removeNSPrefix: false,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name.endsWith(':isoCode') || name === 'isoCode',
});

type Fault = 'soap' | 'not_xml' | 'partial' | 'empty';

export type TedbSimulator = ControlledSimulator & {
  /** Calls answered, by form (`situationOn` or `range`). */
  readonly calls: { situationOn: number; range: number };
};

function dayBefore(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/**
 * A rate as the service writes it, a Java double: `10.0`, `9.5`, `1.05` (as in the recorded answers),
 * and in exponent form below 0.001 (`1.0E-4`).
 */
function doubleText(value: number): string {
  if (value !== 0 && Math.abs(value) < 1e-3) {
    const [mantissa, exponent] = value.toExponential().split('e');
    return `${mantissa?.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
  }
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

function dayAfter(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

export function createTedbSimulator(options: RegistrySimulatorOptions = {}): TedbSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });
  let rows = initialRows();
  let fault: Fault | null = null;
  const calls = { situationOn: 0, range: 0 };

  function announce(command: Record<string, unknown>): void {
    const state =
      String(command.country ?? '').toUpperCase() === 'GR'
        ? 'EL'
        : String(command.country ?? '').toUpperCase();
    const from = String(command.from ?? '');
    if (!/^[A-Z]{2}$/.test(state) || !/^\d{4}-\d{2}-\d{2}$/.test(from)) return;
    const kinds: [Kind, unknown][] = [
      ['standard', command.standard],
      ['reduced', command.reduced],
      ['super_reduced', command.super_reduced],
      ['parking', command.parking],
    ];
    for (const [kind, given] of kinds) {
      if (given === undefined) continue;
      const values = (Array.isArray(given) ? given : [given]).filter(
        (v): v is number => typeof v === 'number',
      );
      const type = kind === 'standard' ? 'STANDARD' : 'REDUCED';
      const rateType = rowsOf(state, kind, [0], from)[0]?.rateType;
      // The rows of that kind (but regional and category rows) end the day before.
      rows = rows.map((row) =>
        row.state === state &&
        row.type === type &&
        row.rateType === rateType &&
        !row.category &&
        !row.comment &&
        (row.to === null || row.to >= from) &&
        row.from < from
          ? { ...row, to: dayBefore(from) }
          : row,
      );
      rows = rows.filter(
        (row) =>
          !(
            row.state === state &&
            row.type === type &&
            row.rateType === rateType &&
            !row.category &&
            row.from >= from
          ),
      );
      rows.push(...rowsOf(state, kind, values, from));
    }
  }

  /** The days a member state's situations began: wherever one of its rows starts or ends. */
  function situationStarts(state: string): string[] {
    const days = new Set<string>();
    for (const row of rows) {
      if (row.state !== state) continue;
      days.add(row.from);
      if (row.to !== null) days.add(dayAfter(row.to));
    }
    return [...days].sort();
  }

  /** A member state's situations in force at some day from `from` to `to`: each its start and rows. */
  function situations(state: string, from: string, to: string): { start: string; rows: SimRow[] }[] {
    const starts = situationStarts(state);
    const first = starts.filter((day) => day <= from).at(-1);
    return [...(first ? [first] : []), ...starts.filter((day) => day > from && day <= to)].map((start) => ({
      start,
      rows: rows.filter(
        (row) => row.state === state && row.from <= start && (row.to === null || row.to >= start),
      ),
    }));
  }

  function rowXml(row: SimRow, start: string): string {
    return (
      '<vatRateResults>' +
      `<memberState>${row.state}</memberState><type>${row.type}</type>` +
      `<rate><type>${row.rateType}</type>${row.value === null ? '' : `<value>${doubleText(row.value)}</value>`}</rate>` +
      `<situationOn>${withOffset(row.state, start)}</situationOn>` +
      (row.category
        ? `<category><identifier>${row.category.identifier}</identifier><description>${row.category.description}</description></category>`
        : '') +
      (row.comment ? `<comment>${row.comment}</comment>` : '') +
      '</vatRateResults>'
    );
  }

  function answer(res: ServerResponse, states: string[], from: string, to: string): void {
    const known = states.filter((s) => TEDB_MEMBER_STATES.includes(s));
    const answered = fault === 'partial' ? known.slice(0, Math.max(0, known.length - 3)) : known;
    const results = answered
      .flatMap((state) =>
        situations(state, from, to).flatMap(({ start, rows: inForce }) =>
          inForce.map((row) => rowXml(row, start)),
        ),
      )
      .join('');
    send(
      res,
      200,
      'text/xml;charset=UTF-8',
      '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Header/><env:Body>' +
        `<ns0:retrieveVatRatesRespMsg xmlns="${TYPES_NS}" xmlns:ns0="${SERVICE_NS}">` +
        `<additionalInformation/>${results}` +
        '</ns0:retrieveVatRatesRespMsg></env:Body></env:Envelope>',
    );
  }

  function soapFault(res: ServerResponse, code: string, description: string): void {
    send(
      res,
      500,
      'text/xml;charset=UTF-8',
      '<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><env:Fault>' +
        `<faultcode>env:Client</faultcode><faultstring>${description}</faultstring><detail>` +
        `<ns0:retrieveVatRatesFaultMsg xmlns:ns0="${SERVICE_NS}" xmlns="${TYPES_NS}"><error><code>${code}</code><description>${description}</description></error></ns0:retrieveVatRatesFaultMsg>` +
        '</detail></env:Fault></env:Body></env:Envelope>',
    );
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    if (req.method !== 'POST' || route !== '/ws') return send(res, 404, 'text/plain', '');
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    if (action !== SOAP_ACTION) return send(res, 404, 'text/plain', '');
    const admission = controls.admit('EU');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    if (admission.kind !== 'admitted') return send(res, 429, 'text/html', SERVICE_UNAVAILABLE_HTML);
    try {
      await controls.delay('EU');
      if (fault === 'not_xml') return send(res, 200, 'text/html', '<html><body>Maintenance</body></html>');
      if (fault === 'empty') return send(res, 200, 'text/xml', '');
      if (fault === 'soap') return soapFault(res, 'TEDB-ERR-1', 'An unexpected error occurred');
      let parsed: Record<string, unknown>;
      try {
        parsed = parser.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return soapFault(res, 'TEDB-ERR-2', 'The XSD validation failed');
      }
      const request = findRequest(parsed);
      if (!request) return soapFault(res, 'TEDB-ERR-2', 'The XSD validation failed');
      const { states, situationOn, from, to } = request;
      if (situationOn) {
        calls.situationOn++;
        return answer(res, states, situationOn, situationOn);
      }
      if (from && to && from <= to) {
        calls.range++;
        return answer(res, states, from, to);
      }
      return soapFault(res, 'TEDB-ERR-2', 'The XSD validation failed');
    } finally {
      admission.release();
    }
  }

  /** The request's member states and dates, when every child is in the types namespace. */
  function findRequest(
    parsed: Record<string, unknown>,
  ): { states: string[]; situationOn?: string; from?: string; to?: string } | null {
    const prefixes = (element: Record<string, unknown>, ns: string) =>
      Object.entries(element)
        .filter(([key, value]) => key.startsWith('@_xmlns') && value === ns)
        .map(([key]) => (key === '@_xmlns' ? '' : `${key.slice('@_xmlns:'.length)}:`));
    const envelopeKey = Object.keys(parsed).find((k) => k.endsWith('Envelope'));
    const envelope = envelopeKey ? (parsed[envelopeKey] as Record<string, unknown>) : null;
    if (!envelope) return null;
    const bodyKey = Object.keys(envelope).find((k) => k.endsWith('Body'));
    const soapBody = bodyKey ? (envelope[bodyKey] as Record<string, unknown>) : null;
    if (!soapBody || typeof soapBody !== 'object') return null;
    const requestKey = Object.keys(soapBody).find((k) => k.endsWith('retrieveVatRatesReqMsg'));
    const request = requestKey ? (soapBody[requestKey] as Record<string, unknown>) : null;
    if (!request || typeof request !== 'object') return null;
    const typePrefixes = [...prefixes(envelope, TYPES_NS), ...prefixes(request, TYPES_NS)];
    const child = (name: string): unknown => {
      for (const prefix of typePrefixes)
        if (request[`${prefix}${name}`] !== undefined) return request[`${prefix}${name}`];
      return undefined;
    };
    const memberStates = child('memberStates') as Record<string, unknown> | undefined;
    if (!memberStates || typeof memberStates !== 'object') return null;
    const codes = typePrefixes.flatMap((prefix) => {
      const value = memberStates[`${prefix}isoCode`];
      return Array.isArray(value) ? value.map(String) : [];
    });
    if (codes.length === 0 || codes.some((c) => !/^[A-Z]{2}$/.test(c))) return null;
    const day = (value: unknown) =>
      typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : undefined;
    const situationOn = day(child('situationOn'));
    const from = day(child('from'));
    const to = day(child('to'));
    return {
      states: codes,
      ...(situationOn ? { situationOn } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    };
  }

  return {
    prefix: '/tedb',
    handle,
    calls,
    controls,
    control(command) {
      if (command.reset === true) {
        rows = initialRows();
        fault = null;
      }
      if (command.fault === null || ['soap', 'not_xml', 'partial', 'empty'].includes(String(command.fault))) {
        fault = (command.fault as Fault | null) ?? null;
      }
      if (command.announce && typeof command.announce === 'object') {
        announce(command.announce as Record<string, unknown>);
      }
      return { ...controls.apply(command), fault };
    },
    stats: () => ({ ...controls.stats(), ...calls }),
  };
}
