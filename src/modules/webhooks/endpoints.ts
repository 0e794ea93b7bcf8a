import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { WebhooksRepository } from './repository.js';
import { deliveryBody, isSuccess, type Send } from './sender.js';
import { eventsOf, storedEvents } from './subscriptions.js';
import { checkWebhookUrl, type DnsResolver } from './url-guard.js';

/** Endpoints per API key (spec §8); disabled endpoints count until deleted. */
export const MAX_ENDPOINTS_PER_KEY = 5;

export interface CreatedEndpoint {
  id: string;
  url: string;
  secret: string;
  created_at: string;
  /** Present when the registration named the events it subscribes to. */
  events?: string[];
}

export interface EndpointView {
  id: string;
  url: string;
  created_at: string;
  /** The events it receives; null = the default events of its key. */
  events: string[] | null;
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

/**
 * A key's webhook endpoints: registering (at most `MAX_ENDPOINTS_PER_KEY`), listing, disabling and
 * deleting them, a test event, and their deliveries with their attempts and replays.
 */
export function createEndpoints(deps: {
  db: Kysely<Database>;
  repository: WebhooksRepository;
  clock: Clock;
  ids: IdGenerator;
  dns: DnsResolver;
  allowPrivate: boolean;
  send: Send;
  /** Attempts a replay adds to a delivery's budget. */
  maxAttempts: number;
}) {
  const { db, repository, clock, ids, dns, allowPrivate, send, maxAttempts } = deps;

  async function view(row: {
    id: string;
    url: string;
    created_at: string;
    disabled: number;
    events: string | null;
  }): Promise<EndpointView> {
    const [last, lastFinished] = await Promise.all([
      repository.lastAttempt(row.id),
      repository.lastFinishedStatus(row.id),
    ]);
    return {
      id: row.id,
      url: row.url,
      created_at: row.created_at,
      events: eventsOf(row.events),
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
    /** Registers an endpoint; `events` (already checked) is what it subscribes to, the default events when absent. */
    async register(
      principal: ApiKeyPrincipal,
      url: string,
      events?: readonly string[],
    ): Promise<RegisterResult> {
      const check = await checkWebhookUrl(url, { allowPrivate, dns });
      if (!check.ok) return { ok: false, kind: 'invalid_url', reason: check.reason };
      const stored = storedEvents(events);
      const endpoint: CreatedEndpoint = {
        id: ids.uuid(),
        url,
        secret: generateSecret(),
        created_at: clock.now().toISOString(),
        ...(stored !== null ? { events: eventsOf(stored) as string[] } : {}),
      };
      const created = await db.transaction().execute(async (trx) => {
        await repository.lockKey(principal.id, trx);
        if ((await repository.countEndpoints(principal.id, trx)) >= MAX_ENDPOINTS_PER_KEY) return false;
        await repository.insertEndpoint(
          {
            id: endpoint.id,
            url: endpoint.url,
            secret: endpoint.secret,
            created_at: endpoint.created_at,
            key_id: principal.id,
            account_id: principal.accountId,
            disabled: 0,
            events: stored,
          },
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

    /**
     * Disables or enables an endpoint, or changes the events it subscribes to (`null`: back to the
     * default events); null when the key has no such endpoint.
     */
    async update(
      principal: ApiKeyPrincipal,
      id: string,
      changes: { disabled?: boolean; events?: readonly string[] | null },
    ): Promise<EndpointView | null> {
      const set = {
        ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
        ...(changes.events !== undefined ? { events: storedEvents(changes.events) } : {}),
      };
      if (!(await repository.updateEndpoint(principal.id, id, set))) return null;
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
  };
}

export type Endpoints = ReturnType<typeof createEndpoints>;
