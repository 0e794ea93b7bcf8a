/**
 * HMRC "Check an EORI number" simulator: `POST /hmrc/customs/eori/lookup/check-multiple-eori` (it
 * mounts under the HMRC simulator's prefix, so the same `HMRC_URL` serves both APIs), answering as
 * the API and the platform in front of it do. Sources, all in HMRC's public repositories:
 *
 * - The request rules and their 400 messages, checked in this order: none, more than 10, one not
 *   matching `^(GB|XI)[0-9]{12,15}$`, one starting with XI; the body `{"code": "INVALID_REQUEST",
 *   "message": …}` as documented, or the bare message as `text/plain` when the service runs with
 *   `formattedJsonResponseFlag=false` (its default configuration): hmrc/check-eori-number-api,
 *   app/uk/gov/hmrc/checkeorinumberapi/controllers/EoriController.scala, conf/application.conf,
 *   public/api/conf/1.0/application.yaml. The `plainTextErrors` control gives the second form.
 * - The answer, one item per number: `{eori, valid, companyDetails?: {traderName, address:
 *   {streetAndNumber, cityName, postcode}}, processingDate}` with `yyyy-MM-dd'T'HH:mm:ssxxx` on
 *   London time (models/CheckResponse.scala there; the example of application.yaml, "Aviationstr,
 *   141B Halsey Place, Huddersfield, HD98 2LI", is kept for GB123456789133).
 * - Which numbers answer what: the sandbox rule of the API's testing page, by last digit: 0 or 1
 *   valid without details, 2 to 5 valid with them, 6 or 7 valid without, 8 or 9 not valid
 *   (public/api/conf/1.0/application.yaml, public/api/conf/common/testing.md, and the lists in
 *   public/api/conf/1.0/test-data/). Last digit 5 gives an address without a postcode, which the
 *   backend passes on as `postcode: ""` (hmrc/check-eori-number-stub README.md;
 *   hmrc/check-eori-number, app/uk/gov/hmrc/checkeorinumber/connectors/EISConnector.scala).
 * - The stub's error numbers, each alone in a request: GB123456789007 (the backend's 400) and
 *   GB123456789008 (its 403) answer 500, GB123456789009 (its 500) answers 502, as bootstrap-play's
 *   JsonErrorHandler reports an upstream error (`{"statusCode": …, "message": …}`, a 4xx upstream
 *   as 500, a 5xx as 502): hmrc/check-eori-number-stub README.md, hmrc/bootstrap-play,
 *   bootstrap-backend-play-30/…/backend/http/JsonErrorHandler.scala.
 * - The platform's answers: 406 `ACCEPT_HEADER_INVALID` without `Accept: application/vnd.hmrc.1.0+json`
 *   (hmrc/individual-losses-api, features/accept_header_validation.feature); 429
 *   `MESSAGE_THROTTLED_OUT` and 404 `MATCHING_RESOURCE_NOT_FOUND` (hmrc/api-platform-manage-api,
 *   src/main/scala/uk/gov/hmrc/api_platform_manage_api/SwaggerService.scala); 415 for a body that
 *   is not JSON (Play's JSON body parser through JsonErrorHandler).
 *
 * Controls (`{"hmrcEori": {...}}`): the shared ones on the key `GB` (`latencyMs`, `hang`,
 * `serviceDown` (an HTML 503 page), `rateLimit` and the concurrency limits (429), `down: ["GB"]`
 * (503 `SCHEDULED_MAINTENANCE`), `errorRate` with a code of `MESSAGE_THROTTLED_OUT`,
 * `SCHEDULED_MAINTENANCE`, `SERVER_ERROR`, `INTERNAL_SERVER_ERROR` or `GATEWAY_TIMEOUT`), and
 * `plainTextErrors` (boolean).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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

const KEY = 'GB';
const ACCEPT = 'application/vnd.hmrc.1.0+json';
const UK_EORI = /^(GB|XI)[0-9]{12,15}$/;
const XI_EORI = /^XI[0-9]{12,15}$/;

export const HMRC_EORI_MESSAGES = Object.freeze({
  none: 'Invalid payload - one or more EORI numbers are required in your body',
  tooMany: 'Invalid payload - you have exceeded the maximum of 10 EORI numbers',
  pattern:
    'Invalid payload - one or more EORI numbers are not valid, ensure all of your EORI numbers match ^(GB|XI)[0-9]{12,15}$',
  xi: 'Invalid payload - one or more EORI numbers begin with XI. To check an EORI number that starts with XI, use the EORI checker service on the European Commission website',
});

const ERROR_STATUS: Record<string, [number, string]> = {
  MESSAGE_THROTTLED_OUT: [429, 'The request for the API is throttled as you have exceeded your quota.'],
  SCHEDULED_MAINTENANCE: [503, 'The API is undergoing maintenance. Please try again later'],
  SERVER_ERROR: [503, 'Service unavailable'],
  INTERNAL_SERVER_ERROR: [500, 'Unknown error'],
  GATEWAY_TIMEOUT: [504, 'Gateway timeout'],
};

/** The stub's error numbers: the status its backend answers, and what the API makes of it. */
const STUB_ERRORS: Readonly<Record<string, { upstream: number; status: number }>> = {
  GB123456789007: { upstream: 400, status: 500 },
  GB123456789008: { upstream: 403, status: 500 },
  GB123456789009: { upstream: 500, status: 502 },
};

