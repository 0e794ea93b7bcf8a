import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { MetricsObserver } from '../metrics/index.js';
import {
  createDeliveries,
  MAX_ATTEMPTS,
  MAX_IN_FLIGHT_PER_ENDPOINT,
  MAX_IN_FLIGHT_PER_KEY,
} from './deliveries.js';
import { createEndpoints } from './endpoints.js';
import type { WebhooksRepository } from './repository.js';
import { ATTEMPT_TIMEOUT_MS, createSender } from './sender.js';
import type { WebhookTransport } from './transport.js';
import type { DnsResolver } from './url-guard.js';

export { MAX_ATTEMPTS, MAX_IN_FLIGHT_PER_ENDPOINT, MAX_IN_FLIGHT_PER_KEY } from './deliveries.js';
export type {
  AttemptView,
  CreatedEndpoint,
  DeliveryView,
  EndpointView,
  RegisterResult,
  ReplayResult,
  SendTestResult,
  TestResult,
} from './endpoints.js';
export { deliveryNotFound, endpointNotFound, generateSecret, MAX_ENDPOINTS_PER_KEY } from './endpoints.js';
export { ATTEMPT_TIMEOUT_MS, deliveryBody } from './sender.js';

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
  /** Deliveries in flight for one key at a time, across its endpoints (default `MAX_IN_FLIGHT_PER_KEY`). */
  inFlightPerKey?: number;
}

/**
 * Signed webhooks: a key's endpoints (`endpoints.ts`), the delivery queue and its attempts
 * (`deliveries.ts`), both sending through one signing sender (`sender.ts`).
 */
export function createWebhooksService(deps: WebhooksDeps) {
  const timeoutMs = deps.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const maxAttempts = deps.maxAttempts ?? MAX_ATTEMPTS;
  const send = createSender({
    clock: deps.clock,
    ids: deps.ids,
    dns: deps.dns,
    transport: deps.transport,
    allowPrivate: deps.allowPrivate,
    timeoutMs,
  });
  const endpoints = createEndpoints({
    db: deps.db,
    repository: deps.repository,
    clock: deps.clock,
    ids: deps.ids,
    dns: deps.dns,
    allowPrivate: deps.allowPrivate,
    send,
    maxAttempts,
  });
  const deliveries = createDeliveries({
    db: deps.db,
    repository: deps.repository,
    clock: deps.clock,
    ids: deps.ids,
    send,
    backoffMs: deps.backoffMs,
    maxAttempts,
    random: deps.random ?? Math.random,
    workerId: deps.workerId,
    leaseMs: deps.leaseMs ?? timeoutMs + 20_000,
    inFlightPerEndpoint: deps.inFlightPerEndpoint ?? MAX_IN_FLIGHT_PER_ENDPOINT,
    inFlightPerKey: deps.inFlightPerKey ?? MAX_IN_FLIGHT_PER_KEY,
    ...(deps.observer ? { observer: deps.observer } : {}),
  });
  return { ...endpoints, ...deliveries };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
