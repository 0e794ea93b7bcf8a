import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  errorFamily,
  errorFromResponse,
  IdempotencyInProgressError,
  OpenVatError,
  parseRetryAfter,
  RegistryUnavailableError,
  TimeoutError,
} from './errors.js';
import type {
  AuditResponse,
  BatchJob,
  BatchJobResponse,
  ConfirmationResponse,
  ConfirmBody,
  ConfirmResponse,
  DecideBody,
  DecideResponse,
  Envelope,
  HealthResponse,
  Monitor,
  MonitorBulkBody,
  MonitorBulkResponse,
  MonitorChangesQuery,
  MonitorChangesResponse,
  MonitorCheckResponse,
  MonitorCreateBody,
  MonitorCreated,
  MonitorListQuery,
  MonitorListResponse,
  MonitorResponse,
  MonitorSummaryResponse,
  MonitorUpdateBody,
  MonitorUpdateResponse,
  PeppolParams,
  PeppolResponse,
  RateQuery,
  RateResponse,
  RatesQuery,
  RatesResponse,
  StatusResponse,
  UsageQuery,
  UsageResponse,
  ValidateBatchParams,
  ValidateBatchResponse,
  ValidateParams,
  ValidateResponse,
  WebhookCreateBody,
  WebhookCreated,
  WebhookDeliveriesQuery,
  WebhookDeliveriesResponse,
  WebhookListResponse,
  WebhookReplayResponse,
  WebhookTestResult,
  WebhookUpdateBody,
  WebhookUpdateResponse,
} from './types.js';

