/**
 * Downloads a register's published file: a conditional GET (`If-None-Match` with the last ETag,
 * `If-Modified-Since` with the last `Last-Modified`) so an unchanged file costs a `304`, redirects
 * followed a few hops over http(s) only, one deadline for the whole transfer, and the body read as
 * bytes under a cap (a declared `Content-Length` over the cap is refused before reading). Every
 * failure is a value: a body cut short by the connection, a server error, an answer that is not the
 * file; the caller keeps its copy.
 */
import { DEFAULT_USER_AGENT, describeNetworkError, type FetchFn, readAtMost } from './http.js';
import type { UnavailableReason } from './port.js';

export interface FileDownloadRequest {
  url: string;
  /** The validators of the copy held, for a conditional request. */
  etag?: string | null;
  lastModified?: string | null;
  /** Bodies larger than this are refused. */
  maxBytes: number;
  /** The deadline of the whole transfer, redirects included. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export type FileDownload =
  | { kind: 'not_modified' }
  | {
      kind: 'file';
      bytes: Buffer;
      etag: string | null;
      lastModified: string | null;
      contentType: string | null;
      /** The address the file came from after redirects. */
      url: string;
    }
  | { kind: 'failed'; reason: UnavailableReason; message: string };

export type FileDownloader = (request: FileDownloadRequest) => Promise<FileDownload>;

export interface FileDownloaderOptions {
  /** Default: the runtime's `fetch`. */
  fetch?: FetchFn;
  /** Redirects followed before giving up (default 3). */
  maxRedirects?: number;
}

const failed = (reason: UnavailableReason, message: string): FileDownload => ({
  kind: 'failed',
  reason,
  message,
});

export function createFileDownloader(options: FileDownloaderOptions = {}): FileDownloader {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const maxRedirects = options.maxRedirects ?? 3;

  return async function download(request) {
    const timeout = AbortSignal.timeout(Math.max(1, request.timeoutMs));
    const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
    const conditional = Boolean(request.etag || request.lastModified);
    const aborted = () =>
      failed(
        'timeout',
        timeout.aborted
          ? `the file did not arrive within ${request.timeoutMs} ms`
          : 'the download was cancelled',
      );
    let url = request.url;
    try {
      for (let hop = 0; ; hop++) {
        const response = await fetchFn(url, {
          method: 'GET',
          headers: headersFor(request),
          redirect: 'manual',
          signal,
        });
        const location = response.headers.get('location');
        if (response.status >= 300 && response.status < 400 && response.status !== 304 && location) {
          await response.body?.cancel().catch(() => {});
          const next = redirectTarget(url, location);
          if (!next) return failed('bad_response', `redirected to ${location}, which is not http(s)`);
          if (hop >= maxRedirects) return failed('bad_response', `more than ${maxRedirects} redirects`);
          url = next;
          continue;
        }
        return await answerOf(response, url, request.maxBytes, conditional);
      }
    } catch (error) {
      if (signal.aborted) return aborted();
      return failed('down', `the download failed: ${describeNetworkError(error)}`);
    }
  };
}

function headersFor(request: FileDownloadRequest): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': DEFAULT_USER_AGENT, accept: '*/*' };
  if (request.etag) headers['if-none-match'] = request.etag;
  if (request.lastModified) headers['if-modified-since'] = request.lastModified;
  return headers;
}

function redirectTarget(from: string, location: string): string | null {
  try {
    const next = new URL(location, from);
    return next.protocol === 'http:' || next.protocol === 'https:' ? next.toString() : null;
  } catch {
    return null;
  }
}

async function answerOf(
  response: Response,
  url: string,
  maxBytes: number,
  conditional: boolean,
): Promise<FileDownload> {
  const status = response.status;
  if (status === 304) {
    await response.body?.cancel().catch(() => {});
    return conditional
      ? { kind: 'not_modified' }
      : failed('bad_response', 'answered 304 Not Modified to a request without validators');
  }
  if (status !== 200) {
    await response.body?.cancel().catch(() => {});
    if (status === 429) return failed('throttled', 'the file server throttled the download (HTTP 429)');
    if (status === 504) return failed('timeout', 'the file server timed out (HTTP 504)');
    if (status >= 500) return failed('down', `the file server is unavailable (HTTP ${status})`);
    return failed('bad_response', `the file server answered HTTP ${status}`);
  }
  const bytes = await readBounded(response, maxBytes);
  if (bytes === null) return failed('bad_response', `the file is larger than ${maxBytes} bytes`);
  return {
    kind: 'file',
    bytes,
    etag: response.headers.get('etag'),
    lastModified: response.headers.get('last-modified'),
    contentType: response.headers.get('content-type'),
    url,
  };
}

/**
 * The body as bytes, or `null` over the cap (the cap counts the bytes after any content coding is
 * undone, so a compressed answer cannot grow past it); a body shorter than its declared length
 * throws (the caller's failure).
 */
async function readBounded(response: Response, maxBytes: number): Promise<Buffer | null> {
  const length = response.headers.get('content-length');
  const coded = response.headers.get('content-encoding') !== null;
  const declared = length === null || coded ? Number.NaN : Number(length);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  if (!response.body) return Buffer.alloc(0);
  const body = await readAtMost(response.body, maxBytes);
  if (body === null) return null;
  if (Number.isFinite(declared) && body.length !== declared) {
    throw new Error(`the file ended after ${body.length} of ${declared} bytes`);
  }
  return body;
}
