/**
 * The service's one outbound HTTP client: registry calls and webhook deliveries both go through it.
 * Node's own HTTP stack over keep-alive connections (the most recently used socket first); every
 * request has a deadline over the whole exchange (its own timeout, combined with the caller's
 * signal), the answer is read under a size cap, redirects are never followed (a 3xx is just a
 * status), and an optional `lookup` resolves host names at connect time, so the address a socket
 * connects to is the address that lookup vetted. Nothing throws for network trouble: failures are
 * values.
 *
 * Kept on node:http after `npm run bench -- transport` (bench/results/transport.json,
 * docs/development.md): undici's `request` served more calls per second on the development host
 * (2,681 against 2,194 one at a time, 3,388 against 2,386 with 50 in flight, 2026-11-23), but
 * undici 7.30 opened a new connection for each of 10 back-to-back calls made after an answer it
 * had to drop (over the cap); this client opened one. Registry calls wait far longer on the
 * registry than on either client, and a registry expects its kept-alive connection.
 */
import { Agent as HttpAgent, request as httpCall, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsCall } from 'node:https';
import type { LookupFunction } from 'node:net';

/** Response headers by name, case-insensitively (a fetch `Headers` is one). */
export interface HeaderLookup {
  get(name: string): string | null;
}

export interface OutboundRequest {
  url: string | URL;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Deadline of the whole exchange, connect to last byte of the answer. */
  timeoutMs: number;
  /** The caller's deadline or stop signal; combined with `timeoutMs`. */
  signal?: AbortSignal;
  /**
   * Resolves (and may refuse) the host name when a connection is opened; IP literals are connected
   * to directly. A kept-alive connection was vetted when it was opened.
   */
  lookup?: LookupFunction;
  /** Answers larger than this are not read. */
  maxBodyBytes: number;
  /**
   * `text` (default): the answer is the body, and a body over the cap is a `too_large` failure.
   * `discard`: only the status matters; the body is read up to the cap and dropped, and a body over
   * the cap (or cut short) still counts as an answer with its status.
   */
  read?: 'text' | 'discard';
}

export interface OutboundResponse {
  ok: true;
  status: number;
  headers: HeaderLookup;
  /** The body as UTF-8 text (empty in `discard` mode). */
  body: string;
}

export interface OutboundFailure {
  ok: false;
  /**
   * `timeout`: no complete answer within `timeoutMs`; `cancelled`: the caller's signal fired first;
   * `network`: invalid URL, refused, reset, DNS (or a `lookup` refusal); `too_large`: over the cap.
   */
  kind: 'timeout' | 'cancelled' | 'network' | 'too_large';
  /** Whether the failure came after the status line (while reading the answer). */
  reading: boolean;
  /** The system error code when there is one (`ECONNREFUSED`, or a `lookup`'s own code). */
  code?: string;
  /** The error's own message. */
  detail: string;
}

export type OutboundOutcome = OutboundResponse | OutboundFailure;

export interface HttpClient {
  request(request: OutboundRequest): Promise<OutboundOutcome>;
  /** Closes the kept-alive connections. */
  close(): Promise<void>;
}

export interface HttpClientOptions {
  /** Most connections open per origin (default: no limit). */
  connectionsPerOrigin?: number;
  /** Idle kept-alive connections are closed after this long (default: when the server closes them). */
  idleTimeoutMs?: number;
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const agentOptions = {
    keepAlive: true,
    scheduling: 'lifo' as const,
    ...(options.connectionsPerOrigin ? { maxSockets: options.connectionsPerOrigin } : {}),
    ...(options.idleTimeoutMs ? { timeout: options.idleTimeoutMs } : {}),
  };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  return {
    request: (request) => send(agents, request),
    async close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The deadline of one request: a timer, cleared as soon as the exchange is over, and the caller's signal. */
function deadline(request: OutboundRequest) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort(new Error(`no answer within ${request.timeoutMs} ms`));
    },
    Math.max(1, request.timeoutMs),
  );
  const caller = request.signal;
  const onCancel = () => controller.abort(caller?.reason);
  caller?.addEventListener('abort', onCancel, { once: true });
  if (caller?.aborted) onCancel();
  return {
    signal: controller.signal,
    /** The failure of an aborted exchange, or null when it was not aborted. */
    aborted(reading: boolean): OutboundFailure | null {
      if (!controller.signal.aborted) return null;
      return timedOut
        ? { ok: false, kind: 'timeout', reading, detail: `no answer within ${request.timeoutMs} ms` }
        : { ok: false, kind: 'cancelled', reading, detail: 'cancelled by the caller' };
    },
    done() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCancel);
    },
  };
}