export interface ClientOptions {
  /** Where the service answers, e.g. `https://vat.example.com`. Default: the `OPENVAT_URL` variable. */
  baseUrl?: string;
  /**
   * A `svc_live_…` or `svc_test_…` key. Default: the `OPENVAT_API_KEY` variable. Without one, only
   * the public calls work (`rates`, `status`, `health`); the others reject with an
   * `AuthenticationError` (code `missing_api_key`) before sending anything.
   */
  apiKey?: string;
  /** Milliseconds one attempt may take before it is abandoned (default 60,000). */
  timeout?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export interface RequestOptions {
  /** Aborts the call, including its retries and waits. */
  signal?: AbortSignal;
  /** Overrides the client's `timeout` for this call. */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/**
 * What `confirm` resolves to: the answer's envelope, as the service sent it, and `replayed`, added by
 * the client from the `Idempotent-Replayed` header: true when the answer is the stored one of an
 * earlier request with the same Idempotency-Key (an earlier call, or an earlier attempt of this one
 * whose answer was lost), made without asking the authority again.
 */
export type ConfirmResult = Envelope<ConfirmResponse> & { replayed: boolean };

export interface ConfirmOptions extends RequestOptions {
  /** A UUID; default: a new random one per call, sent again unchanged on every retry of that call. */
  idempotencyKey?: string;
}

/** `batchJobs.follow`, `wait` and `run`: the per-call options apply to each request they make. */
export interface FollowOptions extends RequestOptions {
  /** Milliseconds between two polls (default 1,000). */
  pollInterval?: number;
}

/** `batchJobs.submitAll`: the per-call options apply to each job it creates. */
export interface SubmitAllOptions extends RequestOptions {
  /** Numbers per job (default 10,000, the service's largest job). */
  chunkSize?: number;
  requester_vat_number?: string;
}

/** Headers that make a request conditional (answered 304 without a body); refused by the client. */
const CONDITIONAL_HEADERS = ['if-none-match', 'if-modified-since'];

/** The largest batch job the service accepts. */
const MAX_JOB_SIZE = 10_000;
/**
 * The longest `Retry-After` (seconds) the client waits for by itself; a longer one is left to the
 * caller: the error is thrown at once with its `retryAfter`.
 */
export const MAX_RETRY_AFTER_SECONDS = 10;

/**
 * The service's own answer that an upstream registry or tax authority could not answer
 * (`registry_unavailable`, `taxauth_*`, any `*_unavailable`, `*_server_error`, `*_session_limit`).
 * The service has already retried within its own deadline, so the client does not repeat the call.
 */
function upstreamUnavailable(error: OpenVatError): boolean {
  return (
    error.code.startsWith('taxauth_') ||
    error.code.endsWith('_session_limit') ||
    errorFamily(error.code) === RegistryUnavailableError
  );
}

/** The answer carries the service's JSON error envelope (its `error.code`), not just a status. */
function fromService(error: OpenVatError): boolean {
  return error.status > 0 && !error.code.startsWith('http_');
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface Call {
  method: Method;
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  /**
   * Safe to send twice: reads, deletions, PATCHes (they set fields), `confirm` (its Idempotency-Key)
   * and `monitors.create` / `monitors.bulk` (a number already monitored answers its monitor).
   */
  idempotent: boolean;
  options?: RequestOptions | undefined;
  /** Answered without an API key (rates, status, health). */
  public?: boolean;
  /** Adds what the answer's headers say to the resolved value. */
  decorate?: (result: object, headers: Record<string, string>) => object;
}

function env(name: string): string | undefined {
  try {
    const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
    return process?.env?.[name];
  } catch {
    // Deno without --allow-env throws on access.
    return undefined;
  }
}

function headersRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}

/** Waits `ms`; an aborted `signal` rejects with the client's `AbortError`. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () =>
      new AbortError('The request was aborted.', { status: 0, code: 'aborted', cause: signal?.reason });
    if (signal?.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Header names in lower case, so that one given twice in different cases is sent once (the later wins). */
function lowerCased(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

function randomUuid(): string {
  return crypto.randomUUID();
}

/**
 * The openvat API client.
 *
 * ```ts
 * const openvat = new OpenVat({ baseUrl: 'https://vat.example.com', apiKey: 'svc_live_…' });
 * const { data } = await openvat.validate({ vat_number: 'DE136695976' });
 * ```
 */
export class OpenVat {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #timeout: number;
  readonly #maxRetries: number;
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;

  constructor(options: ClientOptions = {}) {
    const baseUrl = options.baseUrl ?? env('OPENVAT_URL');
    const apiKey = options.apiKey ?? env('OPENVAT_API_KEY');
    if (!baseUrl) throw new TypeError('OpenVat: pass baseUrl or set OPENVAT_URL.');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#apiKey = apiKey || undefined;
    this.#timeout = options.timeout ?? 60_000;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#headers = options.headers ?? {};
  }

  /** `GET /v1/validate`: one VAT number, checked locally and against its registry. */
  validate(params: ValidateParams, options?: RequestOptions): Promise<Envelope<ValidateResponse>> {
    return this.request({
      method: 'GET',
      path: '/v1/validate',
      query: {
        vat_number: params.vat_number,
        requester_vat_number: params.requester_vat_number,
        cache: params.cache === undefined ? undefined : String(params.cache),
        company_name: params.company_name,
        company_street: params.company_street,
        company_postcode: params.company_postcode,
        company_city: params.company_city,
        include: params.include && params.include.length > 0 ? params.include.join(',') : undefined,
      },
      idempotent: true,
      options,
    });
  }

  /** `POST /v1/validate/batch`: up to 100 numbers, answered at once. Larger sets: `batchJobs`. */
  validateBatch(
    params: ValidateBatchParams,
    options?: RequestOptions,
  ): Promise<Envelope<ValidateBatchResponse>> {
    return this.request({
      method: 'POST',
      path: '/v1/validate/batch',
      body: { ...params, async: false },
      idempotent: false,
      options,
    });
  }

  /** `GET /v1/peppol/{identifier}`: whether the company can receive e-invoices over Peppol, and which. */
  peppol(params: PeppolParams, options?: RequestOptions): Promise<Envelope<PeppolResponse>> {
    return this.request({
      method: 'GET',
      path: `/v1/peppol/${enc(params.identifier)}`,
      query: { cache: params.cache === undefined ? undefined : String(params.cache) },
      idempotent: true,
      options,
    });
  }

  /** `POST /v1/decide`: charge VAT or not, at which rate, and what the invoice must say. */
  decide(body: DecideBody, options?: RequestOptions): Promise<Envelope<DecideResponse>> {
    return this.request({ method: 'POST', path: '/v1/decide', body, idempotent: false, options });
  }

  /**
   * `POST /v1/confirm`: a qualified confirmation by the German authority. Sent with an
   * `Idempotency-Key` (a new one per call unless given), so retries never confirm twice.
   */
  confirm(body: ConfirmBody, options: ConfirmOptions = {}): Promise<ConfirmResult> {
    const { idempotencyKey: given, ...rest } = options;
    // An Idempotency-Key among the per-call headers (any case) is the key, unless `idempotencyKey` is given.
    const headers = lowerCased(rest.headers);
    const fromHeaders = headers['idempotency-key'];
    if (given !== undefined && fromHeaders !== undefined && given !== fromHeaders) {
      return Promise.reject(
        new TypeError('OpenVat: idempotencyKey and the Idempotency-Key header differ; pass one.'),
      );
    }
    const idempotencyKey = given ?? fromHeaders ?? randomUuid();
    return this.request({
      method: 'POST',
      path: '/v1/confirm',
      body,
      idempotent: true,
      options: { ...rest, headers: { ...headers, 'idempotency-key': idempotencyKey } },
      decorate: (result, answer) => ({ ...result, replayed: answer['idempotent-replayed'] === 'true' }),
    });
  }

  readonly confirmations = {
    /** `GET /v1/confirmations/{id}`: a stored confirmation with its evidence. */
    get: (id: string, options?: RequestOptions): Promise<Envelope<ConfirmationResponse>> =>
      this.request({ method: 'GET', path: `/v1/confirmations/${enc(id)}`, idempotent: true, options }),
  };

  readonly audits = {
    /** `GET /v1/audits/{request_id}`: the audit record of an earlier answer. */
    get: (requestId: string, options?: RequestOptions): Promise<Envelope<AuditResponse>> =>
      this.request({ method: 'GET', path: `/v1/audits/${enc(requestId)}`, idempotent: true, options }),
  };

  readonly rates = {
    /** `GET /v1/rates`: the VAT rates of every country, today or on `date`. */
    list: (query: RatesQuery = {}, options?: RequestOptions): Promise<Envelope<RatesResponse>> =>
      this.request({ method: 'GET', path: '/v1/rates', query, idempotent: true, options, public: true }),
    /** `GET /v1/rates/{country}`: one country's rates. */
    get: (
      country: string,
      query: RateQuery = {},
      options?: RequestOptions,
    ): Promise<Envelope<RateResponse>> =>
      this.request({
        method: 'GET',
        path: `/v1/rates/${enc(country)}`,
        query,
        idempotent: true,
        options,
        public: true,
      }),
  };

  /** `GET /v1/status`: each registry's circuit breaker, calls in flight and last success and failure. */
  status(options?: RequestOptions): Promise<Envelope<StatusResponse>> {
    return this.request({ method: 'GET', path: '/v1/status', idempotent: true, options, public: true });
  }

  /** `GET /health`: liveness, `{ data: { ok: true } }` while the process is up. Public, no key needed. */
  health(options?: RequestOptions): Promise<Envelope<HealthResponse>> {
    return this.request({ method: 'GET', path: '/health', idempotent: true, options, public: true });
  }

  readonly usage = {
    /** `GET /v1/usage`: this key's requests per day and operation. */
    get: (query: UsageQuery = {}, options?: RequestOptions): Promise<Envelope<UsageResponse>> =>
      this.request({ method: 'GET', path: '/v1/usage', query, idempotent: true, options }),
  };

  readonly webhooks = {
    /** `POST /v1/webhooks`: registers an endpoint; `data.secret` is shown this once. */
    create: (body: WebhookCreateBody, options?: RequestOptions): Promise<Envelope<WebhookCreated>> =>
      this.request({ method: 'POST', path: '/v1/webhooks', body, idempotent: false, options }),
    /** `GET /v1/webhooks`: this key's endpoints. */
    list: (options?: RequestOptions): Promise<Envelope<WebhookListResponse>> =>
      this.request({ method: 'GET', path: '/v1/webhooks', idempotent: true, options }),
    /** `PATCH /v1/webhooks/{id}`: disables or enables an endpoint, or changes the events it receives. */
    update: (
      id: string,
      body: WebhookUpdateBody,
      options?: RequestOptions,
    ): Promise<Envelope<WebhookUpdateResponse>> =>
      this.request({ method: 'PATCH', path: `/v1/webhooks/${enc(id)}`, body, idempotent: true, options }),
    /** `DELETE /v1/webhooks/{id}`: resolves to `{ data: null, meta }`. */
    delete: (id: string, options?: RequestOptions): Promise<Envelope<null>> =>
      this.request({ method: 'DELETE', path: `/v1/webhooks/${enc(id)}`, idempotent: true, options }),
    /** `POST /v1/webhooks/{id}/test`: sends one signed `test` event now. */
    test: (id: string, options?: RequestOptions): Promise<Envelope<WebhookTestResult>> =>
      this.request({ method: 'POST', path: `/v1/webhooks/${enc(id)}/test`, idempotent: false, options }),
    /** `GET /v1/webhooks/{id}/deliveries`: recent deliveries with their attempts. */
    deliveries: (
      id: string,
      query: WebhookDeliveriesQuery = {},
      options?: RequestOptions,
    ): Promise<Envelope<WebhookDeliveriesResponse>> =>
      this.request({
        method: 'GET',
        path: `/v1/webhooks/${enc(id)}/deliveries`,
        query,
        idempotent: true,
        options,
      }),
    /** `POST /v1/webhooks/{id}/deliveries/{delivery_id}/replay`: queues a finished delivery again. */
    replay: (
      id: string,
      deliveryId: string,
      options?: RequestOptions,
    ): Promise<Envelope<WebhookReplayResponse>> =>
      this.request({
        method: 'POST',
        path: `/v1/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/replay`,
        idempotent: false,
        options,
      }),
  };

  readonly monitors = {
    /**
     * `POST /v1/monitors`: keeps a number checked daily, weekly or monthly; resolves with the first
     * check. Safe to retry: a number the key already monitors answers with the existing monitor.
     */
    create: (body: MonitorCreateBody, options?: RequestOptions): Promise<Envelope<MonitorCreated>> =>
      this.request({ method: 'POST', path: '/v1/monitors', body, idempotent: true, options }),
    /** `POST /v1/monitors/bulk`: up to 10,000 numbers at once; bad rows are listed with their reasons. */
    bulk: (body: MonitorBulkBody, options?: RequestOptions): Promise<Envelope<MonitorBulkResponse>> =>
      this.request({ method: 'POST', path: '/v1/monitors/bulk', body, idempotent: true, options }),
    /** `GET /v1/monitors`: one page of the key's monitors; pass `meta.next_cursor` as `cursor` for the next. */
    list: (query: MonitorListQuery = {}, options?: RequestOptions): Promise<Envelope<MonitorListResponse>> =>
      this.request({ method: 'GET', path: '/v1/monitors', query, idempotent: true, options }),
    /** Every monitor matching `query`, page after page (`for await (const monitor of …)`). */
    all: (query: MonitorListQuery = {}, options?: RequestOptions): AsyncGenerator<Monitor> =>
      this.#allMonitors(query, options),
    /** `GET /v1/monitors/{id}`: the monitor with its latest checks and changes. */
    get: (id: string, options?: RequestOptions): Promise<Envelope<MonitorResponse>> =>
      this.request({ method: 'GET', path: `/v1/monitors/${enc(id)}`, idempotent: true, options }),
    /** `PATCH /v1/monitors/{id}`: changes the interval, reference or metadata; the history stays. */
    update: (
      id: string,
      body: MonitorUpdateBody,
      options?: RequestOptions,
    ): Promise<Envelope<MonitorUpdateResponse>> =>
      this.request({ method: 'PATCH', path: `/v1/monitors/${enc(id)}`, body, idempotent: true, options }),
    /** `DELETE /v1/monitors/{id}`: resolves to `{ data: null, meta }`. */
    delete: (id: string, options?: RequestOptions): Promise<Envelope<null>> =>
      this.request({ method: 'DELETE', path: `/v1/monitors/${enc(id)}`, idempotent: true, options }),
    /** `POST /v1/monitors/{id}/check`: checks now (counts against the key's rate limit). */
    check: (id: string, options?: RequestOptions): Promise<Envelope<MonitorCheckResponse>> =>
      this.request({ method: 'POST', path: `/v1/monitors/${enc(id)}/check`, idempotent: false, options }),
    /** `GET /v1/monitors/changes`: the key's recent changes, newest first. */
    changes: (
      query: MonitorChangesQuery = {},
      options?: RequestOptions,
    ): Promise<Envelope<MonitorChangesResponse>> =>
      this.request({ method: 'GET', path: '/v1/monitors/changes', query, idempotent: true, options }),
    /** `GET /v1/monitors/summary`: counts per state and the plan's cap. */
    summary: (options?: RequestOptions): Promise<Envelope<MonitorSummaryResponse>> =>
      this.request({ method: 'GET', path: '/v1/monitors/summary', idempotent: true, options }),
  };

  async *#allMonitors(query: MonitorListQuery, options?: RequestOptions): AsyncGenerator<Monitor> {
    let cursor: string | undefined;
    do {
      const page = await this.monitors.list({ ...query, ...(cursor ? { cursor } : {}) }, options);
      yield* page.data;
      cursor = page.meta.next_cursor ?? undefined;
    } while (cursor);
  }

  readonly batchJobs = {
    /** `POST /v1/validate/batch` with `async: true`: queues a durable job of up to 10,000 numbers. */
    create: (params: ValidateBatchParams, options?: RequestOptions): Promise<Envelope<BatchJobResponse>> =>
      this.request({
        method: 'POST',
        path: '/v1/validate/batch',
        body: { ...params, async: true },
        idempotent: false,
        options,
      }),
    /** `GET /v1/validate/batch/{id}`: the job's progress, and its results once completed. */
    get: (id: string, options?: RequestOptions): Promise<Envelope<BatchJobResponse>> =>
      this.request({ method: 'GET', path: `/v1/validate/batch/${enc(id)}`, idempotent: true, options }),
    /**
     * Polls a job and yields each state in which it has made progress (`done` changed or the status
     * changed), ending with the completed (or cancelled) job.
     *
     * ```ts
     * for await (const job of openvat.batchJobs.follow(id)) console.log(job.done, '/', job.total);
     * ```
     */
    follow: (id: string, options: FollowOptions = {}): AsyncGenerator<BatchJob, void, undefined> =>
      this.#follow(id, options),
    /** Creates a job and follows it: `for await (const job of openvat.batchJobs.run({ vat_numbers }))`. */
    run: (
      params: ValidateBatchParams,
      options: FollowOptions = {},
    ): AsyncGenerator<BatchJob, void, undefined> => this.#run(params, options),
    /** Resolves with the job once it has completed or was cancelled (polling every `pollInterval`). */
    wait: async (id: string, options: FollowOptions = {}): Promise<BatchJob> => {
      let last: BatchJob | undefined;
      for await (const job of this.#follow(id, options)) last = job;
      if (!last) throw new Error('unreachable: follow ends with the ended job');
      return last;
    },
    /**
     * Reads numbers from any (async) iterable and queues them as jobs of `chunkSize`, yielding each
     * job as it is created; nothing is held in memory beyond one chunk.
     *
     * ```ts
     * for await (const job of openvat.batchJobs.submitAll(readLines('numbers.txt'))) ids.push(job.id);
     * ```
     */
    submitAll: (
      numbers: AsyncIterable<string> | Iterable<string>,
      options: SubmitAllOptions = {},
    ): AsyncGenerator<BatchJob, void, undefined> => this.#submitAll(numbers, options),
  };

  async *#follow(id: string, options: FollowOptions): AsyncGenerator<BatchJob, void, undefined> {
    const { pollInterval, ...requestOptions } = options;
    const interval = pollInterval ?? 1_000;
    let previous: BatchJob | undefined;
    for (;;) {
      const { data: job } = await this.batchJobs.get(id, requestOptions);
      if (!previous || previous.done !== job.done || previous.status !== job.status) yield job;
      if (job.status === 'completed' || job.status === 'cancelled') return;
      previous = job;
      await sleep(interval, options.signal);
    }
  }

  async *#run(
    params: ValidateBatchParams,
    options: FollowOptions,
  ): AsyncGenerator<BatchJob, void, undefined> {
    const { pollInterval: _, ...requestOptions } = options;
    const { data: created } = await this.batchJobs.create(params, requestOptions);
    yield* this.#follow(created.id, options);
  }

  async *#submitAll(
    numbers: AsyncIterable<string> | Iterable<string>,
    options: SubmitAllOptions,
  ): AsyncGenerator<BatchJob, void, undefined> {
    const { chunkSize, requester_vat_number, ...requestOptions } = options;
    const size = chunkSize ?? MAX_JOB_SIZE;
    if (!Number.isInteger(size) || size < 1 || size > MAX_JOB_SIZE) {
      throw new RangeError(`chunkSize must be an integer from 1 to ${MAX_JOB_SIZE}.`);
    }
    const extra = requester_vat_number ? { requester_vat_number } : {};
    let chunk: string[] = [];
    for await (const number of numbers) {
      chunk.push(number);
      if (chunk.length === size) {
        yield (await this.batchJobs.create({ vat_numbers: chunk, ...extra }, requestOptions)).data;
        chunk = [];
      }
    }
    if (chunk.length > 0)
      yield (await this.batchJobs.create({ vat_numbers: chunk, ...extra }, requestOptions)).data;
  }

