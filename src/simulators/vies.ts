/**
 * VIES simulator: REST (`POST /rest-api/check-vat-number`, `POST /rest-api/check-vat-test-service`,
 * `GET /rest-api/check-status`, the web UI's `GET /rest-api/ms/{cc}/vat/{n}`) and SOAP
 * (`POST /services/checkVatService`, `POST /services/checkVatTestService`), with the real
 * services' field names, error envelopes and quirks:
 *
 * - errors are `{actionSucceed:false, errorWrappers:[{error}]}` (pretty-printed like the real
 *   server) with HTTP 400 (INVALID_INPUT, INVALID_REQUESTER_INFO) or 500 (the rest), or the
 *   `errorStatus` control's status (e.g. 200); SOAP faults are `env:Server` with the bare code in
 *   `faultstring`, HTTP 500 unless `errorStatus` says otherwise;
 * - name/address `---` for unregistered numbers and for DE and ES (member states that do not
 *   disclose); `requestIdentifier` only when a requester is given, `""` otherwise;
 * - the test-service numbers work for every country on every endpoint: 100 valid, 200 invalid,
 *   201 INVALID_INPUT, 202 INVALID_REQUESTER_INFO, 300 SERVICE_UNAVAILABLE, 301 MS_UNAVAILABLE,
 *   302 TIMEOUT, 400 VAT_BLOCKED, 401 IP_BLOCKED, 500 GLOBAL_MAX_CONCURRENT_REQ,
 *   501 GLOBAL_MAX_CONCURRENT_REQ_TIME, 600 MS_MAX_CONCURRENT_REQ, 601 MS_MAX_CONCURRENT_REQ_TIME;
 *   on the test-service endpoints any other number answers SERVICE_UNAVAILABLE;
 * - approximate matching (vies-approx.ts): the trader fields sent are answered in `trader*Match`
 *   (REST `VALID`/`INVALID`/`NOT_PROCESSED`, SOAP `checkVatApprox` 1/2/3), Spain comparing although
 *   it discloses nothing, Germany `NOT_PROCESSED`;
 * - SOAP: a non-empty SOAPAction is refused ("does not match an operation"), a body that is not
 *   XML answers "Error reading XMLStreamReader.", a non-XML content type answers the WebLogic
 *   HTML "Error 500--Internal Server Error" page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { VIES_COUNTRIES } from '../registries/vies-common.js';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  sendJson,
  simulatedCompany,
} from './controls.js';
import { approximateMatch, NO_TRADER, type SimTrader } from './vies-approx.js';
import type { CheckOutcome } from './vies-outcome.js';
import { readSoapRequest, soapAnswer, soapFault } from './vies-soap.js';

/** The member states the simulated VIES answers for (the same list the client knows). */
export const SIM_VIES_COUNTRIES = VIES_COUNTRIES;
const COUNTRY_SET = new Set<string>(SIM_VIES_COUNTRIES);

/** Member states that answer `---` for name and address even for registered numbers. */
export const NON_DISCLOSING_COUNTRIES: readonly string[] = ['DE', 'ES'];

/** The VIES test-service numbers (national part), valid for any country. */
export const VIES_TEST_NUMBERS: Readonly<Record<string, 'valid' | 'invalid' | string>> = {
  '100': 'valid',
  '200': 'invalid',
  '201': 'INVALID_INPUT',
  '202': 'INVALID_REQUESTER_INFO',
  '300': 'SERVICE_UNAVAILABLE',
  '301': 'MS_UNAVAILABLE',
  '302': 'TIMEOUT',
  '400': 'VAT_BLOCKED',
  '401': 'IP_BLOCKED',
  '500': 'GLOBAL_MAX_CONCURRENT_REQ',
  '501': 'GLOBAL_MAX_CONCURRENT_REQ_TIME',
  '600': 'MS_MAX_CONCURRENT_REQ',
  '601': 'MS_MAX_CONCURRENT_REQ_TIME',
};

const CLIENT_ERRORS = new Set(['INVALID_INPUT', 'INVALID_REQUESTER_INFO']);
const VAT_PATTERN = /^[0-9A-Za-z+*.]{2,12}$/;

export type ViesSimulatorOptions = RegistrySimulatorOptions;

export type ViesSimulator = ControlledSimulator;

export type { CheckOutcome } from './vies-outcome.js';
export { soapDate, soapFault } from './vies-soap.js';

interface CheckInput {
  countryCode: string;
  vatNumber: string;
  requesterCountryCode?: string;
  requesterNumber?: string;
  /** The trader fields sent for approximate matching. */
  trader?: SimTrader;
}

/** What the simulator answers for a number, ignoring controls (for tests and documentation). */
export function expectedViesAnswer(
  country: string,
  national: string,
): { valid: boolean; name: string; address: string } | { error: string } {
  const magic = VIES_TEST_NUMBERS[national];
  if (magic && magic !== 'valid' && magic !== 'invalid') return { error: magic };
  const company = simulatedCompany(country, national);
  const valid = magic ? magic === 'valid' : company.registered;
  if (!valid || NON_DISCLOSING_COUNTRIES.includes(country)) return { valid, name: '---', address: '---' };
  return { valid, name: company.name, address: `${company.street}\n${company.postcode} ${company.town}` };
}

