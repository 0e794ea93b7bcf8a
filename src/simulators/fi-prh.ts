/**
 * Finnish Business Information System simulator (PRH/YTJ open data v3): `GET
 * /opendata-ytj-api/v3/companies?businessId=NNNNNNN-N`.
 *
 * Answers are built from the recorded Nokia answer (stella/stella
 * packages/business-registries/src/prh/__fixtures__/lookup-nokia.json; the same answer captured on
 * 2026-10-05, index id 71201165206): `{totalResults, companies: [{businessId, euId, names,
 * mainBusinessLine, website, companyForms, companySituations, registeredEntries, addresses,
 * tradeRegisterStatus, status, registrationDate, lastModified}]}`, with register-6 (VAT register)
 * entries of type 80 "VAT-liable for business activity" and their three-language descriptions. An
 * unknown business ID answers `{totalResults: 0, companies: []}`, not 404 (lookup-not-found.json and
 * the notes in stella/stella …/prh/client.ts); a bad parameter answers HTTP 400 `{timestamp, message,
 * errorcode}` (the error body read by that client; errorcode 1005 from its test).
 *
 * Rule: a business ID is VAT-registered (a running register-6 entry) when the shared rule registers
 * its 8 digits (as VIES does); otherwise `(h >>> 8) % 3` picks a company without any register-6
 * entry, a company whose register-6 entry ended (`endDate`), or no company at all. Documented numbers
 * (`FI_PRH_NUMBERS`, the VAT numbers' 8 digits) answer one case each.
 *
 * Controls (`{"fi": {...}}`): the shared ones: `serviceDown` and `down: ["FI"]` (HTML 503), `hang`,
 * `latencyMs`, `errorRate` with a code `HTTP_500` or `HTML_503`, `rateLimit` and `concurrencyLimit`
 * (HTTP 429 with the error body; PRH publishes no limit and how it answers bursts is not recorded).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ControlledSimulator,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  sendJson,
} from './controls.js';
import { nationalCompany, nationalControls, unregisteredKind } from './national.js';

export type FiPrhSimulator = ControlledSimulator;

export type FiOutcome = 'vat_registered' | 'no_vat_entry' | 'vat_ended' | 'not_found' | 'server_error';

/** Documented numbers, by the VAT number's 8 digits. */
export const FI_PRH_NUMBERS: Readonly<Record<string, FiOutcome>> = Object.freeze({
  '11100007': 'vat_registered',
  '11100015': 'no_vat_entry',
  '11100023': 'vat_ended',
  '11100031': 'not_found',
  '11100058': 'server_error',
});

/** What PRH answers for a business ID's 8 digits (controls aside). */
export function fiOutcome(digits: string): FiOutcome {
  const documented = FI_PRH_NUMBERS[digits];
  if (documented) return documented;
  if (nationalCompany('FI', digits).registered) return 'vat_registered';
  return unregisteredKind('FI', digits, ['no_vat_entry', 'vat_ended', 'not_found'] as const);
}

const DESCRIPTIONS = {
  registered: [
    { languageCode: '3', description: 'Registered' },
    { languageCode: '2', description: 'Registrerad' },
    { languageCode: '1', description: 'Rekisterissä' },
  ],
  vat: [
    { languageCode: '1', description: 'Liiketoiminnasta arvonlisäverovelvollinen' },
    { languageCode: '2', description: 'Momsskyldig för rörelseverksamhet' },
    { languageCode: '3', description: 'VAT-liable for business activity' },
  ],
};

