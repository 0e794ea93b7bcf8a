/**
 * EOS simulator: the Commission's EORI validation service (`POST /validation/services/validation`,
 * SOAP 1.1, `validateEORI` in `http://eori.ws.eos.dds.s/`), answering as its WebLogic JAX-WS
 * endpoint does.
 *
 * Shapes and where they come from:
 * - The answer: `<S:Envelope><S:Body><ns0:validateEORIResponse xmlns:ns0="http://eori.ws.eos.dds.s/">
 *   <return><requestDate>25/06/2024</requestDate><result><eori>…</eori><status>1</status>
 *   <statusDescr>Not valid</statusDescr></result>…</return>`, recorded in
 *   annuaire-entreprises-data-gouv-fr/api-proxy, src/clients/eori/index.ts (and in the earlier
 *   annuaire-entreprises-data-gouv-fr/site, clients/eori/index.ts, 2024-06-25). The day-only
 *   `dd/MM/yyyy` requestDate is that recording's.
 * - The fields of `return` and of each `result` and their order (`requestDate`, `errorDescription`?,
 *   `result`*; `eori`, `status`, `statusDescr`, `errorReason`?, `name`?, `address`?, `street`?,
 *   `postalCode`?, `city`?, `country`?) and the qualified `eori` request children: the JAX-WS
 *   classes generated from the service's WSDL, SystemaAS/syjservicestn-expft,
 *   src/com/eori/validation/soap/ws/client/generated/ (EoriValidationResult.java, EoriResponse.java,
 *   ValidateEORI.java, package-info.java). `statusDescr` is `Valid` or `Not valid` (the same
 *   recording; Odoo's base_eori tests `statusDescr == 'Valid'`).
 * - Faults are JAX-WS RI faults: `<S:Fault xmlns:ns4="http://www.w3.org/2003/05/soap-envelope">
 *   <faultcode>S:Client</faultcode><faultstring>…</faultstring></S:Fault>`. A request whose body is
 *   not `{http://eori.ws.eos.dds.s/}validateEORI` gets the dispatcher's
 *   `Cannot find dispatch method for Request=[SOAPAction=…,Payload={ns}name]` (javaee/metro-jax-ws,
 *   jaxws-ri/rt/src/main/java/com/sun/xml/ws/wsdl/OperationDispatcher.java). That dispatcher looks
 *   at the payload's name before the SOAPAction, so a SOAPAction naming something else with the
 *   right payload is answered like any other request; the fault names the SOAPAction it was sent.
 * - Which numbers a request may hold, how many the service takes at once, and its throttling are
 *   stated only in the WSDL's prose ("the number of EORI numbers to validate at once is limited …
 *   number of requests in a timeframe is limited", EORIValidation.java there) and a third-party
 *   comment ("max 10 EORI numbers per request"). No recorded answer of those limits was found: over
 *   10 numbers this simulator answers an `errorDescription` (the field the schema has for it), and
 *   throttling with HTTP 429 and an HTML page. The texts of `errorDescription` and `errorReason`
 *   are this simulator's own.
 * - Outages: the HTML 503 page of the Commission's front servers, shared with the VIES simulator.
 *
 * Test numbers (the identifier after any member state's code or XI, e.g. `DE100`, `XI200`):
 * `100` valid with name and address, `101` valid with nothing published, `200` not valid,
 * `300` a server fault for the whole request, `301` an `errorReason` for that number alone,
 * `302` an `errorDescription` for the whole request, `303` the HTML maintenance page (503),
 * `304` no answer at all. Any other number: registered unless its hash says not (the shared rule),
 * and three in four registered traders publish their name and address. GB numbers and numbers
 * that are not `CC` + 1 to 15 letters and digits are `Not valid`, as EOS answers numbers it does
 * not hold.
 *
 * Controls (`{"eos": {...}}`): the shared ones on the key `EOS` (`latencyMs`, `hang`, `serviceDown`,
 * `rateLimit`, `concurrencyLimit` and `globalConcurrencyLimit`, answered 429, `down: ["EOS"]`,
 * answered with a server fault, `errorRate` with a code of `SOAP_FAULT`, `HTML_503`, `THROTTLED`,
 * `ERROR_DESCRIPTION` or `HANG`, `errorStatus` for the HTTP status of faults and pages).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { XMLValidator } from 'fast-xml-parser';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  simulatedCompany,
} from './controls.js';
import { answerXml, type EosTrader, eosFault, eosRequestDate, readRequest, resultXml } from './eos-xml.js';

export { EOS_SIM_NAMESPACE, type EosTrader, eosFault, eosRequestDate } from './eos-xml.js';

const KEY = 'EOS';
const XML = 'text/xml;charset=utf-8';

const COUNTRIES = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK XI'.split(' '),
);

/** The test numbers: the identifier after the country code, for any member state or XI. */
export const EOS_TEST_NUMBERS: Readonly<Record<string, string>> = Object.freeze({
  '100': 'valid, name and address published',
  '101': 'valid, nothing published',
  '200': 'not valid',
  '300': 'SOAP fault (S:Server) for the whole request',
  '301': 'errorReason for this number',
  '302': 'errorDescription for the whole request',
  '303': 'HTML maintenance page, HTTP 503',
  '304': 'no answer',
});

