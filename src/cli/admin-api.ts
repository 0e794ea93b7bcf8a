import { unreachable } from './unreachable.js';
import { UsageError } from './usage-error.js';

// The port of `openvat accounts` and `openvat keys`: the admin API, reached over HTTP (`--url`) or
// run in-process on DATABASE_URL (admin-local.ts). Both answer with the API's envelope.

export interface AdminRequest {
  method: 'GET' | 'POST' | 'PATCH';
  /** Under `/admin/v1`, e.g. `/keys/ID/roll`. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
}

/** The status and parsed JSON body of an answer (`null` when it was not JSON). */
export interface AdminAnswer {
  status: number;
  body: unknown;
}

export interface AdminBackend {
  /** Where the requests go, for messages: the URL, or the database. */
  readonly describe: string;
  send(request: AdminRequest): Promise<AdminAnswer>;
  close(): Promise<void>;
}

/** A refusal of the admin API: its status, code and message. */
export class AdminApiError extends Error {
  override name = 'AdminApiError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

/** Exit status 2 (cannot run as asked: a bad argument, a key it cannot use); otherwise 1. */
export function adminErrorCannotRun(error: unknown): boolean {
  return error instanceof AdminApiError && [400, 401, 403].includes(error.status);
}

export function pathWithQuery(request: AdminRequest): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) params.set(name, value);
  }
  const query = params.toString();
  return `/admin/v1${request.path}${query ? `?${query}` : ''}`;
}

/** The admin API of a client: every call answers its `data`, or throws the API's error. */
export function adminClient(backend: AdminBackend) {
  async function call<T>(request: AdminRequest): Promise<{ data: T; next: string | null }> {
    const answer = await backend.send(request);
    const body = answer.body as {
      data?: T;
      meta?: { next_cursor?: string | null };
      error?: { code: string; message: string };
    } | null;
    if (answer.status >= 200 && answer.status < 300 && body && 'data' in body) {
      return { data: body.data as T, next: body.meta?.next_cursor ?? null };
    }
    if (body?.error) throw new AdminApiError(answer.status, body.error.code, body.error.message);
    throw new AdminApiError(
      answer.status,
      'unexpected_answer',
      `${backend.describe} did not answer with the admin API's JSON envelope; is it an openvat admin listener?`,
    );
  }

  return {
    describe: backend.describe,
    async one<T>(request: AdminRequest): Promise<T> {
      return (await call<T>(request)).data;
    },
    /** Every page of a list (following `meta.next_cursor`). */
    async all<T>(request: AdminRequest): Promise<T[]> {
      const items: T[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await call<T[]>({ ...request, query: { ...request.query, limit: '200', cursor } });
        items.push(...page.data);
        if (page.next === null) return items;
        cursor = page.next;
      }
    },
    close: () => backend.close(),
  };
}

export type AdminClient = ReturnType<typeof adminClient>;

/** The admin API of a running service, over HTTP with an admin key. */
export function remoteAdminBackend(options: { url: string; adminKey: string }): AdminBackend {
  let base: string;
  try {
    const parsed = new URL(options.url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    // The service's address; the admin API's own (…/admin or …/admin/v1) is taken as well.
    base = options.url.replace(/\/+$/, '').replace(/\/admin(\/v1)?$/, '');
  } catch {
    throw new UsageError(
      `--url must be the http:// or https:// address of an openvat service, got "${options.url}"`,
    );
  }
  return {
    describe: base,
    async send(request) {
      let res: Response;
      try {
        res = await fetch(`${base}${pathWithQuery(request)}`, {
          method: request.method,
          headers: {
            authorization: `Bearer ${options.adminKey}`,
            accept: 'application/json',
            ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (error) {
        throw unreachable(base, error);
      }
      const text = await res.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: reported by the client
      }
      return { status: res.status, body };
    },
    async close() {},
  };
}
