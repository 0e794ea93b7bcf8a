/**
 * Verifying openvat webhook deliveries on the receiving side, with `node:crypto` (the service's own
 * tests use it). Receivers use `verifyWebhook` of `@openvat/client` (clients/typescript/), which
 * checks the same signature with Web Crypto.
 *
 * Signature: `Service-Signature: sha256=<hex>` where `<hex>` is the lowercase hex HMAC-SHA256 of the
 * string `{Service-Timestamp}.{raw body}`, keyed with the UTF-8 bytes of the whole secret string,
 * `whsec_` prefix included.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface WebhookEvent {
  event: string;
  created_at: string;
  data: unknown;
}

export type VerifyResult =
  | { ok: true; event: WebhookEvent }
  | {
      ok: false;
      reason:
        | 'missing_header'
        | 'invalid_timestamp'
        | 'timestamp_too_old'
        | 'timestamp_in_future'
        | 'invalid_signature'
        | 'invalid_body';
    };

/** Headers as Node gives them (`IncomingHttpHeaders`), a plain record, or a fetch `Headers`. */
export type HeadersLike =
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

export interface VerifyOptions {
  /** The endpoint's `whsec_…` secret, exactly as returned at registration. */
  secret: string;
  headers: HeadersLike;
  /** The body exactly as received, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** Current time (default: now). */
  now?: Date;
  /** Largest accepted distance between `Service-Timestamp` and now, in seconds (default 300). */
  toleranceSeconds?: number;
}

/** `sha256=<lowercase hex HMAC-SHA256 of "{timestamp}.{body}" keyed with the whole secret string>`. */
export function webhookSignature(
  secret: string,
  timestamp: number | string,
  body: string | Uint8Array,
): string {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${timestamp}.`);
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `sha256=${hmac.digest('hex')}`;
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

/**
 * Checks a delivery: the `Service-Signature` must match (compared in constant time) and
 * `Service-Timestamp` must be within `toleranceSeconds` of now in either direction (replays of an
 * old, validly signed delivery are refused). On success returns the parsed body.
 */
export function verifyWebhook(options: VerifyOptions): VerifyResult {
  const tolerance = options.toleranceSeconds ?? 300;
  const timestamp = header(options.headers, 'service-timestamp');
  const signature = header(options.headers, 'service-signature');
  if (!timestamp || !signature) return { ok: false, reason: 'missing_header' };
  if (!/^\d{1,12}$/.test(timestamp.trim())) return { ok: false, reason: 'invalid_timestamp' };
  const seconds = Number(timestamp.trim());
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (now - seconds > tolerance) return { ok: false, reason: 'timestamp_too_old' };
  if (seconds - now > tolerance) return { ok: false, reason: 'timestamp_in_future' };

  const expected = Buffer.from(webhookSignature(options.secret, timestamp.trim(), options.rawBody));
  // Several space-separated signatures are accepted, so a sender may sign with two secrets during rotation.
  let matched = false;
  for (const candidate of signature.trim().split(/\s+/)) {
    const given = Buffer.from(candidate);
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) return { ok: false, reason: 'invalid_signature' };

  try {
    const text =
      typeof options.rawBody === 'string' ? options.rawBody : Buffer.from(options.rawBody).toString('utf8');
    const parsed = JSON.parse(text) as WebhookEvent;
    if (!parsed || typeof parsed !== 'object' || typeof parsed.event !== 'string') {
      return { ok: false, reason: 'invalid_body' };
    }
    return { ok: true, event: parsed };
  } catch {
    return { ok: false, reason: 'invalid_body' };
  }
}
