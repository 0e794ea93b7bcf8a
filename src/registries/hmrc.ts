/**
 * HMRC "Check a UK VAT number" API v2.0 client: OAuth 2 client-credentials token (scope
 * `read:vat`, cached until shortly before `expires_in`, one token request shared by concurrent
 * look-ups), then `GET /organisations/vat/check-vat-number/lookup/{targetVrn}[/{requesterVrn}]`.
 * `valid: true` needs the documented 200 body (`target` with this `vatNumber`); `valid: false` only
 * HMRC's 404 body with code `NOT_FOUND`. Any other body, whatever its status, is unavailability.
 */
import {
  cleanText,
  excerpt,
  type FetchFn,
  type HttpResponse,
  isRecord,
  joinUrl,
  parseDate,
  parseJson,
  retryAfterSeconds,
  transportFailure,
  transportFor,
  unavailable,
} from './http.js';
import type { RegistryClient, RegistryLookup, RegistryResult, RegistryUnavailable } from './port.js';

export interface HmrcClientOptions {
  /** API base, e.g. `https://api.service.hmrc.gov.uk` (sandbox `https://test-api.service.hmrc.gov.uk`). */
  baseUrl: string;
  clientId?: string;
  clientSecret?: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
  /** Refresh the token this long before it expires (default 60 s, at most half its lifetime). */
  tokenRefreshMarginSeconds?: number;
}

export const HMRC_ACCEPT = 'application/vnd.hmrc.2.0+json';
export const HMRC_COUNTRIES: readonly string[] = Object.freeze(['GB']);

interface CachedToken {
  value: string;
  /** Epoch ms after which a new token is fetched. */
  refreshAt: number;
}

type TokenOutcome = { ok: true; token: string } | { ok: false; result: RegistryUnavailable };

