/**
 * HMRC simulator: the OAuth 2 token endpoint (`POST /oauth/token`, client credentials, scope
 * `read:vat`, 4-hour tokens) and "Check a UK VAT number" v2.0
 * (`GET /organisations/vat/check-vat-number/lookup/{targetVrn}[/{requesterVrn}]`, `Accept:
 * application/vnd.hmrc.2.0+json`), with HMRC's error bodies `{code, message}`:
 * 400 INVALID_REQUEST (VRN not 9/12 digits), 403 INVALID_REQUEST (requester not registered),
 * 404 NOT_FOUND, 401 MISSING_CREDENTIALS / INVALID_CREDENTIALS, 406 ACCEPT_HEADER_INVALID,
 * 429 MESSAGE_THROTTLED_OUT (concurrency limit, rate window or injected), 503 SCHEDULED_MAINTENANCE
 * (country `GB` down). Registration follows the shared rule on `GB:<first 9 digits>`, plus the
 * sandbox VRNs `553557881` and `146295999727` (always registered).
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

export interface HmrcSimulatorOptions extends RegistrySimulatorOptions {
  /** When set, only these credentials get a token; otherwise any non-empty pair does. */
  clientId?: string;
  clientSecret?: string;
  /** Token lifetime in seconds (default 14400, the 4 hours HMRC issues). */
  tokenTtlSeconds?: number;
}

export type HmrcSimulator = ControlledSimulator;

const SANDBOX: Record<string, { name: string; address: Record<string, string> }> = {
  '553557881': {
    name: 'Credite Sberger Donal Inc.',
    address: { line1: '131B Barton Hamlet', postcode: 'SW97 5CK', countryCode: 'GB' },
  },
  '146295999': {
    name: 'Sandbox Requester Ltd',
    address: { line1: '1 Sandbox Street', line2: 'Testtown', postcode: 'TE5 7AA', countryCode: 'GB' },
  },
};

const ERROR_STATUS: Record<string, [number, string]> = {
  MESSAGE_THROTTLED_OUT: [429, 'The request for the API is throttled as you have exceeded your quota.'],
  SCHEDULED_MAINTENANCE: [503, 'The API is undergoing maintenance. Please try again later'],
  SERVER_ERROR: [503, 'Service unavailable'],
  INTERNAL_SERVER_ERROR: [500, 'Unknown error'],
  GATEWAY_TIMEOUT: [504, 'Gateway timeout'],
  INVALID_CREDENTIALS: [401, 'Invalid Authentication information provided'],
};

/** Whether the simulator says a UK VRN (9 or 12 digits) is registered. */
export function hmrcRegistered(vrn: string): boolean {
  const base = vrn.slice(0, 9);
  return SANDBOX[base] !== undefined || simulatedCompany('GB', base).registered;
}