function networkFailure(error: unknown, reading: boolean): OutboundFailure {
  const code = errorCode(error);
  const detail = error instanceof Error ? error.message || error.name : String(error);
  return { ok: false, kind: 'network', reading, ...(code ? { code } : {}), detail };
}

function tooLarge(maxBytes: number): OutboundFailure {
  return {
    ok: false,
    kind: 'too_large',
    reading: true,
    detail: `the answer is larger than ${maxBytes} bytes`,
  };
}

/** One exchange as its answer is read: the request, its deadline, and how it ends (once). */
interface Exchange {
  request: OutboundRequest;
  limit: ReturnType<typeof deadline>;
  settle: (outcome: OutboundOutcome) => void;
  fail: (error: unknown, reading: boolean) => void;
}

/** The URL a request calls, or why it cannot be called: not a URL, or neither http: nor https:. */
function targetOf(
  request: OutboundRequest,
): { kind: 'ok'; url: URL; https: boolean } | { kind: 'invalid'; error: unknown } {
  let url: URL;
  try {
    url = typeof request.url === 'string' ? new URL(request.url) : request.url;
  } catch (error) {
    return { kind: 'invalid', error };
  }
  const https = url.protocol === 'https:';
  if (!https && url.protocol !== 'http:')
    return { kind: 'invalid', error: new Error(`unsupported protocol ${url.protocol}`) };
  return { kind: 'ok', url, https };
}

function send(
  agents: { http: HttpAgent; https: HttpsAgent },
  request: OutboundRequest,
): Promise<OutboundOutcome> {
  const limit = deadline(request);
  return new Promise<OutboundOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: OutboundOutcome) => {
      if (settled) return;
      settled = true;
      limit.done();
      resolve(outcome);
    };
    const fail = (error: unknown, reading: boolean) =>
      settle(limit.aborted(reading) ?? networkFailure(error, reading));
    const target = targetOf(request);
    if (target.kind === 'invalid') {
      fail(target.error, false);
      return;
    }
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
    const req = (target.https ? httpsCall : httpCall)(
      target.url,
      {
        method: request.method,
        headers,
        agent: target.https ? agents.https : agents.http,
        signal: limit.signal,
        ...(request.lookup ? { lookup: request.lookup } : {}),
      },
      (res: IncomingMessage) => readAnswer(res, { request, limit, settle, fail }),
    );
    req.on('error', (error) => fail(error, false));
    req.end(request.body);
  });
}

/**
 * Reads an answer under the size cap: its body as text, or (`discard`) only its status. An answer
 * over the cap is `too_large` (or its status, when discarding); one cut short is a failure (or its
 * status, when discarding).
 */
function readAnswer(res: IncomingMessage, { request, limit, settle, fail }: Exchange): void {
  const discard = request.read === 'discard';
  const status = res.statusCode ?? 0;
  const answer = (body: string): OutboundResponse => ({
    ok: true,
    status,
    headers: headerLookup(res.headers),
    body,
  });
  const overCap = () => {
    settle(discard ? answer('') : tooLarge(request.maxBodyBytes));
    res.destroy();
  };
  const length = Number(res.headers['content-length']);
  if (Number.isFinite(length) && length > request.maxBodyBytes) {
    overCap();
    return;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  res.on('data', (chunk: Buffer) => {
    total += chunk.byteLength;
    if (total > request.maxBodyBytes) return overCap();
    if (!discard) chunks.push(chunk);
  });
  res.on('end', () => settle(answer(discard ? '' : Buffer.concat(chunks, total).toString('utf8'))));
  // Cut short: a failure when the body is the answer; when only the status matters, the status.
  const cut = (error: unknown) => (discard && !limit.signal.aborted ? settle(answer('')) : fail(error, true));
  res.on('error', cut);
  res.on('aborted', () => cut(new Error('the connection closed before the answer was complete')));
  res.on('close', () => cut(new Error('the connection closed before the answer was complete')));
}

function headerLookup(headers: IncomingMessage['headers']): HeaderLookup {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** The system error code of a failure (on the error or its cause), when there is one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string' && /^E[A-Z]+$/.test(own)) return own;
  const cause = (error as { cause?: unknown }).cause;
  if (typeof cause === 'object' && cause !== null) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