export function createHmrcClient(options: HmrcClientOptions): RegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());
  const margin = options.tokenRefreshMarginSeconds ?? 60;
  const clientId = options.clientId?.trim() ?? '';
  const clientSecret = options.clientSecret?.trim() ?? '';
  const configured = clientId !== '' && clientSecret !== '';
  let cached: CachedToken | undefined;
  let inFlight: Promise<TokenOutcome> | undefined;

  async function fetchToken(): Promise<TokenOutcome> {
    const outcome = await send({
      url: joinUrl(options.baseUrl, '/oauth/token'),
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        client_id: clientId,
        client_secret: clientSecret,
        grant_type: 'client_credentials',
        scope: 'read:vat',
      }).toString(),
      timeoutMs: options.timeoutMs,
    });
    if (!outcome.ok) return { ok: false, result: transportFailure('hmrc', 'HMRC token request', outcome) };
    const json = parseJson(outcome.body);
    const status = outcome.status;
    if (
      status === 200 &&
      isRecord(json) &&
      typeof json.access_token === 'string' &&
      json.access_token !== ''
    ) {
      const issuedAt = now().getTime();
      const lifetime = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 3600;
      const refreshAt = issuedAt + Math.max(0, lifetime - Math.min(margin, lifetime / 2)) * 1000;
      cached = { value: json.access_token, refreshAt };
      return { ok: true, token: json.access_token };
    }
    const code = isRecord(json) ? (stringField(json, 'error') ?? stringField(json, 'code')) : undefined;
    const extra = code ? { upstreamCode: code } : {};
    if (status === 400 || status === 401 || status === 403) {
      return {
        ok: false,
        result: unavailable(
          'hmrc',
          'rejected',
          `HMRC refused the OAuth client credentials (HTTP ${status}${code ? ` ${code}` : ''}); check HMRC_CLIENT_ID and HMRC_CLIENT_SECRET`,
          extra,
        ),
      };
    }
    return { ok: false, result: classifyStatus(outcome, 'HMRC token request', now()) };
  }

  async function getToken(signal: AbortSignal | undefined, forceRefresh: boolean): Promise<TokenOutcome> {
    if (!forceRefresh && cached && now().getTime() < cached.refreshAt)
      return { ok: true, token: cached.value };
    if (forceRefresh) cached = undefined;
    if (!inFlight) {
      inFlight = fetchToken().finally(() => {
        inFlight = undefined;
      });
    }
    return raceSignal(inFlight, signal);
  }

  async function callLookup(path: string, token: string, request: RegistryLookup) {
    return send({
      url: joinUrl(options.baseUrl, path),
      method: 'GET',
      headers: { accept: HMRC_ACCEPT, authorization: `Bearer ${token}` },
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
  }

  async function lookup(request: RegistryLookup): Promise<RegistryResult> {
    if (!configured) {
      return unavailable(
        'hmrc',
        'not_configured',
        'UK VAT look-ups need HMRC API credentials: set HMRC_CLIENT_ID and HMRC_CLIENT_SECRET (an application subscribed to "Check a UK VAT number" v2)',
      );
    }
    const target = vrn(request.vat.national);
    if (!/^\d{9}$/.test(target)) {
      return unavailable('hmrc', 'rejected', 'a UK VAT registration number has 9 digits (12 for a branch)');
    }
    const requester =
      request.requester && ['GB', 'XI'].includes(request.requester.country.toUpperCase())
        ? vrn(request.requester.national, true)
        : undefined;
    const path =
      `/organisations/vat/check-vat-number/lookup/${target}` +
      (requester !== undefined ? `/${requester}` : '');

    let token = await getToken(request.signal, false);
    if (!token.ok) return token.result;
    let outcome = await callLookup(path, token.token, request);
    if (outcome.ok && (outcome.status === 401 || outcome.status === 403) && !isRequesterRefusal(outcome)) {
      // The token may have been revoked or expired early: fetch a new one once.
      token = await getToken(request.signal, true);
      if (!token.ok) return token.result;
      outcome = await callLookup(path, token.token, request);
    }
    if (!outcome.ok) return transportFailure('hmrc', 'HMRC', outcome);
    return interpret(outcome, target, requester !== undefined);
  }

  function interpret(outcome: HttpResponse, target: string, withRequester: boolean): RegistryResult {
    const json = parseJson(outcome.body);
    const status = outcome.status;
    const code = isRecord(json) ? stringField(json, 'code') : undefined;
    const upstreamMessage = isRecord(json) ? stringField(json, 'message') : undefined;
    if (status === 200) {
      if (!isRecord(json) || !isRecord(json.target)) {
        return unavailable(
          'hmrc',
          'bad_response',
          `HMRC answered 200 without a target: ${excerpt(outcome.body)}`,
        );
      }
      const answered = json.target.vatNumber;
      if (typeof answered !== 'string') {
        return unavailable(
          'hmrc',
          'bad_response',
          `HMRC answered 200 without the target's vatNumber: ${excerpt(outcome.body)}`,
        );
      }
      if (answered.replace(/\D/g, '').slice(0, 9) !== target) {
        return unavailable('hmrc', 'bad_response', `HMRC answered for ${answered} instead of ${target}`);
      }
      return {
        kind: 'answer',
        source: 'hmrc',
        valid: true,
        name: cleanText(json.target.name),
        address: formatAddress(json.target.address),
        consultationNumber: withRequester ? cleanText(json.consultationNumber) : null,
        checkedAt: parseDate(json.processingDate, now()),
      };
    }
    if (status === 404 && code === 'NOT_FOUND') {
      return {
        kind: 'answer',
        source: 'hmrc',
        valid: false,
        name: null,
        address: null,
        consultationNumber: null,
        checkedAt: now(),
      };
    }
    const extra = code ? { upstreamCode: code } : {};
    const detail = upstreamMessage ? `: ${upstreamMessage}` : '';
    if (status === 400) {
      return unavailable('hmrc', 'rejected', `HMRC rejected the request${detail}`, extra);
    }
    if (status === 401 || status === 403) {
      return unavailable(
        'hmrc',
        'rejected',
        isRequesterRefusal(outcome)
          ? `HMRC does not accept the requester VAT number${detail}`
          : `HMRC refused access (HTTP ${status}${detail}); check HMRC_CLIENT_ID, HMRC_CLIENT_SECRET and the API subscription`,
        extra,
      );
    }
    return classifyStatus(outcome, 'HMRC', now());
  }

  return { source: 'hmrc', countries: HMRC_COUNTRIES, lookup };
}

/** 429, 5xx and anything else unexpected. */
function classifyStatus(outcome: HttpResponse, label: string, now: Date): RegistryUnavailable {
  const json = parseJson(outcome.body);
  const code = isRecord(json) ? stringField(json, 'code') : undefined;
  const extra: { upstreamCode?: string; retryAfterSeconds?: number } = code ? { upstreamCode: code } : {};
  const retryAfter = retryAfterSeconds(outcome.headers, now);
  if (retryAfter !== undefined) extra.retryAfterSeconds = retryAfter;
  const status = outcome.status;
  if (status === 429)
    return unavailable('hmrc', 'throttled', `${label} throttled the request (HTTP 429)`, extra);
  if (status === 504) return unavailable('hmrc', 'timeout', `${label} gateway timed out (HTTP 504)`, extra);
  if (status >= 500) {
    return unavailable(
      'hmrc',
      'down',
      `${label} is unavailable (HTTP ${status}${code ? ` ${code}` : ''})`,
      extra,
    );
  }
  return unavailable(
    'hmrc',
    'bad_response',
    `${label} answered HTTP ${status}: ${excerpt(outcome.body)}`,
    extra,
  );
}

/** 403 `INVALID_REQUEST` "requesterVrn does not match a registered company": a new token will not help. */
function isRequesterRefusal(outcome: HttpResponse): boolean {
  if (outcome.status !== 403) return false;
  const json = parseJson(outcome.body);
  return isRecord(json) && json.code === 'INVALID_REQUEST';
}

function vrn(national: string, keepBranch = false): string {
  const digits = national.replace(/^(GB|XI)/i, '').replace(/\D/g, '');
  // Branch numbers (12 digits: VRN + 3-digit branch) are registered under their first 9 digits.
  return !keepBranch && digits.length === 12 ? digits.slice(0, 9) : digits;
}

function formatAddress(address: unknown): string | null {
  if (!isRecord(address)) return null;
  const lines = ['line1', 'line2', 'line3', 'line4', 'line5', 'postcode']
    .map((key) => cleanText(address[key]))
    .filter((line): line is string => line !== null);
  return lines.length > 0 ? lines.join('\n') : null;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | TokenOutcome> {
  if (!signal) return promise;
  const cancelled: TokenOutcome = {
    ok: false,
    result: unavailable('hmrc', 'timeout', 'the call was cancelled while waiting for an HMRC token'),
  };
  if (signal.aborted) return Promise.resolve(cancelled);
  return new Promise((resolve) => {
    const onAbort = () => resolve(cancelled);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(cancelled);
      },
    );
  });
}