/** Whole-request outcomes, by test number, in the order they take precedence. */
const REQUEST_OUTCOMES: readonly [string, RequestFault][] = [
  ['304', 'HANG'],
  ['303', 'HTML_503'],
  ['300', 'SOAP_FAULT'],
  ['302', 'ERROR_DESCRIPTION'],
];

type RequestFault = 'SOAP_FAULT' | 'HTML_503' | 'THROTTLED' | 'ERROR_DESCRIPTION' | 'HANG';

export type EosExpected =
  | { status: 0 | 1; trader: EosTrader | null }
  | { errorReason: string }
  | { requestFault: RequestFault };

/** What the simulator answers for one number, ignoring controls (for tests and documentation). */
export function expectedEosAnswer(eori: string): EosExpected {
  const number = eori.trim().toUpperCase();
  const country = number.slice(0, 2);
  const national = number.slice(2);
  if (!COUNTRIES.has(country) || !/^[0-9A-Z]{1,15}$/.test(national)) return { status: 1, trader: null };
  const fault = REQUEST_OUTCOMES.find(([magic]) => magic === national)?.[1];
  if (fault) return { requestFault: fault };
  if (national === '301')
    return { errorReason: 'The validation of this EORI number could not be completed.' };
  if (national === '200') return { status: 1, trader: null };
  const company = simulatedCompany(country, national);
  const magic = national === '100' || national === '101';
  if (!magic && !company.registered) return { status: 1, trader: null };
  const published = national === '100' || (!magic && (company.hash >>> 7) % 4 !== 0);
  if (!published) return { status: 0, trader: null };
  return {
    status: 0,
    trader: {
      name: company.name,
      street: company.street,
      postalCode: company.postcode,
      city: company.town,
      country,
    },
  };
}

const TOO_MANY_REQUESTS_HTML =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n<html><head><title>429 Too Many Requests</title></head>\n' +
  '<body><h1>Too Many Requests</h1><p>The number of requests in a timeframe is limited. Please try again later.</p></body></html>\n';

export type EosSimulatorOptions = RegistrySimulatorOptions;

