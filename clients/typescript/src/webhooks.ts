/**
 * Verifying webhook deliveries on the receiving side, with the Web Crypto API only (Node 20+, Bun,
 * Deno, edge runtimes).
 *
 * `Service-Signature: sha256=<hex>` is the lowercase hex HMAC-SHA256 of `{Service-Timestamp}.{raw body}`,
 * keyed with the UTF-8 bytes of the whole secret string, `whsec_` prefix included. Several
 * space-separated signatures are accepted (a sender signing with two secrets during a rotation).
 */
import type {
  BatchJobResponse,
  MonitorCheckResponse,
  PeppolData,
  ValidateBatchResponse,
  ValidateResponse,
} from './types.js';

interface EventBase<E extends string, D> {
  event: E;
  /** When the event happened (ISO 8601). */
  created_at: string;
  /** The API answer exactly as the caller received it. Deduplicate retries on `data.meta.request_id`. */
  data: D;
}

/** A live validation answered (`GET /v1/validate`). */
export type ValidationCompletedEvent = EventBase<'validation.completed', ValidateResponse>;
/**
 * A live batch completed: a batch job (`data.data` is the job, with `id`, `status`, `summary` and
 * `results`) or a synchronous `POST /v1/validate/batch` (`data` is its answer: `data.data` has
 * `summary` and `results`, `data.meta` has `sources`). Tell them apart with `isBatchJobEvent(event)`.
 */
export type BatchCompletedEvent = BatchJobCompletedEvent | BatchSyncCompletedEvent;
/** `batch.completed` of a batch job (`POST /v1/validate/batch` with `async: true`). */
export type BatchJobCompletedEvent = EventBase<'batch.completed', BatchJobResponse>;
/** `batch.completed` of a synchronous `POST /v1/validate/batch`: its answer exactly. */
export type BatchSyncCompletedEvent = EventBase<'batch.completed', ValidateBatchResponse>;
/** `POST /v1/webhooks/{id}/test`: a signed test event, sent at once. */
export type TestEvent = EventBase<
  'test',
  { data: { message: string; webhook_id: string; sent_at: string }; meta: { request_id: string } }
>;
/**
 * Monitoring events carry the check as `data.data` (the monitor, the check and its changes, as
 * `POST /v1/monitors/{id}/check` answers it) and only `request_id` in `data.meta`.
 */
export interface MonitorEventPayload {
  data: MonitorCheckResponse['data'];
  meta: { request_id: string };
}
/** A monitored number changed (`data.data.changes`: became invalid or valid, name or address changed). */
export type VatNumberChangedEvent = EventBase<'vat_number.changed', MonitorEventPayload>;
/** A monitored number could not be checked for longer than the stale period (sent once). */
export type VatNumberCheckFailedEvent = EventBase<'vat_number.check_failed', MonitorEventPayload>;
/** A monitor's Peppol state: what `peppol.changed` compares. */
export interface PeppolStateShown {
  reachable: boolean;
  can_receive_invoices: boolean | null;
}
/**
 * A monitor with `peppol: true` saw `reachable` or `can_receive_invoices` change: `data.data` is the
 * check (as `vat_number.changed` carries it) with `peppol: { before, after, answer }`, `answer`
 * being the Peppol look-up's data. A Peppol outage is never a change.
 */
export type PeppolChangedEvent = EventBase<
  'peppol.changed',
  {
    data: MonitorCheckResponse['data'] & {
      peppol: { before: PeppolStateShown; after: PeppolStateShown; answer: PeppolData };
    };
    meta: { request_id: string };
  }
>;
/** The four rate fields of a country rate object. */
export interface RatesShown {
  standard_rate: number;
  reduced_rates: number[];
  super_reduced_rate: number | null;
  parking_rate: number | null;
}
/**
 * The VAT rates of a country change: `announced` when a change ahead is learnt (or accepted by an
 * operator), `in_force` from the start of its first day in the country's time zone. Sent only to
 * endpoints whose `events` list it, once per change; `data.meta.request_id` is
 * the event's id (no request causes it): deduplicate retries on it, as for every event.
 */
export type RatesChangedEvent = EventBase<
  'rates.changed',
  {
    data: {
      country_code: string;
      country_name: string;
      status: 'announced' | 'in_force';
      effective_from: string;
      time_zone: string;
      before: RatesShown;
      after: RatesShown;
      source: 'tedb' | 'curated' | 'override';
      data_version: string;
    };
    meta: { request_id: string };
  }
>;
/**
 * True for the `batch.completed` of a batch job (its `data.data` is the job, with `id`), false for
 * that of a synchronous `validateBatch`; narrows the whole event either way.
 */
export function isBatchJobEvent(event: BatchCompletedEvent): event is BatchJobCompletedEvent {
  return 'id' in event.data.data;
}

export type WebhookEvent =
  | ValidationCompletedEvent
  | BatchCompletedEvent
  | TestEvent
  | VatNumberChangedEvent
  | VatNumberCheckFailedEvent
  | PeppolChangedEvent
  | RatesChangedEvent;

/** Node's `IncomingHttpHeaders`, a plain record, or a fetch `Headers`. */
export type HeadersLike =
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `Service-Timestamp` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time (default: now). */
  now?: Date;
}

export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'invalid_signature'
  | 'invalid_body';

/** The delivery is not a genuine, recent one: answer it with a 400 and ignore it. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

function header(headers: HeadersLike, name: string): string | null {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name);
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

const encoder = new TextEncoder();

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/** Hex to bytes; null when the text is not an even number of hex digits. */
function hexBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(hex)) return null;
  const out = new Uint8Array(new ArrayBuffer(hex.length / 2));
  for (let i = 0; i < out.length; i += 1) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * Checks a delivery and returns its parsed event. The signature is checked by Web Crypto's
 * `subtle.verify` (a constant-time comparison) and `Service-Timestamp` must be within
 * `toleranceSeconds` of now in either direction, so an old, validly signed delivery replayed later
 * is refused. Pass the body exactly as received, before any JSON parsing.
 *
 * Rejects with a `WebhookVerificationError` whose `reason` says what failed.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const tolerance = options.toleranceSeconds ?? 300;
  const timestamp = header(headers, 'service-timestamp')?.trim();
  const signature = header(headers, 'service-signature')?.trim();
  if (!timestamp || !signature) {
    throw new WebhookVerificationError(
      'missing_header',
      'The Service-Timestamp or Service-Signature header is missing.',
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      'Service-Timestamp is not a Unix time in seconds.',
    );
  }
  const seconds = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (now - seconds > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `Service-Timestamp is more than ${tolerance} seconds old.`,
    );
  }
  if (seconds - now > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_in_future',
      `Service-Timestamp is more than ${tolerance} seconds ahead.`,
    );
  }

  const body = bytesOf(rawBody);
  const prefix = encoder.encode(`${timestamp}.`);
  const signed = new Uint8Array(new ArrayBuffer(prefix.length + body.length));
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  let matched = false;
  for (const candidate of signature.split(/\s+/)) {
    const bytes = candidate.startsWith('sha256=') ? hexBytes(candidate.slice(7)) : null;
    if (bytes && bytes.length === 32 && (await crypto.subtle.verify('HMAC', key, bytes, signed)))
      matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'invalid_signature',
      'Service-Signature does not match the body and timestamp for this secret.',
    );
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The body is not UTF-8 JSON.');
  }
  if (!parsed || typeof parsed !== 'object' || typeof (parsed as { event?: unknown }).event !== 'string') {
    throw new WebhookVerificationError('invalid_body', 'The body is not a webhook event.');
  }
  return parsed as WebhookEvent;
}
