/**
 * Romanian register of VAT payers simulator (ANAF PlatitorTvaRest v9): `POST
 * /api/PlatitorTvaRest/v9/tva` with `[{"cui": 12345678, "data": "YYYY-MM-DD"}, …]` (at most 100).
 *
 * Answers are built from the recorded ones in TecsiAron/ANAF-API-Client-PHP
 * tests/ParseTests/EntityResponseTest.php: `{cod: 200, message: "SUCCESS", found: [...], notFound:
 * [12345678]}` with each found entry's blocks (`date_generale`, `inregistrare_scop_Tva` with
 * `perioade_TVA`, `inregistrare_RTVAI`, `stare_inactiv`, `inregistrare_SplitTVA`,
 * `adresa_sediu_social`, `adresa_domiciliu_fiscal`) and their fields in the recorded order. A request
 * ANAF's firewall rejects is answered, as reported in itrack/anaf#19, with HTTP 200 and the page "The
 * requested URL was rejected. Please consult with your administrator. Your support ID is: …" (the
 * markup around that text is the firewall's default page, not recorded here).
 *
 * Rule: a CUI with a valid check digit is registered for VAT (`scpTVA: true`, one open period) when
 * the shared rule registers it (as VIES does); otherwise `(h >>> 8) % 3` picks a taxpayer whose VAT
 * registration ended (`scpTVA: false`, a closed period), an inactive taxpayer (`scpTVA: false`,
 * `statusInactivi: true`) or a CUI ANAF does not know (`notFound`), as is a CUI with a wrong check
 * digit. Documented numbers (`RO_ANAF_NUMBERS`) answer one case each.
 *
 * Controls (`{"ro": {...}}`): `notFoundStatus` (HTTP status of an answer that finds nothing: 200 as
 * recorded, or 404 as some clients report for v9), and the shared ones: `rateLimit` (`{"limit": 1,
 * "windowMs": 1000}` for the documented 1 request a second; over it the firewall's page),
 * `concurrencyLimit` (likewise), `serviceDown` and `down: ["RO"]` (HTML 503), `hang`, `latencyMs`,
 * `errorRate` with a code `REQUEST_REJECTED`, `HTTP_429`, `HTML_503` or `HTTP_500`. A body that is not
 * a JSON array of at most 100 items answers HTTP 400 `{cod: 400, message}` (the shape of ANAF's error
 * answer is not recorded).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { roCui } from '../registries/national-ids.js';
import {
  type ControlledSimulator,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  sendJson,
} from './controls.js';
import { nationalCompany, nationalControls, unregisteredKind } from './national.js';

export type RoAnafSimulator = ControlledSimulator;

export type RoOutcome = 'registered' | 'deregistered' | 'inactive' | 'not_found' | 'rejected';

export const RO_ANAF_NUMBERS: Readonly<Record<string, RoOutcome>> = Object.freeze({
  '11100005': 'registered',
  '11100013': 'deregistered',
  '11100021': 'inactive',
  '11100030': 'not_found',
  '11100048': 'rejected',
});

/** What ANAF answers for a CUI (controls aside). */
export function roOutcome(cui: string): RoOutcome {
  const documented = RO_ANAF_NUMBERS[cui];
  if (documented) return documented;
  if (!roCui(cui).ok) return 'not_found';
  if (nationalCompany('RO', cui).registered) return 'registered';
  return unregisteredKind('RO', cui, ['deregistered', 'inactive', 'not_found'] as const);
}

const MAX_CUI = 100;

export function firewallPage(supportId: string): string {
  return (
    '<html><head><title>Request Rejected</title></head><body>The requested URL was rejected. ' +
    `Please consult with your administrator.<br><br>Your support ID is: ${supportId}<br><br>` +
    "<a href='javascript:history.back();'>[Go Back]</a></body></html>"
  );
}

