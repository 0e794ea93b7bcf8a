/**
 * The port to RFC 3161 time-stamping authorities: one POST of a `TimeStampReq` (DER) as
 * `application/timestamp-query`, the answer's bytes back. Failures are values, never thrown.
 * The answer is binary DER, so this goes through `fetch` rather than the text-based outbound client.
 */
export type TsaAnswer =
  | { ok: true; status: number; contentType: string | null; body: Buffer }
  | { ok: false; reason: string };

export interface TsaClient {
  post(url: string, query: Buffer, timeoutMs: number): Promise<TsaAnswer>;
}

/** Answers larger than this are not read (a token with its chain is a few kilobytes). */
const MAX_ANSWER_BYTES = 256 * 1024;

export function createHttpTsaClient(): TsaClient {
  return {
    async post(url, query, timeoutMs) {
      const signal = AbortSignal.timeout(timeoutMs);
      // An account in the URL (`https://user:password@…`) is sent as HTTP basic authentication.
      const target = new URL(url);
      const headers: Record<string, string> = {
        'content-type': 'application/timestamp-query',
        accept: 'application/timestamp-reply',
      };
      if (target.username || target.password) {
        const account = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
        headers.authorization = `Basic ${Buffer.from(account, 'utf8').toString('base64')}`;
        target.username = '';
        target.password = '';
      }
      try {
        const response = await fetch(target, {
          method: 'POST',
          headers,
          body: new Uint8Array(query),
          redirect: 'manual',
          signal,
        });
        const length = Number(response.headers.get('content-length') ?? 0);
        if (length > MAX_ANSWER_BYTES) {
          await response.body?.cancel();
          return { ok: false, reason: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` };
        }
        const body = Buffer.from(await response.arrayBuffer());
        if (body.length > MAX_ANSWER_BYTES)
          return { ok: false, reason: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` };
        return { ok: true, status: response.status, contentType: response.headers.get('content-type'), body };
      } catch (error) {
        if (signal.aborted) return { ok: false, reason: `no answer within ${timeoutMs} ms` };
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        return { ok: false, reason: cause?.code ?? cause?.message ?? (error as Error).message };
      }
    },
  };
}
