import { randomBytes } from 'node:crypto';
import { isIP, type LookupFunction } from 'node:net';
import type { Kysely } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { StoredEvent } from '../events/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { MetricsObserver } from '../metrics/index.js';
import type { DeliveryUpdate, WebhooksRepository } from './repository.js';
import type { WebhookResponse, WebhookTransport } from './transport.js';
import {
  checkUrlSyntax,
  checkWebhookUrl,
  type DnsResolver,
  guardedLookup,
  isPublicAddress,
} from './url-guard.js';
import { webhookSignature } from './verify.js';

/** Endpoints per API key (spec §8); disabled endpoints count until deleted. */
export const MAX_ENDPOINTS_PER_KEY = 5;
/** Attempts per delivery: the first plus 3 retries (spec §8). */
export const MAX_ATTEMPTS = 4;
/** A 2xx within this time is a success (spec §8). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/**
 * Deliveries in flight to one endpoint at a time, across every worker and instance. The delivery
 * slots are shared by every key: without a bound, one endpoint that hangs until the attempt timeout
 * (or is just slow) and has a long queue, such as a batch job's thousands of `validation.completed`
 * events, would hold every slot and hold up every other key's webhooks. Four keeps a healthy
 * receiver busy (about 4 deliveries per round trip) while a stuck one holds at most 4 of a
 * worker's 32 slots; the rest go to other endpoints.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4;

export interface WebhooksDeps {
  db: Kysely<Database>;
  repository: WebhooksRepository;
  clock: Clock;
  ids: IdGenerator;
  dns: DnsResolver;
  transport: WebhookTransport;
  /** Allow `http://` and private or loopback targets (development). */
  allowPrivate: boolean;
  /** Base of the exponential backoff: the n-th retry waits about `backoffMs × 2^(n-1)`. */
  backoffMs: number;
  timeoutMs?: number;
  maxAttempts?: number;
  /** Told of every delivery attempt's outcome (metrics). */
  observer?: Pick<MetricsObserver, 'webhookAttempt'>;
  /** Source of jitter in [0, 1). */
  random?: () => number;
  /** Identifies this process's worker in `claimed_by`. */
  workerId: string;
  /** How long a claim lasts; must exceed the attempt timeout. */
  leaseMs?: number;
  /** Deliveries in flight to one endpoint at a time (default `MAX_IN_FLIGHT_PER_ENDPOINT`). */
  inFlightPerEndpoint?: number;
}

export interface CreatedEndpoint {
  id: string;
  url: string;
  secret: string;
  created_at: string;
}

export interface EndpointView {
  id: string;
  url: string;
  created_at: string;
  disabled: boolean;
  failing: boolean;
  last_delivery: { status: string; at: string; http_status: number | null } | null;
}

export interface AttemptView {
  id: string;
  attempt: number;
  status: WebhookAttemptsTable['status'];
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  at: string;
}

export interface DeliveryView {
  id: string;
  event: string;
  event_id: string;
  status: WebhookDeliveriesTable['status'];
  created_at: string;
  next_attempt_at: string | null;
  finished_at: string | null;
  last_error: string | null;
  attempts: AttemptView[];
}

export type RegisterResult =
  | { ok: true; endpoint: CreatedEndpoint }
  | { ok: false; kind: 'invalid_url'; reason: string }
  | { ok: false; kind: 'limit_reached' };

export type ReplayResult =
  | { ok: true; delivery: DeliveryView }
  | { ok: false; kind: 'not_found' }
  | { ok: false; kind: 'already_pending' }
  /** A disabled endpoint receives nothing: a replay would only end as failed. */
  | { ok: false; kind: 'disabled' };

export interface TestResult {
  delivered: boolean;
  status: number;
  error?: string;
  latency_ms: number;
}

/** A test event sent (whatever the receiver answered), or why none was sent. */
export type SendTestResult =
  | { ok: true; result: TestResult }
  | { ok: false; kind: 'not_found' }
  /** A disabled endpoint receives no events, test events included. */
  | { ok: false; kind: 'disabled' };

/** `whsec_` + base64 of 24 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The delivered body: the event's payload (a response envelope) spliced in verbatim. */
export function deliveryBody(event: string, createdAt: string, payloadJson: string): string {
  return `{"event":${JSON.stringify(event)},"created_at":${JSON.stringify(createdAt)},"data":${payloadJson}}`;
}