/** The real server's pretty-printed `CommonResponse`. */
export function viesErrorEnvelope(code: string, message?: string): string {
  const inner = message
    ? `    "error" : ${JSON.stringify(code)},\n    "message" : ${JSON.stringify(message)}\n`
    : `    "error" : ${JSON.stringify(code)}\n`;
  return `{\n  "actionSucceed" : false,\n  "errorWrappers" : [ {\n${inner}  } ]\n}`;
}

export function createViesSimulator(options: ViesSimulatorOptions = {}): ViesSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
  });
  let consultations = 0;

  function nextRequestIdentifier(): string {
    consultations++;
    return `WAPIAAAA${consultations.toString(36).toUpperCase().padStart(8, '0')}`;
  }

  async function check(input: CheckInput, testService: boolean): Promise<CheckOutcome> {
    const country = input.countryCode.trim().toUpperCase();
    const national = input.vatNumber.trim();
    const key = COUNTRY_SET.has(country) ? country : 'INVALID';
    const admission = controls.admit(key);
    if (admission.kind === 'hang') return { kind: 'hang' };
    if (admission.kind === 'service_down') {
      controls.recordError(key, 'HTTP_503');
      return { kind: 'service_down' };
    }
    const refuse = (code: string): CheckOutcome => {
      controls.recordError(key, code);
      return { kind: 'error', code };
    };
    if (admission.kind === 'country_limit') return refuse('MS_MAX_CONCURRENT_REQ');
    if (admission.kind === 'global_limit') return refuse('GLOBAL_MAX_CONCURRENT_REQ');
    if (admission.kind === 'rate_limit') return refuse('MS_MAX_CONCURRENT_REQ_TIME');
    try {
      await controls.delay(key);
      if (!COUNTRY_SET.has(country) || !VAT_PATTERN.test(national)) return refuse('INVALID_INPUT');
      if (controls.isDown(country)) return refuse('MS_UNAVAILABLE');
      const injected = controls.injectedError(country);
      if (injected) return refuse(injected);
      const magic = VIES_TEST_NUMBERS[national];
      if (magic && magic !== 'valid' && magic !== 'invalid') return refuse(magic);
      if (testService && !magic) return refuse('SERVICE_UNAVAILABLE');
      let requestIdentifier = '';
      if (input.requesterCountryCode || input.requesterNumber) {
        const rc = (input.requesterCountryCode ?? '').trim().toUpperCase();
        const rn = (input.requesterNumber ?? '').trim();
        const requesterOk =
          COUNTRY_SET.has(rc) &&
          VAT_PATTERN.test(rn) &&
          (VIES_TEST_NUMBERS[rn] === 'valid' ||
            (!VIES_TEST_NUMBERS[rn] && simulatedCompany(rc, rn).registered));
        if (!requesterOk) return refuse('INVALID_REQUESTER_INFO');
        requestIdentifier = nextRequestIdentifier();
      }
      const expected = expectedViesAnswer(country, national);
      if ('error' in expected) return refuse(expected.error);
      const trader = input.trader ?? NO_TRADER;
      return {
        kind: 'answer',
        countryCode: country,
        vatNumber: national,
        valid: expected.valid,
        name: expected.name,
        address: expected.address,
        requestIdentifier,
        requestDate: now(),
        trader,
        traderMatch: approximateMatch(country, national, expected.valid, trader),
      };
    } finally {
      admission.release();
    }
  }

  function errorStatus(code: string): number {
    return controls.settings.errorStatus ?? (CLIENT_ERRORS.has(code) ? 400 : 500);
  }

  async function restCheck(res: ServerResponse, body: Buffer, testService: boolean) {
    let input: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        input = parsed as Record<string, unknown>;
      }
    } catch {
      send(res, 400, 'application/json', viesErrorEnvelope('INVALID_INPUT'));
      return;
    }
    const str = (value: unknown) => (typeof value === 'string' ? value : '');
    const outcome = await check(
      {
        countryCode: str(input.countryCode),
        vatNumber: str(input.vatNumber),
        requesterCountryCode: str(input.requesterMemberStateCode),
        requesterNumber: str(input.requesterNumber),
        trader: {
          name: str(input.traderName),
          street: str(input.traderStreet),
          postcode: str(input.traderPostalCode),
          city: str(input.traderCity),
          companyType: str(input.traderCompanyType),
        },
      },
      testService,
    );
    if (outcome.kind === 'hang') return;
    if (outcome.kind === 'service_down') return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    if (outcome.kind === 'error') {
      return send(res, errorStatus(outcome.code), 'application/json', viesErrorEnvelope(outcome.code));
    }
    sendJson(res, 200, {
      countryCode: outcome.countryCode,
      vatNumber: outcome.vatNumber,
      requestDate: outcome.requestDate.toISOString(),
      valid: outcome.valid,
      requestIdentifier: outcome.requestIdentifier,
      name: outcome.name,
      address: outcome.address,
      // The trader fields come back as `---`, whether sent or not (znojil/vies
      // tests/Fixtures/data/check-vat-number/valid.json, 2026); the verdicts are in `trader*Match`.
      traderName: '---',
      traderStreet: '---',
      traderPostalCode: '---',
      traderCity: '---',
      traderCompanyType: '---',
      traderNameMatch: outcome.traderMatch.name,
      traderStreetMatch: outcome.traderMatch.street,
      traderPostalCodeMatch: outcome.traderMatch.postcode,
      traderCityMatch: outcome.traderMatch.city,
      traderCompanyTypeMatch: outcome.traderMatch.companyType,
    });
  }

  async function webUiCheck(res: ServerResponse, country: string, national: string, query: URLSearchParams) {
    const outcome = await check(
      {
        countryCode: country,
        vatNumber: national,
        requesterCountryCode: query.get('requesterMemberStateCode') ?? '',
        requesterNumber: query.get('requesterNumber') ?? '',
      },
      false,
    );
    if (outcome.kind === 'hang') return;
    if (outcome.kind === 'service_down') return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    const answered = outcome.kind === 'answer';
    const approximate = {
      name: '---',
      street: '---',
      postalCode: '---',
      city: '---',
      companyType: '---',
      matchName: 3,
      matchStreet: 3,
      matchPostalCode: 3,
      matchCity: 3,
      matchCompanyType: 3,
    };
    sendJson(res, 200, {
      isValid: answered ? outcome.valid : false,
      requestDate: (answered ? outcome.requestDate : now()).toISOString(),
      userError: answered ? (outcome.valid ? 'VALID' : 'INVALID') : outcome.code,
      name: answered ? outcome.name : '---',
      address: answered ? outcome.address : '---',
      requestIdentifier: answered ? outcome.requestIdentifier : '',
      originalVatNumber: national,
      vatNumber: national,
      viesApproximate: approximate,
    });
  }

  function checkStatus(res: ServerResponse) {
    if (controls.settings.serviceDown) return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    sendJson(res, 200, {
      vow: { available: true },
      countries: SIM_VIES_COUNTRIES.map((countryCode) => ({
        countryCode,
        availability: controls.isDown(countryCode) ? 'Unavailable' : 'Available',
      })),
    });
  }

  async function soapCheck(req: IncomingMessage, res: ServerResponse, body: Buffer, testService: boolean) {
    const request = readSoapRequest(req, body);
    if (request.kind === 'reply') return send(res, request.status, request.contentType, request.body);
    const outcome = await check(
      {
        countryCode: request.field('countryCode'),
        vatNumber: request.field('vatNumber'),
        requesterCountryCode: request.approx ? request.field('requesterCountryCode') : '',
        requesterNumber: request.approx ? request.field('requesterVatNumber') : '',
        trader: request.approx
          ? {
              name: request.field('traderName'),
              street: request.field('traderStreet'),
              postcode: request.field('traderPostcode'),
              city: request.field('traderCity'),
              companyType: request.field('traderCompanyType'),
            }
          : NO_TRADER,
      },
      testService,
    );
    if (outcome.kind === 'hang') return;
    if (outcome.kind === 'service_down') return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    if (outcome.kind === 'error') {
      const status = controls.settings.errorStatus ?? 500;
      return send(res, status, 'text/xml;charset=UTF-8', soapFault('env:Server', outcome.code));
    }
    send(res, 200, 'text/xml;charset=UTF-8', soapAnswer(request.approx, outcome));
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const url = new URL(path, 'http://sim');
    const route = url.pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (method === 'POST' && route === '/rest-api/check-vat-number') return restCheck(res, body, false);
    if (method === 'POST' && route === '/rest-api/check-vat-test-service') return restCheck(res, body, true);
    if (method === 'GET' && route === '/rest-api/check-status') return checkStatus(res);
    const ms = /^\/rest-api\/ms\/([^/]+)\/vat\/([^/]+)$/.exec(route);
    if (method === 'GET' && ms) {
      return webUiCheck(
        res,
        decodeURIComponent(ms[1] ?? ''),
        decodeURIComponent(ms[2] ?? ''),
        url.searchParams,
      );
    }
    if (method === 'POST' && route === '/services/checkVatService') return soapCheck(req, res, body, false);
    if (method === 'POST' && route === '/services/checkVatTestService')
      return soapCheck(req, res, body, true);
    if (controls.settings.hang === true) return hangForever(req, res);
    sendJson(res, 404, { error: 'Not Found', path: route });
  }

  return {
    prefix: '/vies',
    handle,
    control(command) {
      if (command.reset === true || command.resetStats === true) consultations = 0;
      return { ...controls.apply(command) };
    },
    stats: () => ({ ...controls.stats(), consultations }),
    controls,
  };
}