export function createEosSimulator(options: EosSimulatorOptions = {}): ControlledSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });
  let received: string[] = [];
  let soapActions: Record<string, number> = {};
  let largestRequest = 0;

  function record(eoris: string[], action: string): void {
    received = [...received, ...eoris].slice(-1000);
    soapActions[action] = (soapActions[action] ?? 0) + 1;
    largestRequest = Math.max(largestRequest, eoris.length);
  }

  function fail(res: ServerResponse, req: IncomingMessage, fault: RequestFault) {
    controls.recordError(KEY, fault);
    const status = controls.settings.errorStatus;
    switch (fault) {
      case 'HANG':
        return hangForever(req, res);
      case 'HTML_503':
        return send(res, status ?? 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      case 'THROTTLED':
        return send(res, 429, 'text/html', TOO_MANY_REQUESTS_HTML, { 'retry-after': '1' });
      case 'SOAP_FAULT':
        // An unchecked exception, as JAX-WS RI reports one: its message, else its class name.
        return send(res, status ?? 500, XML, eosFault('S:Server', 'java.lang.NullPointerException'));
      case 'ERROR_DESCRIPTION':
        return send(
          res,
          200,
          XML,
          answerXml(
            `<requestDate>${eosRequestDate(now())}</requestDate><errorDescription>The EORI validation service is temporarily unable to process the request.</errorDescription>`,
          ),
        );
    }
  }

  async function validate(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const contentType = String(req.headers['content-type'] ?? '');
    if (!/^\s*text\/xml\b/i.test(contentType)) {
      const fault = `Unsupported Content-Type: ${contentType || 'null'} Supported ones are: [text/xml]`;
      return send(res, 415, XML, eosFault('S:Client', fault));
    }
    const admission = controls.admit(KEY);
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') return fail(res, req, 'HTML_503');
    if (admission.kind !== 'admitted') return fail(res, req, 'THROTTLED');
    try {
      await controls.delay(KEY);
      await answer(req, res, body);
    } finally {
      admission.release();
    }
  }

  async function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const action = req.headers.soapaction === undefined ? 'null' : String(req.headers.soapaction);
    const text = body.toString('utf8');
    if (text.trim() === '' || XMLValidator.validate(text) !== true) {
      const fault =
        "Couldn't create SOAP message due to exception: XML reader error: unexpected character content";
      return send(res, controls.settings.errorStatus ?? 500, XML, eosFault('S:Client', fault));
    }
    const request = readRequest(text);
    if (request.kind !== 'operation') {
      const payload = request.kind === 'dispatch' ? request.payload : '{}';
      const fault = `Cannot find dispatch method for Request=[SOAPAction=${action},Payload=${payload}]`;
      return send(res, controls.settings.errorStatus ?? 500, XML, eosFault('S:Client', fault));
    }
    record(request.eoris, action);
    if (controls.isDown(KEY)) return fail(res, req, 'SOAP_FAULT');
    const injected = controls.injectedError(KEY) as RequestFault | undefined;
    if (injected) return fail(res, req, injected);
    if (request.eoris.length > 10) {
      return send(
        res,
        200,
        XML,
        answerXml(
          `<requestDate>${eosRequestDate(now())}</requestDate><errorDescription>The number of EORI numbers to validate at once is limited to 10.</errorDescription>`,
        ),
      );
    }
    const expected = request.eoris.map((eori) => [eori, expectedEosAnswer(eori)] as const);
    for (const [, fault] of REQUEST_OUTCOMES) {
      if (expected.some(([, e]) => 'requestFault' in e && e.requestFault === fault))
        return fail(res, req, fault);
    }
    const results = expected.map(([eori, e]) => ('requestFault' in e ? '' : resultXml(eori, e))).join('');
    send(res, 200, XML, answerXml(`<requestDate>${eosRequestDate(now())}</requestDate>${results}`));
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    if (req.method === 'POST' && route === '/validation/services/validation') return validate(req, res, body);
    if (controls.settings.hang === true) return hangForever(req, res);
    send(
      res,
      404,
      'text/html',
      '<html><head><title>Error 404--Not Found</title></head><body><h2>Error 404--Not Found</h2></body></html>',
    );
  }

  return {
    prefix: '/eos',
    handle,
    control(command) {
      if (command.reset === true || command.resetStats === true) {
        received = [];
        soapActions = {};
        largestRequest = 0;
      }
      return { ...controls.apply(command) };
    },
    stats: () => ({
      ...controls.stats(),
      eorisReceived: [...received],
      soapActions: { ...soapActions },
      largestRequest,
    }),
    controls,
  };
}