export function createHmrcSimulator(options: HmrcSimulatorOptions = {}): HmrcSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });
  let tokenTtl = options.tokenTtlSeconds ?? 14_400;
  const tokens = new Map<string, number>();
  let tokenCount = 0;
  let issued = 0;
  let consultations = 0;

  function tokenEndpoint(res: ServerResponse, body: Buffer) {
    tokenCount++;
    const form = new URLSearchParams(body.toString('utf8'));
    const id = form.get('client_id') ?? '';
    const secret = form.get('client_secret') ?? '';
    if (form.get('grant_type') !== 'client_credentials') {
      return sendJson(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'grant_type must be client_credentials',
      });
    }
    const badCredentials =
      id === '' ||
      secret === '' ||
      (options.clientId !== undefined && id !== options.clientId) ||
      (options.clientSecret !== undefined && secret !== options.clientSecret);
    if (badCredentials) {
      return sendJson(res, 401, {
        error: 'invalid_client',
        error_description: 'invalid client id or secret',
      });
    }
    const scope = form.get('scope') ?? '';
    if (!scope.split(/\s+/).includes('read:vat')) {
      return sendJson(res, 400, { error: 'invalid_scope', error_description: 'scope read:vat is required' });
    }
    const token = `sim${tokenCount.toString(16).padStart(8, '0')}${(now().getTime() % 1e9).toString(16)}`;
    tokens.set(token, now().getTime() + tokenTtl * 1000);
    issued++;
    sendJson(res, 200, {
      access_token: token,
      scope: 'read:vat',
      expires_in: tokenTtl,
      token_type: 'bearer',
    });
  }

  function error(res: ServerResponse, status: number, code: string, message: string, headers = {}) {
    sendJson(res, status, { code, message }, headers);
  }

  async function lookupEndpoint(
    req: IncomingMessage,
    res: ServerResponse,
    target: string,
    requester?: string,
  ) {
    const accept = String(req.headers.accept ?? '');
    if (!accept.includes('application/vnd.hmrc.2.0+json')) {
      return error(res, 406, 'ACCEPT_HEADER_INVALID', 'The accept header is missing or invalid');
    }
    const auth = String(req.headers.authorization ?? '');
    if (!auth.startsWith('Bearer ')) {
      return error(res, 401, 'MISSING_CREDENTIALS', 'Authentication information is not provided');
    }
    const expiry = tokens.get(auth.slice('Bearer '.length).trim());
    if (expiry === undefined || expiry <= now().getTime()) {
      return error(res, 401, 'INVALID_CREDENTIALS', 'Invalid Authentication information provided');
    }
    const admission = controls.admit('GB');
    if (admission.kind === 'hang') return hangForever(req, res);
    const refuse = (code: string) => {
      controls.recordError('GB', code);
      const [status, message] = ERROR_STATUS[code] ?? [503, code];
      error(res, status, code, message);
    };
    if (admission.kind === 'service_down') {
      controls.recordError('GB', 'HTTP_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') return refuse('MESSAGE_THROTTLED_OUT');
    try {
      await controls.delay('GB');
      const vrnPattern = /^(\d{9}|\d{12})$/;
      const targetOk = vrnPattern.test(target);
      const requesterOk = requester === undefined || vrnPattern.test(requester);
      if (!targetOk || !requesterOk) {
        controls.recordError('GB', 'INVALID_REQUEST');
        const which =
          !targetOk && !requesterOk ? 'targetVrn and requesterVrn' : !targetOk ? 'targetVrn' : 'requesterVrn';
        return error(
          res,
          400,
          'INVALID_REQUEST',
          `Invalid ${which} - Vrn parameters should be 9 or 12 digits`,
        );
      }
      if (controls.isDown('GB')) return refuse('SCHEDULED_MAINTENANCE');
      const injected = controls.injectedError('GB');
      if (injected) return refuse(injected);
      if (requester !== undefined && !hmrcRegistered(requester)) {
        controls.recordError('GB', 'INVALID_REQUEST');
        return error(res, 403, 'INVALID_REQUEST', 'requesterVrn does not match a registered company');
      }
      if (!hmrcRegistered(target)) {
        return error(res, 404, 'NOT_FOUND', 'targetVrn does not match a registered company');
      }
      const base = target.slice(0, 9);
      const sandbox = SANDBOX[base];
      const company = simulatedCompany('GB', base);
      const body: Record<string, unknown> = {
        target: {
          name: sandbox?.name ?? company.name,
          vatNumber: target,
          address: sandbox?.address ?? {
            line1: company.street,
            line2: company.town,
            postcode: `${company.town.slice(0, 2)}${company.postcode.slice(0, 2)} ${company.postcode.slice(2)}XX`,
            countryCode: 'GB',
          },
        },
        processingDate: now()
          .toISOString()
          .replace(/\.\d{3}Z$/, '+00:00'),
      };
      if (requester !== undefined) {
        consultations++;
        body.requester = requester;
        body.consultationNumber = `sim${consultations.toString(36).padStart(6, '0')}`;
      }
      sendJson(res, 200, body);
    } finally {
      admission.release();
    }
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (method === 'POST' && route === '/oauth/token') return tokenEndpoint(res, body);
    const match = /^\/organisations\/vat\/check-vat-number\/lookup\/([^/]+)(?:\/([^/]+))?$/.exec(route);
    if (method === 'GET' && match) {
      return lookupEndpoint(
        req,
        res,
        decodeURIComponent(match[1] ?? ''),
        match[2] && decodeURIComponent(match[2]),
      );
    }
    error(
      res,
      404,
      'MATCHING_RESOURCE_NOT_FOUND',
      'A resource with the name in the request can not be found in the API',
    );
  }

  return {
    prefix: '/hmrc',
    handle,
    control(command) {
      if (typeof command.tokenTtlSeconds === 'number') tokenTtl = command.tokenTtlSeconds;
      if (command.revokeTokens === true) tokens.clear();
      if (command.reset === true || command.resetStats === true) {
        tokenCount = 0;
        issued = 0;
        consultations = 0;
      }
      if (command.reset === true) tokenTtl = options.tokenTtlSeconds ?? 14_400;
      return { ...controls.apply(command), tokenTtlSeconds: tokenTtl };
    },
    stats: () => ({ ...controls.stats(), tokenRequests: tokenCount, tokensIssued: issued, consultations }),
    controls,
  };
}