function isSuccess(response: WebhookResponse): boolean {
  return response.kind === 'response' && response.status >= 200 && response.status < 300;
}

function describeFailure(response: WebhookResponse): string {
  if (response.kind === 'error') return response.error;
  if (response.status >= 300 && response.status < 400) {
    return `The receiver answered HTTP ${response.status}; redirects are not followed.`;
  }
  return `The receiver answered HTTP ${response.status}.`;
}

export function createWebhooksService(deps: WebhooksDeps) {
  const { db, repository, clock, ids, dns, transport, allowPrivate, backoffMs, workerId } = deps;
  const timeoutMs = deps.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const maxAttempts = deps.maxAttempts ?? MAX_ATTEMPTS;
  const random = deps.random ?? Math.random;
  const leaseMs = deps.leaseMs ?? timeoutMs + 20_000;
  const inFlightPerEndpoint = deps.inFlightPerEndpoint ?? MAX_IN_FLIGHT_PER_ENDPOINT;
  const lookup = guardedLookup({ allowPrivate, dns }) as unknown as LookupFunction;

  /** Delay before the attempt after `attemptsMade` failed ones: exponential with ±20 % jitter. */
  function backoff(attemptsMade: number): number {
    const base = backoffMs * 2 ** (attemptsMade - 1);
    return Math.round(base * (0.8 + 0.4 * random()));
  }

  /** One signed POST; vets the URL and (at connect time) every address it resolves to. */
  async function send(
    rawUrl: string,
    secret: string,
    eventType: string,
    body: string,
    signal?: AbortSignal,
  ): Promise<{ deliveryId: string; startedAt: Date; response: WebhookResponse }> {
    const deliveryId = ids.uuid();
    const startedAt = clock.now();
    const refuse = (error: string) => ({
      deliveryId,
      startedAt,
      response: { kind: 'error', error, blocked: true, aborted: false, latencyMs: 0 } as const,
    });
    const syntax = checkUrlSyntax(rawUrl, allowPrivate);
    if (!syntax.ok) return refuse(`Refused: ${syntax.reason}`);
    if (isIP(syntax.hostname) && !allowPrivate && !isPublicAddress(syntax.hostname)) {
      return refuse(`Refused: ${syntax.hostname} is not a public address.`);
    }
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const response = await transport.send({
      url: syntax.url,
      headers: {
        'Content-Type': 'application/json',
        'Service-Event': eventType,
        'Service-Timestamp': String(timestamp),
        'Service-Signature': webhookSignature(secret, timestamp, body),
        'Service-Delivery-Id': deliveryId,
        'User-Agent': 'openvat-webhooks/1',
      },
      body,
      timeoutMs,
      lookup,
      ...(signal ? { signal } : {}),
    });
    return { deliveryId, startedAt, response };
  }

  async function view(row: {
    id: string;
    url: string;
    created_at: string;
    disabled: number;
  }): Promise<EndpointView> {
    const [last, lastFinished] = await Promise.all([
      repository.lastAttempt(row.id),
      repository.lastFinishedStatus(row.id),
    ]);
    return {
      id: row.id,
      url: row.url,
      created_at: row.created_at,
      disabled: row.disabled === 1,
      failing: lastFinished === 'failed',
      last_delivery: last
        ? { status: last.status, at: last.created_at, http_status: last.http_status }
        : null,
    };
  }

  function attemptView(a: WebhookAttemptsTable): AttemptView {
    return {
      id: a.id,
      attempt: a.attempt,
      status: a.status,
      http_status: a.http_status,
      latency_ms: a.latency_ms,
      error: a.error,
      at: a.created_at,
    };
  }

  async function deliveryViews(
    rows: Pick<
      WebhookDeliveriesTable,
      | 'id'
      | 'event_id'
      | 'event_type'
      | 'status'
      | 'next_attempt_at'
      | 'finished_at'
      | 'last_error'
      | 'created_at'
    >[],
  ): Promise<DeliveryView[]> {
    const attempts = await repository.attemptsOf(rows.map((r) => r.id));
    return rows.map((r) => ({
      id: r.id,
      event: r.event_type,
      event_id: r.event_id,
      status: r.status,
      created_at: r.created_at,
      next_attempt_at: r.status === 'pending' ? r.next_attempt_at : null,
      finished_at: r.finished_at,
      last_error: r.last_error,
      attempts: attempts.filter((a) => a.delivery_id === r.id).map(attemptView),
    }));
  }

  return {
    async register(principal: ApiKeyPrincipal, url: string): Promise<RegisterResult> {
      const check = await checkWebhookUrl(url, { allowPrivate, dns });
      if (!check.ok) return { ok: false, kind: 'invalid_url', reason: check.reason };
      const endpoint: CreatedEndpoint = {
        id: ids.uuid(),
        url,
        secret: generateSecret(),
        created_at: clock.now().toISOString(),
      };
      const created = await db.transaction().execute(async (trx) => {
        await repository.lockKey(principal.id, trx);
        if ((await repository.countEndpoints(principal.id, trx)) >= MAX_ENDPOINTS_PER_KEY) return false;
        await repository.insertEndpoint(
          { ...endpoint, key_id: principal.id, account_id: principal.accountId, disabled: 0 },
          trx,
        );
        return true;
      });
      return created ? { ok: true, endpoint } : { ok: false, kind: 'limit_reached' };
    },

    async list(principal: ApiKeyPrincipal): Promise<EndpointView[]> {
      const rows = await repository.listEndpoints(principal.id);
      return Promise.all(rows.map(view));
    },

    async remove(principal: ApiKeyPrincipal, id: string): Promise<boolean> {
      return db.transaction().execute((trx) => repository.deleteEndpoint(principal.id, id, trx));
    },

    async setDisabled(
      principal: ApiKeyPrincipal,
      id: string,
      disabled: boolean,
    ): Promise<EndpointView | null> {
      if (!(await repository.setDisabled(principal.id, id, disabled))) return null;
      const row = await repository.findEndpoint(principal.id, id);
      return row ? view(row) : null;
    },

    /** Sends a `test` event to the endpoint now, outside the queue, unless it is disabled or not the key's. */
    async sendTest(principal: ApiKeyPrincipal, id: string, requestId: string): Promise<SendTestResult> {
      const endpoint = await repository.findEndpoint(principal.id, id);
      if (!endpoint) return { ok: false, kind: 'not_found' };
      if (endpoint.disabled === 1) return { ok: false, kind: 'disabled' };
      const now = clock.now().toISOString();
      const payload = JSON.stringify({
        data: {
          message: 'Test event from openvat: this endpoint is reachable and the signature can be verified.',
          webhook_id: endpoint.id,
          sent_at: now,
        },
        meta: { request_id: requestId },
      });
      const { response } = await send(
        endpoint.url,
        endpoint.secret,
        'test',
        deliveryBody('test', now, payload),
      );
      return {
        ok: true,
        result: {
          delivered: isSuccess(response),
          // 0 when no HTTP status came: the hosted contract types `status` as an integer.
          status: response.kind === 'response' ? response.status : 0,
          latency_ms: Math.round(response.latencyMs),
          ...(response.kind === 'error' ? { error: response.error } : {}),
        },
      };
    },

    async deliveries(principal: ApiKeyPrincipal, id: string, limit: number): Promise<DeliveryView[] | null> {
      const endpoint = await repository.findEndpoint(principal.id, id);
      if (!endpoint) return null;
      return deliveryViews(await repository.listDeliveries(endpoint.id, limit));
    },

    /** Puts a finished (failed or delivered) delivery back in the queue with a fresh budget of attempts. */
    async replay(principal: ApiKeyPrincipal, id: string, deliveryId: string): Promise<ReplayResult> {
      const endpoint = await repository.findEndpoint(principal.id, id);
      if (!endpoint) return { ok: false, kind: 'not_found' };
      const delivery = await repository.findDelivery(endpoint.id, deliveryId);
      if (!delivery) return { ok: false, kind: 'not_found' };
      if (endpoint.disabled === 1) return { ok: false, kind: 'disabled' };
      if (delivery.status === 'pending') return { ok: false, kind: 'already_pending' };
      await repository.requeue(delivery.id, {
        now: clock.now().toISOString(),
        maxAttempts: delivery.attempts + maxAttempts,
      });
      const fresh = await repository.findDelivery(endpoint.id, delivery.id);
      const [updated] = await deliveryViews(fresh ? [fresh] : []);
      if (!updated) return { ok: false, kind: 'not_found' };
      return { ok: true, delivery: updated };
    },

    /**
     * The event listener: one pending delivery per enabled endpoint of the event's key, written in the
     * caller's transaction. Returns how many were queued.
     */
    async enqueue(event: StoredEvent, trx: Kysely<Database>): Promise<number> {
      return this.enqueueMany([event], trx);
    },

    /**
     * The deliveries of several events (one look-up of their keys' endpoints, one insert), written in
     * the caller's transaction. Returns how many were queued.
     */
    async enqueueMany(events: readonly StoredEvent[], trx: Kysely<Database>): Promise<number> {
      if (events.length === 0) return 0;
      const endpoints = await repository.activeEndpointIdsByKey(
        [...new Set(events.map((e) => e.keyId))],
        trx,
      );
      if (endpoints.size === 0) return 0;
      const now = clock.now().toISOString();
      const rows: WebhookDeliveriesTable[] = events.flatMap((event) => {
        const endpointIds = endpoints.get(event.keyId) ?? [];
        const body = endpointIds.length ? deliveryBody(event.type, event.createdAt, event.payload) : '';
        return endpointIds.map((endpointId) => ({
          id: ids.uuid(),
          endpoint_id: endpointId,
          key_id: event.keyId,
          event_id: event.id,
          event_type: event.type,
          body,
          status: 'pending',
          attempts: 0,
          max_attempts: maxAttempts,
          next_attempt_at: now,
          locked_until: null,
          claimed_by: null,
          last_error: null,
          created_at: now,
          finished_at: null,
        }));
      });
      await repository.insertDeliveries(rows, trx);
      return rows.length;
    },

    /**
     * Claims up to `limit` due deliveries for this worker, oldest due first, at most
     * `inFlightPerEndpoint` in flight per endpoint counting every worker's unexpired leases: an
     * endpoint at its share is passed over and the slots go to other endpoints' deliveries.
     */
    async claimDue(limit: number): Promise<WebhookDeliveriesTable[]> {
      const now = clock.now();
      return repository.claimDue({
        now: now.toISOString(),
        leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
        workerId,
        limit,
        perEndpoint: inFlightPerEndpoint,
      });
    },

    /** Makes one attempt of a claimed delivery and records it; schedules a retry or finishes it. */
    async deliver(row: WebhookDeliveriesTable, signal?: AbortSignal): Promise<void> {
      const endpoint = await repository.endpointById(row.endpoint_id);
      if (!endpoint) return; // deleted with its deliveries
      if (endpoint.disabled === 1) {
        await repository.finishAttempt(row.id, workerId, {
          status: 'failed',
          attempts: row.attempts,
          next_attempt_at: null,
          last_error: 'The endpoint is disabled; nothing was sent.',
          finished_at: clock.now().toISOString(),
        });
        return;
      }
      const { deliveryId, startedAt, response } = await send(
        endpoint.url,
        endpoint.secret,
        row.event_type,
        row.body,
        signal,
      );
      if (response.kind === 'error' && response.aborted) {
        await repository.release(row.id, workerId);
        return;
      }
      const attempt = row.attempts + 1;
      const ok = isSuccess(response);
      const error = ok ? null : describeFailure(response);
      const finishedAt = clock.now();
      let update: DeliveryUpdate;
      if (ok) {
        update = {
          status: 'delivered',
          attempts: attempt,
          next_attempt_at: null,
          last_error: null,
          finished_at: finishedAt.toISOString(),
        };
      } else if (attempt >= row.max_attempts) {
        update = {
          status: 'failed',
          attempts: attempt,
          next_attempt_at: null,
          last_error: error,
          finished_at: finishedAt.toISOString(),
        };
      } else {
        update = {
          status: 'pending',
          attempts: attempt,
          // The backoff counts the attempts of the current budget: a replay (which raises
          // max_attempts to the attempts made plus a fresh budget) starts again at the base delay.
          next_attempt_at: new Date(
            finishedAt.getTime() + backoff(Math.max(1, attempt - (row.max_attempts - maxAttempts))),
          ).toISOString(),
          last_error: error,
          finished_at: null,
        };
      }
      deps.observer?.webhookAttempt(ok ? 'delivered' : update.status === 'failed' ? 'failed' : 'retry');
      await db.transaction().execute(async (trx) => {
        await repository.insertAttempt(
          {
            id: deliveryId,
            delivery_id: row.id,
            endpoint_id: row.endpoint_id,
            attempt,
            status: ok ? 'succeeded' : 'failed',
            http_status: response.kind === 'response' ? response.status : null,
            latency_ms: response.latencyMs,
            error,
            created_at: startedAt.toISOString(),
          },
          trx,
        );
        await repository.finishAttempt(row.id, workerId, update, trx);
      });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
