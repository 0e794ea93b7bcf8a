/**
 * Czech register of VAT payers simulator (ADIS, SOAP `rozhraniCRPDPH`): `POST
 * /dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP` with `StatusNespolehlivyPlatceRozsirenyRequest`
 * (one or more `dic`), answering `StatusNespolehlivyPlatceRozsirenyResponse`.
 *
 * Answers are built from recorded real ones (qwerin/nanofaktura internal/vatreg/testdata/):
 * status_rozsireny.xml (a reliable payer `NE` with its published accounts, name padded with spaces
 * and address, and `NENALEZEN` as a bare element), status_nespolehlivy.xml (`ANO` with
 * `datumZverejneniNespolehlivosti`), status_odstavka.xml (statusCode 2 "Technologická odstávka
 * služby - 0:00-0:10" without payers) and fault.xml (`soapenv:Server` "Internal Error"). statusCode 1
 * and 3 carry the texts of the service's schema (`StatusType`, index id 24131312586).
 *
 * Rule: an 8–10 digit DIČ is a payer when the shared rule registers it (as VIES does), one in ten of
 * them unreliable (`(h >>> 12) % 10 === 0`); otherwise `NENALEZEN`, as is a DIČ that is not 8–10
 * digits (how the service answers one is not recorded). Documented numbers (`CZ_ADIS_NUMBERS`)
 * answer one case each. More than 100 DIČ answer statusCode 1 with the first 100; a body without the
 * request element answers the recorded fault.
 *
 * Controls (`{"cz": {...}}`): `maintenance` (`true`, or `"auto"` for 0:00–0:10 Prague time as the
 * real service does; default off, so runs at midnight stay deterministic), and the shared ones:
 * `down: ["CZ"]` (statusCode 3), `serviceDown` (HTML 503), `hang`, `latencyMs`, `errorRate` with a
 * code `FAULT` (the recorded fault, HTTP 500 unless `errorStatus` says otherwise) or `HTML_503`,
 * `rateLimit` and `concurrencyLimit` (the conditions allow 4 at once; over a limit HTTP 429 with an
 * HTML page: how the service answers an IP it restricts is not recorded).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { zoneDate, zoneWallTime } from '../registries/national-common.js';
import {
  type ControlledSimulator,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
} from './controls.js';
import { nationalCompany, nationalControls } from './national.js';

export type CzAdisSimulator = ControlledSimulator;

export type CzOutcome = 'NE' | 'ANO' | 'NENALEZEN' | 'maintenance' | 'unavailable' | 'fault';

export const CZ_ADIS_NUMBERS: Readonly<Record<string, CzOutcome>> = Object.freeze({
  '11100001': 'NE',
  '11100010': 'ANO',
  '11100028': 'NENALEZEN',
  '11100036': 'maintenance',
  '11100044': 'unavailable',
  '11100052': 'fault',
});

/** What the register answers for a DIČ of 8–10 digits (controls aside). */
export function czOutcome(dic: string): CzOutcome {
  const documented = CZ_ADIS_NUMBERS[dic];
  if (documented) return documented;
  const company = nationalCompany('CZ', dic);
  if (!company.registered) return 'NENALEZEN';
  return (company.hash >>> 12) % 10 === 0 ? 'ANO' : 'NE';
}

const XML = 'text/xml; charset=utf-8';
const NS = 'http://adis.mfcr.cz/rozhraniCRPDPH/';
const TIME_ZONE = 'Europe/Prague';
const MAX_DIC = 100;
const STATUS_TEXT: Readonly<Record<number, string>> = Object.freeze({
  0: 'OK',
  1: 'OK - příliš mnoho DIČ v dotazu. Vrácenou pouze prvních 100 subjektů.',
  2: 'Technologická odstávka služby - 0:00-0:10',
  3: 'Služba nedostupná',
});
const FAULT =
  '<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">' +
  '<soapenv:Body><soapenv:Fault><faultcode>soapenv:Server</faultcode><faultstring>Internal Error</faultstring>' +
  '</soapenv:Fault></soapenv:Body></soapenv:Envelope>';
const TOO_MANY_HTML =
  '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head><title>429 Too Many Requests</title></head>' +
  '<body><h1>Too Many Requests</h1></body></html>\n';

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
});