/** The Developer Hub's own example. */
const DOCUMENTED: Readonly<Record<string, HmrcEoriCompany>> = {
  GB123456789133: {
    traderName: 'Aviationstr',
    address: { streetAndNumber: '141B Halsey Place', cityName: 'Huddersfield', postcode: 'HD98 2LI' },
  },
};

export interface HmrcEoriCompany {
  traderName: string;
  address: { streetAndNumber: string; cityName: string; postcode: string };
}

/** What the simulator answers for one well-formed GB number, ignoring controls and the stub's error numbers. */
export function expectedHmrcEoriAnswer(eori: string): {
  valid: boolean;
  companyDetails: HmrcEoriCompany | null;
} {
  const last = Number(eori.slice(-1));
  if (last >= 8) return { valid: false, companyDetails: null };
  if (last < 2 || last > 5) return { valid: true, companyDetails: null };
  const documented = DOCUMENTED[eori];
  if (documented) return { valid: true, companyDetails: documented };
  const company = simulatedCompany('GB', eori.slice(2));
  const district = `${company.town.slice(0, 2)}${(company.hash % 98) + 1}`;
  const postcode =
    last === 5 ? '' : `${district} ${(company.hash >>> 4) % 10}${'ABDEFGHJLNPQRSTUWXYZ'[company.hash % 20]}X`;
  return {
    valid: true,
    companyDetails: {
      traderName: company.name,
      address: { streetAndNumber: company.street, cityName: company.town, postcode },
    },
  };
}

const london = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'longOffset',
});

