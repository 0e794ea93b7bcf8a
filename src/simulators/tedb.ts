/**
 * TEDB `VatRetrievalService` simulator: `POST /tedb/ws/` with `retrieveVatRates`, answering rows in
 * TEDB's own shape for the 27 member states, with every quirk the real service is known for:
 *
 * - no `SOAPAction` header → a bare 404 with an empty body (not a fault);
 * - request children outside the `…IVatRetrievalService:types` namespace → fault `TEDB-ERR-2`;
 * - Greece is `EL` (an `isoCode` of `GR` is not a member state: it is left out of the answer);
 * - dates carry an offset (`2024-01-01+01:00`);
 * - Spain has two `STANDARD`/`DEFAULT` rows, 21 and 7 (comment "VAT - Canary Islands");
 * - Austria's 19% for Jungholz and Mittelberg is a `REDUCED` row of category `REGION`, as are
 *   Portugal's Madeira rate and Greece's island rates;
 * - `EXEMPTED`, `OUT_OF_SCOPE` and `NOT_APPLICABLE` rows carry 0.0;
 * - labels that disagree with the Commission's classic table (PL 8, PT 6 and GR 13 as
 *   `SUPER_REDUCED_RATE`), and one category with several rates (French pharmaceuticals 2.1/5.5/10).
 *
 * Each row has its own start (`situationOn`); `situationOn=D` answers the rows in force on D,
 * `from`/`to` the rows in force at any day of the range. Controls (`POST /_control` with `{"tedb": …}`):
 * `announce: {country, from, standard?, reduced?, super_reduced?, parking?}` adds a situation from a
 * day on (replacing that country's rows of those kinds from then); `fault: 'soap' | 'not_xml' |
 * 'partial' | 'empty' | null` answers every call that way; and the common controls (`serviceDown`,
 * `hang`, `latencyMs`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { XMLParser } from 'fast-xml-parser';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
} from './controls.js';

const SOAP_ACTION = 'urn:ec.europa.eu:taxud:tedb:services:v1:VatRetrievalService/RetrieveVatRates';
const SERVICE_NS = 'urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService';
const TYPES_NS = `${SERVICE_NS}:types`;

interface SimRow {
  /** TEDB's member-state code (`EL` for Greece). */
  state: string;
  type: 'STANDARD' | 'REDUCED';
  rateType: string;
  value: number | null;
  from: string;
  /** Last day, or null while in force. */
  to: string | null;
  category?: { identifier: string; description: string };
  comment?: string;
}

type Kind = 'standard' | 'reduced' | 'super_reduced' | 'parking';

/** Rows a rate of a kind produces. */
function rowsOf(
  state: string,
  kind: Kind,
  values: number[],
  from: string,
  to: string | null = null,
): SimRow[] {
  return values.map((value) => ({
    state,
    type: kind === 'standard' ? 'STANDARD' : 'REDUCED',
    rateType:
      kind === 'standard'
        ? 'DEFAULT'
        : kind === 'reduced'
          ? 'REDUCED_RATE'
          : kind === 'super_reduced'
            ? 'SUPER_REDUCED_RATE'
            : 'PARKING_RATE',
    value,
    from,
    to,
  }));
}

const region = (description: string) => ({ identifier: 'REGION', description });