export function createCzAdisSimulator(options: RegistrySimulatorOptions = {}): CzAdisSimulator {
  const { controls, now } = nationalControls(options);
  let maintenance: boolean | 'auto' = false;

  const respond = (res: ServerResponse, code: number, payers = '') =>
    send(
      res,
      200,
      XML,
      '<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">' +
        `<soapenv:Header/><soapenv:Body><StatusNespolehlivyPlatceRozsirenyResponse xmlns="${NS}">` +
        `<status odpovedGenerovana="${zoneDate(TIME_ZONE, now())}" statusCode="${code}" statusText="${STATUS_TEXT[code]}"/>` +
        `${payers}</StatusNespolehlivyPlatceRozsirenyResponse></soapenv:Body></soapenv:Envelope>`,
    );

  const fault = (res: ServerResponse) => {
    controls.recordError('CZ', 'FAULT');
    send(res, controls.settings.errorStatus ?? 500, XML, FAULT);
  };

  function inMaintenance(): boolean {
    if (maintenance === true) return true;
    if (maintenance !== 'auto') return false;
    const wall = zoneWallTime(TIME_ZONE, now());
    return wall.hour === 0 && wall.minute < 10;
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    if (route !== '/dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP') {
      return send(res, 404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>');
    }
    if (req.method !== 'POST') {
      return send(
        res,
        200,
        'text/html',
        '<html><body>rozhraniCRPDPH (simulated): POST a SOAP request</body></html>',
      );
    }
    const text = body.toString('utf8');
    const dics = requestedDics(text);
    if (dics === null) return fault(res);
    const admission = controls.admit('CZ');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError('CZ', 'HTML_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') {
      controls.recordError('CZ', 'HTTP_429');
      return send(res, 429, 'text/html', TOO_MANY_HTML);
    }
    try {
      await controls.delay('CZ');
      if (inMaintenance()) return respond(res, 2);
      if (controls.isDown('CZ')) return respond(res, 3);
      const injected = controls.injectedError('CZ');
      if (injected === 'HTML_503') {
        controls.recordError('CZ', injected);
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      if (injected) return fault(res);
      const asked = dics.slice(0, MAX_DIC);
      const outcomes = asked.map((dic) => (/^\d{8,10}$/.test(dic) ? czOutcome(dic) : 'NENALEZEN'));
      if (outcomes.includes('fault')) return fault(res);
      if (outcomes.includes('maintenance')) return respond(res, 2);
      if (outcomes.includes('unavailable')) return respond(res, 3);
      const payers = asked.map((dic, i) => payerXml(dic, outcomes[i] as CzOutcome)).join('');
      return respond(res, dics.length > MAX_DIC ? 1 : 0, payers);
    } finally {
      admission.release();
    }
  }

  return {
    prefix: '/cz-adis',
    handle,
    control(command) {
      if (command.reset === true) maintenance = false;
      if (typeof command.maintenance === 'boolean' || command.maintenance === 'auto') {
        maintenance = command.maintenance;
      }
      return { ...controls.apply(command), maintenance };
    },
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}

/** The `dic` values of a `StatusNespolehlivyPlatceRozsirenyRequest`, or `null` for another body. */
function requestedDics(text: string): string[] | null {
  if (XMLValidator.validate(text) !== true) return null;
  const parsed = parser.parse(text) as Record<string, unknown>;
  const envelope = parsed.Envelope as Record<string, unknown> | undefined;
  const soapBody = envelope?.Body as Record<string, unknown> | undefined;
  const request = soapBody?.StatusNespolehlivyPlatceRozsirenyRequest as Record<string, unknown> | undefined;
  if (!request || request.dic === undefined) return null;
  const list = Array.isArray(request.dic) ? request.dic : [request.dic];
  return list.map((dic) => String(dic).trim());
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** One `statusPlatceDPH`, shaped as the recorded ones. */
function payerXml(dic: string, outcome: CzOutcome): string {
  if (outcome !== 'NE' && outcome !== 'ANO') {
    return `<statusPlatceDPH dic="${escapeXml(dic)}" nespolehlivyPlatce="NENALEZEN"/>`;
  }
  const company = nationalCompany('CZ', dic);
  const unreliable = outcome === 'ANO' ? ' datumZverejneniNespolehlivosti="2024-03-01"' : '';
  const office = 400 + (company.hash % 60);
  return (
    `<statusPlatceDPH dic="${dic}" nespolehlivyPlatce="${outcome}"${unreliable} cisloFu="${office}">` +
    '<zverejneneUcty><ucet datumZverejneni="2013-04-09">' +
    `<standardniUcet cislo="${String(company.hash).padStart(10, '0')}" kodBanky="0100"/></ucet></zverejneneUcty>` +
    `<nazevSubjektu>${escapeXml(company.name.padEnd(40, ' '))}</nazevSubjektu>` +
    `<adresa><uliceCislo>${escapeXml(company.street)}</uliceCislo><mesto>${escapeXml(company.town)}</mesto>` +
    `<psc>${company.postcode}</psc><stat>Česká republika</stat></adresa></statusPlatceDPH>`
  );
}
