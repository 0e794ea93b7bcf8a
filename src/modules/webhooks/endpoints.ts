import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
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

/** An endpoint registered, or refused: an invalid URL, or the key at its number of endpoints. */
export type RegisterResult = { kind: 'ok'; endpoint: CreatedEndpoint } | Refusal;

/**
 * A delivery queued again, or refused: not found, still queued, or of a disabled endpoint (which
 * receives nothing: a replay would only end as failed).
 */
export type ReplayResult = { kind: 'ok'; delivery: DeliveryView } | Refusal;

export interface TestResult {
  delivered: boolean;
  status: number;
  error?: string;
  latency_ms: number;
}

/**
 * A test event sent (whatever the receiver answered), or why none was sent: not found, or a disabled
 * endpoint (which receives no events, test events included).
 */
export type SendTestResult = { kind: 'ok'; result: TestResult } | Refusal;

/** The refusal of an endpoint id this key has no endpoint of. */
export function endpointNotFound(): Refusal {
  return refusal('not_found', 'No webhook endpoint with this id for this key.');
}

/** The refusal of a delivery this key has none of. */
export function deliveryNotFound(): Refusal {
  return refusal('not_found', 'No such delivery for this key.');
}

/** A disabled endpoint's refusal: it receives nothing, `what` included, until enabled again. */
function endpointDisabled(id: string, what: string, then: string): Refusal {
  return refusal(
    'webhook_disabled',
    `This webhook endpoint is disabled, and a disabled endpoint receives no events, ${what}. Enable it with PATCH /v1/webhooks/${id} and the body {"disabled": false}, then ${then} again.`,
    { reason: 'endpoint_disabled' },
  );
}

function tooManyEndpoints(): Refusal {
  return refusal(
    'webhook_limit_reached',
    `This key already has the maximum of ${MAX_ENDPOINTS_PER_KEY} webhook endpoints per key. List them with GET /v1/webhooks, delete one with DELETE /v1/webhooks/{id}, then register again.`,
    { max_endpoints: MAX_ENDPOINTS_PER_KEY },
  );
}

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

  /** Registers an endpoint; `events` (already checked) is what it subscribes to, the default events when absent. */
  async function register(
    principal: ApiKeyPrincipal,
    url: string,
    events?: readonly string[],
  ): Promise<RegisterResult> {
    const check = await checkWebhookUrl(url, { allowPrivate, dns });
    if (!check.ok) return refusal('invalid_format', `Invalid webhook url: ${check.reason}`);
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
    return created ? { kind: 'ok', endpoint } : tooManyEndpoints();
  }

  async function list(principal: ApiKeyPrincipal): Promise<EndpointView[]> {
    const rows = await repository.listEndpoints(principal.id);
    return Promise.all(rows.map(view));
  }

  /** Deletes an endpoint with its deliveries; refused (`not_found`) when the key has no such endpoint. */
  async function remove(principal: ApiKeyPrincipal, id: string): Promise<{ kind: 'ok' } | Refusal> {
    const removed = await db.transaction().execute((trx) => repository.deleteEndpoint(principal.id, id, trx));
    return removed ? { kind: 'ok' } : endpointNotFound();
  }

  /**
   * Disables or enables an endpoint, or changes the events it subscribes to (`null`: back to the
   * default events); refused (`not_found`) when the key has no such endpoint.
   */
  async function update(
    principal: ApiKeyPrincipal,
    id: string,
    changes: { disabled?: boolean; events?: readonly string[] | null },
  ): Promise<{ kind: 'ok'; endpoint: EndpointView } | Refusal> {
    const set = {
      ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
      ...(changes.events !== undefined ? { events: storedEvents(changes.events) } : {}),
    };
    if (!(await repository.updateEndpoint(principal.id, id, set))) return endpointNotFound();
    const row = await repository.findEndpoint(principal.id, id);
    return row ? { kind: 'ok', endpoint: await view(row) } : endpointNotFound();
  }

  /** Sends a `test` event to the endpoint now, outside the queue, unless it is disabled or not the key's. */
  async function sendTest(
    principal: ApiKeyPrincipal,
    id: string,
    requestId: string,
  ): Promise<SendTestResult> {
    const endpoint = await repository.findEndpoint(principal.id, id);
    if (!endpoint) return endpointNotFound();
    if (endpoint.disabled === 1) return endpointDisabled(id, 'test events included', 'send the test');
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
      kind: 'ok',
      result: {
        delivered: isSuccess(response),
        // 0 when no HTTP status came: the hosted contract types `status` as an integer.
        status: response.kind === 'response' ? response.status : 0,
        latency_ms: Math.round(response.latencyMs),
        ...(response.kind === 'error' ? { error: response.error } : {}),
      },
    };
  }

  /** An endpoint's latest deliveries with their attempts; refused (`not_found`) when not the key's. */
  async function deliveries(
    principal: ApiKeyPrincipal,
    id: string,
    limit: number,
  ): Promise<{ kind: 'ok'; deliveries: DeliveryView[] } | Refusal> {
    const endpoint = await repository.findEndpoint(principal.id, id);
    if (!endpoint) return endpointNotFound();
    return {
      kind: 'ok',
      deliveries: await deliveryViews(await repository.listDeliveries(endpoint.id, limit)),
    };
  }

  /** Puts a finished (failed or delivered) delivery back in the queue with a fresh budget of attempts. */
  async function replay(principal: ApiKeyPrincipal, id: string, deliveryId: string): Promise<ReplayResult> {
    const endpoint = await repository.findEndpoint(principal.id, id);
    if (!endpoint) return deliveryNotFound();
    const delivery = await repository.findDelivery(endpoint.id, deliveryId);
    if (!delivery) return deliveryNotFound();
    if (endpoint.disabled === 1) return endpointDisabled(id, 'replays included', 'replay the delivery');
    if (delivery.status === 'pending')
      return refusal(
        'invalid_format',
        'This delivery is still queued; only finished deliveries can be replayed.',
      );
    await repository.requeue(delivery.id, {
      now: clock.now().toISOString(),
      maxAttempts: delivery.attempts + maxAttempts,
    });
    const fresh = await repository.findDelivery(endpoint.id, delivery.id);
    const [updated] = await deliveryViews(fresh ? [fresh] : []);
    if (!updated) return deliveryNotFound();
    return { kind: 'ok', delivery: updated };
  }

  return { register, list, remove, update, sendTest, deliveries, replay };
}

export type Endpoints = ReturnType<typeof createEndpoints>;
