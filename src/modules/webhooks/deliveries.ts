import type { Kysely } from 'kysely';
import type { Database, WebhookDeliveriesTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { BroadcastEvent, StoredEvent } from '../events/index.js';
import type { MetricsObserver } from '../metrics/index.js';
import type { DeliveryUpdate, WebhooksRepository } from './repository.js';
import { deliveryBody, describeFailure, isSuccess, type Send } from './sender.js';
import { receives } from './subscriptions.js';

/** Attempts per delivery: the first plus 3 retries (spec §8). */
export const MAX_ATTEMPTS = 4;
/**
 * Deliveries in flight to one endpoint at a time, across every worker and instance. The delivery
 * slots are shared by every key: without a bound, one endpoint that hangs until the attempt timeout
 * (or is just slow) and has a long queue, such as a batch job's thousands of `validation.completed`
 * events, would hold every slot and hold up every other key's webhooks. Four keeps a healthy
 * receiver busy (about 4 deliveries per round trip) while a stuck one holds at most 4 of a
 * worker's 32 slots; the rest go to other endpoints.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4;
/**
 * Deliveries in flight for one key at a time, across all its endpoints (it may have 5), every worker
 * and every instance. Without it, a key whose receivers all hang holds 5 × 4 = 20 slots, and four such
 * keys more than a worker's 32: every other key's webhooks waited for their attempts to time out.
 * With 6, four such keys hold 24 of a worker's slots and the rest go to other keys; and since the
 * claim serves the key with the fewest deliveries in flight first, a slot that frees goes to a
 * waiting key before a key that already has some in flight.
 */
export const MAX_IN_FLIGHT_PER_KEY = 6;

/**
 * The delivery queue: a delivery per enabled endpoint of an event's key, written with the event;
 * claims under a lease, each endpoint and each key with at most its share in flight; one attempt at a time, with
 * retries after an exponential backoff.
 */
export function createDeliveries(deps: {
  db: Kysely<Database>;
  repository: WebhooksRepository;
  clock: Clock;
  ids: IdGenerator;
  send: Send;
  /** Base of the exponential backoff: the n-th retry waits about `backoffMs × 2^(n-1)`. */
  backoffMs: number;
  maxAttempts: number;
  /** Source of jitter in [0, 1). */
  random: () => number;
  /** Identifies this process's worker in `claimed_by`. */
  workerId: string;
  /** How long a claim lasts; must exceed the attempt timeout. */
  leaseMs: number;
  /** Deliveries in flight to one endpoint at a time. */
  inFlightPerEndpoint: number;
  /** Deliveries in flight for one key at a time, across its endpoints. */
  inFlightPerKey: number;
  /** Told of every delivery attempt's outcome (metrics). */
  observer?: Pick<MetricsObserver, 'webhookAttempt'>;
}) {
  const { db, repository, clock, ids, send, backoffMs, maxAttempts, random, workerId, leaseMs } = deps;
  const { inFlightPerEndpoint, inFlightPerKey } = deps;

  /** Delay before the attempt after `attemptsMade` failed ones: exponential with ±20 % jitter. */
  function backoff(attemptsMade: number): number {
    const base = backoffMs * 2 ** (attemptsMade - 1);
    return Math.round(base * (0.8 + 0.4 * random()));
  }

  function pending(
    endpointId: string,
    keyId: string,
    eventId: string,
    eventType: string,
    body: string,
    now: string,
  ): WebhookDeliveriesTable {
    return {
      id: ids.uuid(),
      endpoint_id: endpointId,
      key_id: keyId,
      event_id: eventId,
      event_type: eventType,
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
    };
  }

  /**
   * The event listener: one pending delivery per enabled endpoint of the event's key that receives
   * its type, written in the caller's transaction. Returns how many were queued.
   */
  async function enqueue(event: StoredEvent, trx: Kysely<Database>): Promise<number> {
    return enqueueMany([event], trx);
  }

  /**
   * The deliveries of several events (one look-up of their keys' endpoints, one insert), written in
   * the caller's transaction. Returns how many were queued.
   */
  async function enqueueMany(events: readonly StoredEvent[], trx: Kysely<Database>): Promise<number> {
    if (events.length === 0) return 0;
    const endpoints = await repository.activeEndpointsByKey([...new Set(events.map((e) => e.keyId))], trx);
    if (endpoints.size === 0) return 0;
    const now = clock.now().toISOString();
    const rows: WebhookDeliveriesTable[] = events.flatMap((event) => {
      const targets = (endpoints.get(event.keyId) ?? []).filter((e) => receives(e.events, event.type));
      const body = targets.length ? deliveryBody(event.type, event.createdAt, event.payload) : '';
      return targets.map((endpoint) => pending(endpoint.id, event.keyId, event.id, event.type, body, now));
    });
    await repository.insertDeliveries(rows, trx);
    return rows.length;
  }

  /**
   * The deliveries of events no key caused: one per enabled endpoint, of any key, that subscribes
   * to the event's type, written in the caller's transaction. Returns how many were queued.
   */
  async function enqueueBroadcasts(
    events: readonly BroadcastEvent[],
    trx: Kysely<Database>,
  ): Promise<number> {
    if (events.length === 0) return 0;
    const now = clock.now().toISOString();
    const rows: WebhookDeliveriesTable[] = [];
    for (const type of new Set(events.map((e) => e.type))) {
      const targets = (await repository.subscribedEndpoints(type, now, trx)).filter((e) =>
        receives(e.events, type),
      );
      for (const event of events.filter((e) => e.type === type)) {
        const body = deliveryBody(event.type, event.createdAt, event.payload);
        for (const endpoint of targets)
          rows.push(pending(endpoint.id, endpoint.key_id, event.id, event.type, body, now));
      }
    }
    await repository.insertDeliveries(rows, trx);
    return rows.length;
  }

  /**
   * Claims up to `limit` due deliveries for this worker, at most `inFlightPerEndpoint` in flight per
   * endpoint and `inFlightPerKey` per key, counting every worker's unexpired leases: an endpoint or
   * a key at its share is passed over and the slots go to others. Keys take turns (the one with the
   * fewest in flight first), then a key's endpoints, then the oldest due.
   */
  async function claimDue(limit: number): Promise<WebhookDeliveriesTable[]> {
    const now = clock.now();
    return repository.claimDue({
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
      workerId,
      limit,
      perEndpoint: inFlightPerEndpoint,
      perKey: inFlightPerKey,
    });
  }

  /** Makes one attempt of a claimed delivery and records it; schedules a retry or finishes it. */
  async function deliver(row: WebhookDeliveriesTable, signal?: AbortSignal): Promise<void> {
    const endpoint = await repository.endpointById(row.endpoint_id);
    if (!endpoint) return; // deleted with its deliveries
    if (endpoint.disabled === 1) return failDisabled(row);
    const sent = await send(endpoint.url, endpoint.secret, row.event_type, row.body, signal);
    if (sent.response.kind === 'error' && sent.response.aborted) {
      await repository.release(row.id, workerId);
      return;
    }
    const ok = isSuccess(sent.response);
    const update = afterAttempt(row, ok ? null : describeFailure(sent.response));
    deps.observer?.webhookAttempt(ok ? 'delivered' : update.status === 'failed' ? 'failed' : 'retry');
    await recordAttempt(row, sent, update);
  }

  /** Ends a delivery to a disabled endpoint as failed, without sending it. */
  async function failDisabled(row: WebhookDeliveriesTable): Promise<void> {
    await repository.finishAttempt(row.id, workerId, {
      status: 'failed',
      attempts: row.attempts,
      next_attempt_at: null,
      last_error: 'The endpoint is disabled; nothing was sent.',
      finished_at: clock.now().toISOString(),
    });
  }

  /**
   * A delivery after one more attempt (`error` null when it succeeded): delivered, failed once its
   * attempts are spent, or pending until its retry after the backoff.
   */
  function afterAttempt(row: WebhookDeliveriesTable, error: string | null): DeliveryUpdate {
    const attempts = row.attempts + 1;
    const finishedAt = clock.now();
    if (error === null)
      return {
        status: 'delivered',
        attempts,
        next_attempt_at: null,
        last_error: null,
        finished_at: finishedAt.toISOString(),
      };
    if (attempts >= row.max_attempts)
      return {
        status: 'failed',
        attempts,
        next_attempt_at: null,
        last_error: error,
        finished_at: finishedAt.toISOString(),
      };
    return {
      status: 'pending',
      attempts,
      // The backoff counts the attempts of the current budget: a replay (which raises
      // max_attempts to the attempts made plus a fresh budget) starts again at the base delay.
      next_attempt_at: new Date(
        finishedAt.getTime() + backoff(Math.max(1, attempts - (row.max_attempts - maxAttempts))),
      ).toISOString(),
      last_error: error,
      finished_at: null,
    };
  }

  /** The attempt's row and the delivery's new state, in one transaction. */
  async function recordAttempt(
    row: WebhookDeliveriesTable,
    sent: Awaited<ReturnType<Send>>,
    update: DeliveryUpdate,
  ): Promise<void> {
    const { deliveryId, startedAt, response } = sent;
    await db.transaction().execute(async (trx) => {
      await repository.insertAttempt(
        {
          id: deliveryId,
          delivery_id: row.id,
          endpoint_id: row.endpoint_id,
          attempt: update.attempts,
          status: update.status === 'delivered' ? 'succeeded' : 'failed',
          http_status: response.kind === 'response' ? response.status : null,
          latency_ms: response.latencyMs,
          error: update.last_error,
          created_at: startedAt.toISOString(),
        },
        trx,
      );
      await repository.finishAttempt(row.id, workerId, update, trx);
    });
  }

  return { enqueue, enqueueMany, enqueueBroadcasts, claimDue, deliver };
}

export type Deliveries = ReturnType<typeof createDeliveries>;