  /** Sends one call, with retries; resolves to the `{ data, meta }` envelope or rejects with an `OpenVatError`. */
  async request<T>(call: Call): Promise<T> {
    const options = call.options ?? {};
    const maxRetries = options.maxRetries ?? this.#maxRetries;
    const url = new URL(this.baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    if (this.#apiKey === undefined && !call.public) {
      throw new AuthenticationError(
        `OpenVat: ${call.method} ${call.path} needs an API key: pass apiKey or set OPENVAT_API_KEY.`,
        { status: 0, code: 'missing_api_key' },
      );
    }
    const given = { ...lowerCased(this.#headers), ...lowerCased(options.headers) };
    const conditional = CONDITIONAL_HEADERS.find((name) => name in given);
    if (conditional !== undefined) {
      // A 304 has no body to resolve to: the client makes no conditional requests.
      throw new TypeError(
        `OpenVat: the client does not make conditional requests; remove the ${conditional} header.`,
      );
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...given,
      ...(this.#apiKey === undefined ? {} : { authorization: `Bearer ${this.#apiKey}` }),
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);

    const idempotencyKey = headers['idempotency-key'] ?? null;
    /** When the first 409 "still in progress" arrived; such answers are waited out for one `timeout`. */
    let inProgressSince: number | null = null;
    let inProgressWaits = 0;
    for (let attempt = 0; ; attempt += 1) {
      const retriesLeft = attempt < maxRetries;
      let error: OpenVatError;
      let wait: number | null = null;
      try {
        const result = await this.#attempt<object>(call.method, url, headers, body, options, call.decorate);
        return result as T;
      } catch (caught) {
        if (!(caught instanceof OpenVatError)) throw caught;
        error = caught;
      }
      if (error instanceof AbortError) throw error;
      if (error instanceof IdempotencyInProgressError) {
        // The first attempt of this call (or an earlier call with this key) is still being worked on:
        // ask again shortly, with the same key, until it is answered or one attempt's time has passed.
        const budget = options.timeout ?? this.#timeout;
        inProgressSince ??= Date.now();
        const delay = Math.min(5_000, 500 * 2 ** inProgressWaits);
        if (maxRetries === 0 || Date.now() + delay - inProgressSince > budget) {
          throw new IdempotencyInProgressError(
            `A request with Idempotency-Key ${idempotencyKey} is still in progress at the service. ` +
              'The original request may have succeeded: send it again with the same key to get its answer; ' +
              'never with a new key.',
            {
              status: error.status,
              code: error.code,
              requestId: error.requestId,
              details: error.details,
              headers: error.headers,
              idempotencyKey,
              cause: error,
            },
          );
        }
        inProgressWaits += 1;
        attempt -= 1; // these polls do not count against maxRetries
        await sleep(delay, options.signal);
        continue;
      }
      if (!retriesLeft) throw error;
      if (fromService(error) && upstreamUnavailable(error)) throw error;
      // Repeated for every call only when the answer proves the service did not do the work (its own
      // 429); a dropped connection, a timeout or a 5xx (a proxy may have forwarded the request before
      // failing) only for calls safe to send twice.
      const serviceRateLimit = error.status === 429 && fromService(error);
      const repeatable =
        serviceRateLimit ||
        (call.idempotent &&
          (error instanceof ConnectionError || error.status === 429 || error.status >= 500));
      if (!repeatable) throw error;
      const retryAfter = parseRetryAfter(error.headers['retry-after']);
      if (retryAfter !== null) {
        if (retryAfter > MAX_RETRY_AFTER_SECONDS) throw error;
        wait = retryAfter * 1000;
      }
      // Exponential backoff with jitter when the service named no time: 0.5 s, 1 s, 2 s … up to 8 s.
      wait ??= Math.min(8_000, 500 * 2 ** attempt) * (0.75 + Math.random() * 0.25);
      await sleep(wait, options.signal);
    }
  }

  async #attempt<T>(
    method: Method,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    options: RequestOptions,
    decorate: Call['decorate'],
  ): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) {
      throw new AbortError('The request was aborted.', { status: 0, code: 'aborted', cause: signal.reason });
    }
    const controller = new AbortController();
    const timeout = options.timeout ?? this.#timeout;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let response: Response;
      let text: string;
      try {
        response = await this.#fetch(url, {
          method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: controller.signal,
        });
        text = await response.text();
      } catch (cause) {
        if (signal?.aborted) {
          throw new AbortError('The request was aborted.', { status: 0, code: 'aborted', cause });
        }
        if (timedOut) {
          throw new TimeoutError(`No answer within ${timeout} ms.`, { status: 0, code: 'timeout', cause });
        }
        throw new ConnectionError(`Could not reach ${url.origin}: ${(cause as Error)?.message ?? cause}`, {
          status: 0,
          code: 'connection_error',
          cause,
        });
      }
      const responseHeaders = headersRecord(response.headers);
      let json: unknown = null;
      if (text !== '') {
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
      }
      if (!response.ok) throw errorFromResponse(response.status, json, responseHeaders);
      const requestId = responseHeaders['service-request-id'] ?? '';
      // 204 No Content (deletions) is the only answer without a JSON body.
      if ((response.status === 204 || response.status === 205) && text === '') {
        return { data: null, meta: { request_id: requestId } } as T;
      }
      if (json === null || typeof json !== 'object') {
        const type = responseHeaders['content-type'] || 'no content type';
        const what = text === '' ? 'an empty body' : `a body of ${type}`;
        throw new OpenVatError(
          `The service answered HTTP ${response.status} with ${what} (${type}) where JSON was expected; a proxy may have answered in its place.`,
          {
            status: response.status,
            code: 'invalid_response',
            requestId: requestId || null,
            headers: responseHeaders,
          },
        );
      }
      const envelope =
        'data' in json && 'meta' in json ? json : { data: json, meta: { request_id: requestId } };
      return (decorate ? decorate(envelope, responseHeaders) : envelope) as T;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}