export function createFiPrhSimulator(options: RegistrySimulatorOptions = {}): FiPrhSimulator {
  const { controls, now } = nationalControls(options);

  const errorBody = (res: ServerResponse, status: number, message: string, errorcode?: number) => {
    controls.recordError('FI', `HTTP_${status}`);
    sendJson(res, status, {
      timestamp: now().toISOString().slice(0, 19),
      message,
      ...(errorcode !== undefined ? { errorcode } : {}),
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const url = new URL(path, 'http://sim');
    if (req.method !== 'GET' || url.pathname.replace(/\/+$/, '') !== '/opendata-ytj-api/v3/companies') {
      return send(res, 404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>');
    }
    const admission = controls.admit('FI');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError('FI', 'HTML_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') return errorBody(res, 429, 'Too many requests');
    try {
      await controls.delay('FI');
      if (controls.isDown('FI')) {
        controls.recordError('FI', 'HTML_503');
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      const injected = controls.injectedError('FI');
      if (injected === 'HTML_503') {
        controls.recordError('FI', injected);
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      if (injected) return errorBody(res, 500, 'Internal server error');
      const businessId = url.searchParams.get('businessId');
      if (businessId === null) return errorBody(res, 400, 'Parameter businessId is missing', 1005);
      const match = /^(\d{7})-(\d)$/.exec(businessId.trim());
      if (!match) return errorBody(res, 400, 'Parameter businessId is not a valid business ID', 1005);
      const digits = `${match[1]}${match[2]}`;
      const outcome = fiOutcome(digits);
      if (outcome === 'server_error') return errorBody(res, 500, 'Internal server error');
      if (outcome === 'not_found') return sendJson(res, 200, { totalResults: 0, companies: [] });
      sendJson(res, 200, { totalResults: 1, companies: [companyOf(businessId.trim(), digits, outcome)] });
    } finally {
      admission.release();
    }
  }

  return {
    prefix: '/fi-prh',
    handle,
    control: (command) => ({ ...controls.apply(command) }),
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}

/** One company, its fields in the recorded order. */
function companyOf(businessId: string, digits: string, outcome: FiOutcome): Record<string, unknown> {
  const company = nationalCompany('FI', digits);
  const street = company.street.replace(/ \d+$/, '');
  const number = company.street.replace(/^.* /, '');
  const entries: Record<string, unknown>[] = [
    {
      type: '1',
      descriptions: DESCRIPTIONS.registered,
      registrationDate: '2005-03-01',
      register: '1',
      authority: '2',
    },
    {
      type: '1',
      descriptions: DESCRIPTIONS.registered,
      registrationDate: '2005-03-01',
      register: '4',
      authority: '1',
    },
  ];
  if (outcome === 'vat_registered' || outcome === 'vat_ended') {
    entries.push({
      type: '80',
      descriptions: DESCRIPTIONS.vat,
      registrationDate: '2005-03-01',
      ...(outcome === 'vat_ended' ? { endDate: '2021-06-30' } : {}),
      register: '6',
      authority: '1',
    });
  }
  return {
    businessId: { value: businessId, registrationDate: '2005-03-01', source: '3' },
    euId: { value: `FIFPRO.${businessId}`, source: '1' },
    names: [{ name: company.name, type: '1', registrationDate: '2005-03-01', version: 1, source: '1' }],
    mainBusinessLine: {
      type: '62010',
      descriptions: [
        { languageCode: '3', description: 'Computer programming activities' },
        { languageCode: '1', description: 'Ohjelmistojen suunnittelu ja valmistus' },
        { languageCode: '2', description: 'Programvaruutveckling' },
      ],
      typeCodeSet: 'TOIMI4',
      registrationDate: '2005-03-01',
      source: '2',
    },
    companyForms: [
      {
        type: '16',
        descriptions: [
          { languageCode: '1', description: 'Osakeyhtiö' },
          { languageCode: '3', description: 'Limited company' },
          { languageCode: '2', description: 'Aktiebolag' },
        ],
        registrationDate: '2005-03-01',
        version: 1,
        source: '1',
      },
    ],
    companySituations: [],
    registeredEntries: entries,
    addresses: [
      {
        type: 1,
        street,
        postCode: company.postcode,
        postOffices: [
          { city: company.town, languageCode: '1', municipalityCode: '091' },
          { city: company.town, languageCode: '2', municipalityCode: '091' },
        ],
        buildingNumber: number,
        entrance: '',
        apartmentNumber: '',
        apartmentIdSuffix: '',
        co: '',
        registrationDate: '2005-03-01',
        source: '0',
      },
    ],
    tradeRegisterStatus: '1',
    status: '2',
    registrationDate: '2005-03-01',
    lastModified: '2026-05-04T07:31:50',
  };
}
