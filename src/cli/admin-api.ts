import type {
  AccountPatch,
  AccountRecord,
  KeyListFilter,
  KeyRecord,
  KeySettings,
  Mode,
  Plan,
} from '../modules/keys/index.js';
import { unreachable } from './unreachable.js';
import { UsageError } from './usage-error.js';

// The port of `openvat accounts` and `openvat keys`: the operations of the admin API they use, over
// HTTP to a running service (`--url`), or on DATABASE_URL (admin-local.ts). Both answer with the
// records of the API and refuse with its status, code and message.

export type KeyWithSecret = KeyRecord & { key: string };

/** The filters of `GET /admin/v1/keys`, without its paging. */
export type KeyFilter = Omit<KeyListFilter, 'after' | 'limit'>;

/** The filters of `GET /admin/v1/accounts`, without its paging. */
export interface AccountFilter {
  q?: string;
  external_id?: string;
}

/** A new account, as `POST /admin/v1/accounts` takes it. */
export interface AccountInput {
  name: string;
  external_id?: string | null;
  metadata?: Record<string, string>;
}

/** A new key, as `POST /admin/v1/keys` takes it. */
export type KeyInput = { account_id: string; plan: Plan; mode: Mode } & KeySettings;

/** The admin API's operations the commands use; each answers the API's record, or throws `AdminApiError`. */
export interface AdminOperations {
  /** Where the operations go, for messages: the URL, or the database. */
  readonly describe: string;
  /** Every account the filter matches (all pages). */
  listAccounts(filter: AccountFilter): Promise<AccountRecord[]>;
  getAccount(id: string): Promise<AccountRecord>;
  createAccount(input: AccountInput): Promise<AccountRecord>;
  updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord>;
  /** Every key the filter matches (all pages). */
  listKeys(filter: KeyFilter): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord>;
  createKey(input: KeyInput): Promise<KeyWithSecret>;
  updateKey(id: string, patch: KeySettings): Promise<KeyRecord>;
  revokeKey(id: string): Promise<KeyRecord>;
  rollKey(id: string, overlapSeconds: number): Promise<KeyWithSecret>;
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

/** A list read page by page: each page's items and the cursor of the next (`null` after the last). */
export async function everyPage<T>(
  page: (after: string | undefined) => Promise<{ data: T[]; next: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  for (;;) {
    const { data, next } = await page(after);
    items.push(...data);
    if (next === null) return items;
    after = next;
  }
}

/** The largest page the admin API answers. */
export const ADMIN_PAGE = 200;

/** One request to the admin API. */
interface AdminRequest {
  method: 'GET' | 'POST' | 'PATCH';
  /** Under `/admin/v1`, e.g. `/keys/ID/roll`. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
}

function pathWithQuery(request: AdminRequest): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) params.set(name, value);
  }
  const query = params.toString();
  return `/admin/v1${request.path}${query ? `?${query}` : ''}`;
}

/** The service's address from `--url`; the admin API's own (…/admin or …/admin/v1) is taken as well. */
function serviceBase(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return url.replace(/\/+$/, '').replace(/\/admin(\/v1)?$/, '');
  } catch {
    throw new UsageError(`--url must be the http:// or https:// address of an openvat service, got "${url}"`);
  }
}

/** The admin API of a running service, over HTTP with an admin key. */
export function remoteAdmin(options: { url: string; adminKey: string }): AdminOperations {
  const base = serviceBase(options.url);

  /** The answer's `data` (and the next page's cursor), or the API's refusal thrown. */
  async function call<T>(request: AdminRequest): Promise<{ data: T; next: string | null }> {
    const { status, body } = await send(request);
    const answer = body as {
      data?: T;
      meta?: { next_cursor?: string | null };
      error?: { code: string; message: string };
    } | null;
    if (status >= 200 && status < 300 && answer && 'data' in answer) {
      return { data: answer.data as T, next: answer.meta?.next_cursor ?? null };
    }
    if (answer?.error) throw new AdminApiError(status, answer.error.code, answer.error.message);
    throw new AdminApiError(
      status,
      'unexpected_answer',
      `${base} did not answer with the admin API's JSON envelope; is it an openvat admin listener?`,
    );
  }

  async function send(request: AdminRequest): Promise<{ status: number; body: unknown }> {
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
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: null };
    }
  }

  const one = async <T>(request: AdminRequest): Promise<T> => (await call<T>(request)).data;
  const all = <T>(path: string, query: Record<string, string | undefined>) =>
    everyPage((cursor) =>
      call<T[]>({ method: 'GET', path, query: { ...query, limit: `${ADMIN_PAGE}`, cursor } }),
    );
  const at = (collection: string, id: string, tail = '') => `/${collection}/${encodeURIComponent(id)}${tail}`;

  const listAccounts = (filter: AccountFilter) => all<AccountRecord>('/accounts', { ...filter });
  const getAccount = (id: string) => one<AccountRecord>({ method: 'GET', path: at('accounts', id) });
  const createAccount = (input: AccountInput) =>
    one<AccountRecord>({ method: 'POST', path: '/accounts', body: input });
  const updateAccount = (id: string, patch: AccountPatch) =>
    one<AccountRecord>({ method: 'PATCH', path: at('accounts', id), body: patch });
  const listKeys = (filter: KeyFilter) => all<KeyRecord>('/keys', { ...filter });
  const getKey = (id: string) => one<KeyRecord>({ method: 'GET', path: at('keys', id) });
  const createKey = (input: KeyInput) => one<KeyWithSecret>({ method: 'POST', path: '/keys', body: input });
  const updateKey = (id: string, patch: KeySettings) =>
    one<KeyRecord>({ method: 'PATCH', path: at('keys', id), body: patch });
  const revokeKey = (id: string) => one<KeyRecord>({ method: 'POST', path: at('keys', id, '/revoke') });
  const rollKey = (id: string, overlapSeconds: number) =>
    one<KeyWithSecret>({
      method: 'POST',
      path: at('keys', id, '/roll'),
      body: { overlap_seconds: overlapSeconds },
    });

  return {
    describe: base,
    listAccounts,
    getAccount,
    createAccount,
    updateAccount,
    listKeys,
    getKey,
    createKey,
    updateKey,
    revokeKey,
    rollKey,
    close: async () => {},
  };
}
