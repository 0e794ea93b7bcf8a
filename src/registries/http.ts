/**
 * Outbound HTTP for the registry clients: one request with a timeout (combined with the caller's
 * signal), the body read as text under a size cap, and every failure classified as a value.
 */
import { Agent as HttpAgent, request as httpCall, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsCall } from 'node:https';
import type { RegistrySource, RegistryUnavailable, UnavailableReason } from './port.js';

export type FetchFn = typeof fetch;

/** The port: performs one request; never throws for network trouble, timeouts or oversized bodies. */
export type Transport = (request: HttpRequest) => Promise<HttpOutcome>;

export const DEFAULT_USER_AGENT = 'openvat (+https://github.com/openvat/openvat)';

/** Bodies larger than this are not registry answers (the largest real answer is a few kB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface HttpRequest {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** The caller's deadline; combined with `timeoutMs`. */
  signal?: AbortSignal;
  maxBodyBytes?: number;
}

/** Response headers by name, case-insensitively (a fetch `Headers` is one). */
export interface HeaderLookup {
  get(name: string): string | null;
}

export interface HttpResponse {
  ok: true;
  status: number;
  headers: HeaderLookup;
  /** The body as UTF-8 text (possibly empty). */
  body: string;
}

export interface HttpFailure {
  ok: false;
  /** `timeout`: our timeout or the caller's deadline; `network`: refused, reset, DNS; `too_large`: body over the cap. */
  kind: 'timeout' | 'network' | 'too_large';
  message: string;
}

export type HttpOutcome = HttpResponse | HttpFailure;

/** The request's deadline: its own timeout combined with the caller's signal. */
function deadline(request: HttpRequest) {
  const timeoutSignal = AbortSignal.timeout(Math.max(1, request.timeoutMs));
  const signal = request.signal ? AbortSignal.any([timeoutSignal, request.signal]) : timeoutSignal;
  const describeAbort = (): HttpFailure => ({
    ok: false,
    kind: 'timeout',
    message: timeoutSignal.aborted
      ? `no answer within ${request.timeoutMs} ms`
      : 'the call was cancelled before the registry answered',
  });
  return { signal, describeAbort };
}

function tooLarge(maxBytes: number): HttpFailure {
  return { ok: false, kind: 'too_large', message: `the answer is larger than ${maxBytes} bytes` };
}

/**
 * The default transport: Node's own HTTP client over keep-alive connections. Measured against a
 * local registry simulator, a call costs about a third of the CPU time of the same call through
 * `fetch`, whose web streams dominate for answers this small; a batch job makes thousands of them.
 */
export function nodeTransport(): Transport {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, scheduling: 'lifo' }),
    'https:': new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }),
  };
  return (request) => {
    const { signal, describeAbort } = deadline(request);
    const maxBytes = request.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    return new Promise<HttpOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: HttpOutcome) => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      const fail = (error: unknown, reading: boolean) =>
        settle(
          signal.aborted
            ? describeAbort()
            : {
                ok: false,
                kind: 'network',
                message: reading
                  ? `connection failed while reading the answer: ${describeNetworkError(error)}`
                  : `network error: ${describeNetworkError(error)}`,
              },
        );
      let url: URL;
      try {
        url = new URL(request.url);
      } catch (error) {
        fail(error, false);
        return;
      }
      const agent =
        url.protocol === 'https:' ? agents['https:'] : url.protocol === 'http:' ? agents['http:'] : null;
      if (!agent) {
        fail(new Error(`unsupported protocol ${url.protocol}`), false);
        return;
      }
      const headers: Record<string, string | number> = {
        'user-agent': DEFAULT_USER_AGENT,
        ...request.headers,
      };
      if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
      const call = url.protocol === 'https:' ? httpsCall : httpCall;
      const req = call(url, { method: request.method, headers, agent, signal }, (res: IncomingMessage) => {
        const length = Number(res.headers['content-length']);
        if (Number.isFinite(length) && length > maxBytes) {
          settle(tooLarge(maxBytes));
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.byteLength;
          if (total > maxBytes) {
            settle(tooLarge(maxBytes));
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          settle({
            ok: true,
            status: res.statusCode ?? 0,
            headers: nodeHeaders(res),
            body: Buffer.concat(chunks, total).toString('utf8'),
          }),
        );
        res.on('error', (error) => fail(error, true));
        res.on('aborted', () =>
          fail(new Error('the connection closed before the answer was complete'), true),
        );
      });
      req.on('error', (error) => fail(error, false));
      req.end(request.body);
    });
  };
}