/** `yyyy-MM-dd'T'HH:mm:ssxxx` on London time, as the API writes `processingDate`. */
export function hmrcProcessingDate(date: Date): string {
  const parts = Object.fromEntries(london.formatToParts(date).map((part) => [part.type, part.value]));
  const offset = (parts.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

export type HmrcEoriSimulatorOptions = RegistrySimulatorOptions;

export function createHmrcEoriSimulator(options: HmrcEoriSimulatorOptions = {}): ControlledSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });
  let plainTextErrors = false;
  let received: string[] = [];
  let largestRequest = 0;

  function platformError(res: ServerResponse, status: number, code: string, message: string) {
    sendJson(res, status, { code, message });
  }

  function invalidRequest(res: ServerResponse, message: string) {
    controls.recordError(KEY, 'INVALID_REQUEST');
    if (plainTextErrors) return send(res, 400, 'text/plain; charset=utf-8', message);
    sendJson(res, 400, { code: 'INVALID_REQUEST', message });
  }

  /** Play's JSON body parser and `withJsonBody`: the body as a list of strings, or the error already sent. */
  function readBody(req: IncomingMessage, res: ServerResponse, body: Buffer): string[] | undefined {
    const contentType = String(req.headers['content-type'] ?? '');
    if (!/^\s*(application|text)\/json\b/i.test(contentType)) {
      sendJson(res, 415, { statusCode: 415, message: 'Expecting text/json or application/json body' });
      return undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      sendJson(res, 400, {
        statusCode: 400,
        message:
          "Invalid Json: Unrecognized token 'REDACTED': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')",
      });
      return undefined;
    }
    const eoris = typeof json === 'object' && json !== null ? (json as { eoris?: unknown }).eoris : undefined;
    if (!Array.isArray(eoris) || !eoris.every((eori) => typeof eori === 'string')) {
      send(
        res,
        400,
        'text/plain; charset=utf-8',
        'Invalid CheckMultipleEoriNumbersRequest payload: List((/eoris,List(JsonValidationError(List(error.path.missing),List()))))',
      );
      return undefined;
    }
    return eoris as string[];
  }

  function refuse(res: ServerResponse, code: string) {
    controls.recordError(KEY, code);
    const [status, message] = ERROR_STATUS[code] ?? [503, code];
    platformError(res, status, code, message);
  }

  async function check(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    if (!String(req.headers.accept ?? '').includes(ACCEPT)) {
      return platformError(res, 406, 'ACCEPT_HEADER_INVALID', 'The accept header is missing or invalid');
    }
    const admission = controls.admit(KEY);
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError(KEY, 'HTTP_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') return refuse(res, 'MESSAGE_THROTTLED_OUT');
    try {
      await controls.delay(KEY);
      answer(req, res, body);
    } finally {
      admission.release();
    }
  }

  function answer(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    // The platform's own answers come before the service reads the body.
    if (controls.isDown(KEY)) return refuse(res, 'SCHEDULED_MAINTENANCE');
    const injected = controls.injectedError(KEY);
    if (injected) return refuse(res, injected);
    const eoris = readBody(req, res, body);
    if (eoris === undefined) return;
    received = [...received, ...eoris].slice(-1000);
    largestRequest = Math.max(largestRequest, eoris.length);
    if (eoris.length === 0) return invalidRequest(res, HMRC_EORI_MESSAGES.none);
    if (eoris.length > 10) return invalidRequest(res, HMRC_EORI_MESSAGES.tooMany);
    if (!eoris.every((eori) => UK_EORI.test(eori))) return invalidRequest(res, HMRC_EORI_MESSAGES.pattern);
    if (eoris.some((eori) => XI_EORI.test(eori))) return invalidRequest(res, HMRC_EORI_MESSAGES.xi);
    const stubError = eoris.length === 1 ? STUB_ERRORS[eoris[0] as string] : undefined;
    if (stubError) {
      controls.recordError(KEY, `HTTP_${stubError.status}`);
      return sendJson(res, stubError.status, {
        statusCode: stubError.status,
        message: `POST of 'http://check-eori-number.protected.mdtp/check-eori-number/check-multiple-eori' returned ${stubError.upstream}. Response body: ''`,
      });
    }
    const processingDate = hmrcProcessingDate(now());
    sendJson(
      res,
      200,
      eoris.map((eori) => {
        const expected = expectedHmrcEoriAnswer(eori);
        return expected.companyDetails
          ? { eori, valid: expected.valid, companyDetails: expected.companyDetails, processingDate }
          : { eori, valid: expected.valid, processingDate };
      }),
    );
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    if (req.method === 'POST' && route === '/lookup/check-multiple-eori') return check(req, res, body);
    if (controls.settings.hang === true) return hangForever(req, res);
    platformError(
      res,
      404,
      'MATCHING_RESOURCE_NOT_FOUND',
      'A resource with the name in the request can not be found in the API',
    );
  }

  return {
    prefix: '/hmrc/customs/eori',
    handle,
    control(command) {
      if (typeof command.plainTextErrors === 'boolean') plainTextErrors = command.plainTextErrors;
      if (command.reset === true) plainTextErrors = false;
      if (command.reset === true || command.resetStats === true) {
        received = [];
        largestRequest = 0;
      }
      return { ...controls.apply(command), plainTextErrors };
    },
    stats: () => ({ ...controls.stats(), eorisReceived: [...received], largestRequest }),
    controls,
  };
}