/** The member states' rows as TEDB reports them (late 2026), with their quirks. */
function initialRows(): SimRow[] {
  const rows: SimRow[] = [];
  const add = (
    state: string,
    from: string,
    standard: number,
    reduced: number[],
    extra: { superReduced?: number[]; parking?: number[]; reducedFrom?: string } = {},
  ) => {
    rows.push(...rowsOf(state, 'standard', [standard], from));
    rows.push(...rowsOf(state, 'reduced', reduced, extra.reducedFrom ?? from));
    if (extra.superReduced) rows.push(...rowsOf(state, 'super_reduced', extra.superReduced, from));
    if (extra.parking) rows.push(...rowsOf(state, 'parking', extra.parking, from));
  };
  add('AT', '2016-01-01', 20, [10, 13], { parking: [13] });
  rows.push(...rowsOf('AT', 'super_reduced', [4.9], '2026-07-01'));
  rows.push({
    ...rowsOf('AT', 'reduced', [19], '2016-01-01')[0]!,
    category: region('Regional rate'),
    comment: 'Jungholz, Mittelberg',
  });
  add('BE', '1996-01-01', 21, [6, 12], { parking: [12] });
  add('BG', '2007-01-01', 20, [9]);
  add('CY', '2014-01-13', 19, [5, 9]);
  add('CZ', '2024-01-01', 21, [12]);
  add('DE', '2021-01-01', 19, [7]);
  add('DK', '1992-01-01', 25, []);
  rows.push({
    state: 'DK',
    type: 'REDUCED',
    rateType: 'EXEMPTED',
    value: 0,
    from: '1992-01-01',
    to: null,
    category: { identifier: 'NEWSPAPERS', description: 'Newspapers' },
  });
  add('EE', '2025-07-01', 24, [9, 13]);
  add('ES', '2012-09-01', 21, [10], { superReduced: [4] });
  rows.push({
    ...rowsOf('ES', 'standard', [7], '2020-01-01')[0]!,
    comment: 'VAT - Canary Islands',
  });
  add('FI', '2026-01-01', 25.5, [10, 13.5]);
  add('FR', '2014-01-01', 20, [5.5, 10], { superReduced: [2.1] });
  for (const value of [2.1, 5.5, 10]) {
    rows.push({
      ...rowsOf('FR', value < 5 ? 'super_reduced' : 'reduced', [value], '2014-01-01')[0]!,
      category: { identifier: 'PHARMACEUTICAL_PRODUCTS', description: 'Pharmaceutical products' },
    });
  }
  rows.push(...rowsOf('EL', 'standard', [24], '2016-06-01'));
  rows.push(...rowsOf('EL', 'reduced', [6], '2016-06-01'));
  rows.push(...rowsOf('EL', 'super_reduced', [13], '2016-06-01'));
  for (const value of [4, 9, 17]) {
    rows.push({
      ...rowsOf('EL', value === 4 ? 'super_reduced' : 'reduced', [value], '2024-01-01')[0]!,
      category: region('Leros, Lesbos, Kos, Samos and Chios'),
    });
  }
  rows.push({
    state: 'EL',
    type: 'REDUCED',
    rateType: 'OUT_OF_SCOPE',
    value: 0,
    from: '2016-06-01',
    to: null,
    category: { identifier: 'MOUNT_ATHOS', description: 'Mount Athos' },
  });
  add('HR', '2013-01-01', 25, [5, 13]);
  add('HU', '2012-01-01', 27, [5, 18]);
  add('IE', '2021-03-01', 23, [9, 13.5], { superReduced: [4.8], parking: [13.5] });
  add('IT', '2013-10-01', 22, [5, 10], { superReduced: [4] });
  add('LT', '2026-01-01', 21, [5, 12]);
  add('LU', '2024-01-01', 17, [8], { superReduced: [3], parking: [14] });
  add('LV', '2011-01-01', 21, [5, 12]);
  add('MT', '2024-01-01', 18, [5, 7, 12]);
  add('NL', '2019-01-01', 21, [9]);
  rows.push(...rowsOf('PL', 'standard', [23], '2011-01-01'));
  rows.push(...rowsOf('PL', 'reduced', [5], '2011-01-01'));
  rows.push(...rowsOf('PL', 'super_reduced', [8], '2011-01-01'));
  rows.push(...rowsOf('PT', 'standard', [23], '2011-01-01'));
  rows.push(...rowsOf('PT', 'reduced', [13], '2011-01-01'));
  rows.push(...rowsOf('PT', 'super_reduced', [6], '2011-01-01'));
  rows.push(...rowsOf('PT', 'parking', [13], '2011-01-01'));
  rows.push({ ...rowsOf('PT', 'reduced', [22], '2011-01-01')[0]!, category: region('Madeira') });
  add('RO', '2025-08-01', 21, [11]);
  add('SE', '1995-01-01', 25, [6, 12]);
  add('SI', '2013-07-01', 22, [5, 9.5]);
  add('SK', '2025-01-01', 23, [5, 19]);
  rows.push({
    state: 'SK',
    type: 'REDUCED',
    rateType: 'NOT_APPLICABLE',
    value: 0,
    from: '2025-01-01',
    to: null,
    category: { identifier: 'CHILDREN_CAR_SEATS', description: "Children's car seats" },
  });
  return rows;
}

export const TEDB_MEMBER_STATES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'EL',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
] as const;

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

  function answer(res: ServerResponse, states: string[], from: string, to: string): void {
    const known = states.filter((s) => (TEDB_MEMBER_STATES as readonly string[]).includes(s));
    const answered = fault === 'partial' ? known.slice(0, Math.max(0, known.length - 3)) : known;
    const results = rows
      .filter((row) => answered.includes(row.state) && row.from <= to && (row.to === null || row.to >= from))
      .map(
        (row) =>
          '<vatRateResults>' +
          `<memberState>${row.state}</memberState><type>${row.type}</type>` +
          `<rate><type>${row.rateType}</type>${row.value === null ? '' : `<value>${row.value.toFixed(1)}</value>`}</rate>` +
          `<situationOn>${withOffset(row.state, row.from)}</situationOn>` +
          (row.category
            ? `<category><identifier>${row.category.identifier}</identifier><description>${row.category.description}</description></category>`
            : '') +
          (row.comment ? `<comment>${row.comment}</comment>` : '') +
          '</vatRateResults>',
      )
      .join('');
    const countries = answered
      .map(
        (s) =>
          `<country><isoCode>${s}</isoCode><cnCodeProvided>false</cnCodeProvided><cpaCodeProvided>false</cpaCodeProvided></country>`,
      )
      .join('');
    send(
      res,
      200,
      'text/xml;charset=UTF-8',
      '<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Header/><env:Body>' +
        `<ns0:retrieveVatRatesRespMsg xmlns:ns0="${SERVICE_NS}" xmlns="${TYPES_NS}">` +
        `<additionalInformation><countries>${countries}</countries></additionalInformation>${results}` +
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