function nodeHeaders(res: IncomingMessage): HeaderLookup {
  return {
    get(name) {
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

const defaultTransport: Transport = nodeTransport();

/** A transport over a `fetch` function, for callers that bring their own (a proxy-aware fetch, a fake). */
export function fetchTransport(fetchFn: FetchFn): Transport {
  return (request) => fetchRequest(fetchFn, request);
}

/** The transport of a registry client: over the `fetch` it was given, else Node's HTTP client. */
export function transportFor(fetchFn: FetchFn | undefined): Transport {
  return fetchFn ? fetchTransport(fetchFn) : defaultTransport;
}

/** Performs one request through `fetchFn`; never throws for network trouble, timeouts or oversized bodies. */
async function fetchRequest(fetchFn: FetchFn, request: HttpRequest): Promise<HttpOutcome> {
  const { signal, describeAbort } = deadline(request);
  const maxBytes = request.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let response: Response;
  try {
    response = await fetchFn(request.url, {
      method: request.method,
      headers: { 'user-agent': DEFAULT_USER_AGENT, ...request.headers },
      ...(request.body === undefined ? {} : { body: request.body }),
      signal,
    });
  } catch (error) {
    if (signal.aborted) return describeAbort();
    return { ok: false, kind: 'network', message: `network error: ${describeNetworkError(error)}` };
  }
  try {
    const body = await readBody(response, maxBytes);
    if (body === null) return tooLarge(maxBytes);
    return { ok: true, status: response.status, headers: response.headers, body };
  } catch (error) {
    if (signal.aborted) return describeAbort();
    return {
      ok: false,
      kind: 'network',
      message: `connection failed while reading the answer: ${describeNetworkError(error)}`,
    };
  }
}

async function readBody(response: Response, maxBytes: number): Promise<string | null> {
  const length = Number(response.headers.get('content-length'));
  if (Number.isFinite(length) && length > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** A short description of a network failure, using the system error code when there is one. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const own = (error as Error & { code?: unknown }).code;
    if (typeof own === 'string' && /^E[A-Z]+$/.test(own)) return own;
    const cause = (error as Error & { cause?: unknown }).cause;
    if (cause && typeof cause === 'object') {
      const code = (cause as { code?: unknown }).code;
      const message = (cause as { message?: unknown }).message;
      if (typeof code === 'string') return code;
      if (typeof message === 'string' && message) return message;
    }
    return error.message || error.name;
  }
  return String(error);
}

/** Whether retrying the same call later may succeed, per reason. */
export function isRetryable(reason: UnavailableReason): boolean {
  return reason === 'throttled' || reason === 'down' || reason === 'timeout' || reason === 'bad_response';
}

export function unavailable(
  source: RegistrySource,
  reason: UnavailableReason,
  message: string,
  extra: { upstreamCode?: string; retryAfterSeconds?: number; retryable?: boolean } = {},
): RegistryUnavailable {
  const result: RegistryUnavailable = {
    kind: 'unavailable',
    source,
    reason,
    retryable: extra.retryable ?? isRetryable(reason),
    message,
  };
  if (extra.upstreamCode !== undefined) result.upstreamCode = extra.upstreamCode;
  if (extra.retryAfterSeconds !== undefined) result.retryAfterSeconds = extra.retryAfterSeconds;
  return result;
}

/** Maps a transport failure to the port's reasons. */
export function transportFailure(
  source: RegistrySource,
  label: string,
  failure: HttpFailure,
): RegistryUnavailable {
  if (failure.kind === 'timeout') return unavailable(source, 'timeout', `${label}: ${failure.message}`);
  if (failure.kind === 'too_large')
    return unavailable(source, 'bad_response', `${label}: ${failure.message}`);
  return unavailable(source, 'down', `${label}: ${failure.message}`);
}

/** `Retry-After` in seconds (delta or HTTP date), when present and sensible. */
export function retryAfterSeconds(headers: HeaderLookup, now: Date): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** Parses JSON without throwing; `undefined` when the text is not JSON. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short, single-line excerpt of an unexpected body for messages. */
export function excerpt(body: string, max = 80): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty body)';
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export function looksLikeHtml(body: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body);
}

/** Registry text fields: trimmed; empty strings and `---` placeholders become null. */
export function cleanText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (trimmed === '' || /^-+$/.test(trimmed)) return null;
  return trimmed;
}

/** Parses an upstream timestamp; falls back to `fallback` when missing or unparseable. */
export function parseDate(value: unknown, fallback: Date): Date {
  if (typeof value !== 'string' || value.trim() === '') return fallback;
  const time = Date.parse(value);
  return Number.isNaN(time) ? fallback : new Date(time);
}

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