export function createRoAnafSimulator(options: RegistrySimulatorOptions = {}): RoAnafSimulator {
  const { controls } = nationalControls(options);
  let notFoundStatus = 200;
  let rejections = 0;

  const rejected = (res: ServerResponse) => {
    controls.recordError('RO', 'REQUEST_REJECTED');
    rejections++;
    send(res, 200, 'text/html', firewallPage(String(8_096_782_510_241_224_000n + BigInt(rejections))));
  };

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    if (route !== '/api/PlatitorTvaRest/v9/tva')
      return send(res, 404, 'text/html', '<html><body>Not Found</body></html>');
    // A request shaped like a crawler's (not a POST) is what the firewall rejects.
    if (req.method !== 'POST') return rejected(res);
    const admission = controls.admit('RO');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError('RO', 'HTML_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') return rejected(res);
    try {
      await controls.delay('RO');
      if (controls.isDown('RO')) {
        controls.recordError('RO', 'HTML_503');
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      const injected = controls.injectedError('RO');
      if (injected === 'REQUEST_REJECTED') return rejected(res);
      if (injected) {
        controls.recordError('RO', injected);
        if (injected === 'HTTP_429')
          return send(res, 429, 'text/html', '<html><body>Too Many Requests</body></html>');
        if (injected === 'HTTP_500')
          return send(res, 500, 'text/html', '<html><body>Internal Server Error</body></html>');
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      const items = requestItems(body.toString('utf8'));
      if (items === null) {
        return sendJson(res, 400, {
          cod: 400,
          message: 'Cererea nu este un vector JSON de cel mult 100 CUI-uri',
        });
      }
      const outcomes = items.map((item) => roOutcome(item.cui));
      if (outcomes.includes('rejected')) return rejected(res);
      const found: Record<string, unknown>[] = [];
      const notFound: number[] = [];
      items.forEach((item, i) => {
        if (outcomes[i] === 'not_found') notFound.push(Number(item.cui));
        else found.push(foundEntry(item.cui, item.date, outcomes[i] as RoOutcome));
      });
      const status = found.length === 0 ? notFoundStatus : 200;
      // The body is the recorded one whatever the status (what `cod` says with a 404 is not recorded).
      sendJson(res, status, { cod: 200, message: 'SUCCESS', found, notFound });
    } finally {
      admission.release();
    }
  }

  return {
    prefix: '/ro-anaf',
    handle,
    control(command) {
      if (command.reset === true) notFoundStatus = 200;
      if (command.notFoundStatus === 200 || command.notFoundStatus === 404)
        notFoundStatus = command.notFoundStatus;
      return { ...controls.apply(command), notFoundStatus };
    },
    stats: () => ({ ...controls.stats(), firewallRejections: rejections }),
    controls,
  };
}

/** `[{cui, data}]` with CUIs as numbers or digit strings, or `null` for any other body. */
function requestItems(text: string): { cui: string; date: string }[] | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(json) || json.length === 0 || json.length > MAX_CUI) return null;
  const items: { cui: string; date: string }[] = [];
  for (const item of json) {
    if (typeof item !== 'object' || item === null) return null;
    const { cui, data } = item as { cui?: unknown; data?: unknown };
    const digits = typeof cui === 'number' ? String(cui) : typeof cui === 'string' ? cui.trim() : '';
    if (!/^\d{1,13}$/.test(digits) || typeof data !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(data))
      return null;
    items.push({ cui: String(Number(digits)), date: data });
  }
  return items;
}

/** One `found` entry, its blocks and fields in the recorded order. */
function foundEntry(cui: string, date: string, outcome: RoOutcome): Record<string, unknown> {
  const company = nationalCompany('RO', cui);
  const postcode = company.postcode.padStart(6, '0');
  const registered = outcome === 'registered';
  const inactive = outcome === 'inactive';
  const street = company.street.replace(/ \d+$/, '');
  const number = company.street.replace(/^.* /, '');
  return {
    date_generale: {
      cui: Number(cui),
      data: date,
      denumire: company.name,
      adresa: `${company.town}, ${street}, NR.${number}`,
      nrRegCom: `J40/${company.hash % 20_000}/2005`,
      telefon: '',
      fax: '',
      codPostal: postcode,
      act: '',
      stare_inregistrare: 'INREGISTRAT din data 01.03.2005',
      data_inregistrare: '2005-03-01',
      cod_CAEN: '6201',
      iban: '',
      statusRO_e_Factura: registered,
      organFiscalCompetent: 'Administraţia Fiscală pentru Contribuabili Mijlocii',
      forma_de_proprietate: 'PROPR.PRIVATA-CAPITAL PRIVAT AUTOHTON',
      forma_organizare: 'PERSOANA JURIDICA',
      forma_juridica: 'SOCIETATE COMERCIALĂ CU RĂSPUNDERE LIMITATĂ',
    },
    inregistrare_scop_Tva: {
      scpTVA: registered,
      perioade_TVA: [
        {
          data_inceput_ScpTVA: '2005-03-01',
          data_sfarsit_ScpTVA: registered ? '' : '2021-06-30',
          data_anul_imp_ScpTVA: registered ? '' : '2021-06-30',
          mesaj_ScpTVA: registered ? '' : 'anulare inregistrare in scopuri de TVA',
        },
      ],
    },
    inregistrare_RTVAI: {
      dataInceputTvaInc: '',
      dataSfarsitTvaInc: '',
      dataActualizareTvaInc: '',
      dataPublicareTvaInc: '',
      tipActTvaInc: '',
      statusTvaIncasare: false,
    },
    stare_inactiv: {
      dataInactivare: inactive ? '2021-06-01' : '',
      dataReactivare: '',
      dataPublicare: inactive ? '2021-06-02' : '',
      dataRadiere: '',
      statusInactivi: inactive,
    },
    inregistrare_SplitTVA: { dataInceputSplitTVA: '', dataAnulareSplitTVA: '', statusSplitTVA: false },
    adresa_sediu_social: {
      sdenumire_Strada: street,
      snumar_Strada: number,
      sdenumire_Localitate: company.town,
      scod_Localitate: String(company.hash % 1000),
      sdenumire_Judet: 'MUNICIPIUL BUCUREŞTI',
      scod_Judet: '40',
      scod_JudetAuto: 'B',
      stara: '',
      sdetalii_Adresa: '',
      scod_Postal: postcode,
    },
    adresa_domiciliu_fiscal: {
      ddenumire_Strada: street,
      dnumar_Strada: number,
      ddenumire_Localitate: company.town,
      dcod_Localitate: String(company.hash % 1000),
      ddenumire_Judet: 'MUNICIPIUL BUCUREŞTI',
      dcod_Judet: '40',
      dcod_JudetAuto: 'B',
      dtara: '',
      ddetalii_Adresa: '',
      dcod_Postal: postcode,
    },
  };
}
