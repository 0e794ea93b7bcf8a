import { isIP, type LookupFunction } from 'node:net';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { WebhookResponse, WebhookTransport } from './transport.js';
import { checkUrlSyntax, type DnsResolver, guardedLookup, isPublicAddress } from './url-guard.js';
import { webhookSignature } from './verify.js';

/** A 2xx within this time is a success (spec §8). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** The delivered body: the event's payload (a response envelope) spliced in verbatim. */
export function deliveryBody(event: string, createdAt: string, payloadJson: string): string {
  return `{"event":${JSON.stringify(event)},"created_at":${JSON.stringify(createdAt)},"data":${payloadJson}}`;
}

export function isSuccess(response: WebhookResponse): boolean {
  return response.kind === 'response' && response.status >= 200 && response.status < 300;
}

export function describeFailure(response: WebhookResponse): string {
  if (response.kind === 'error') return response.error;
  if (response.status >= 300 && response.status < 400) {
    return `The receiver answered HTTP ${response.status}; redirects are not followed.`;
  }
  return `The receiver answered HTTP ${response.status}.`;
}

/**
 * Sends one signed POST of a webhook (a queued delivery's attempt, or a test event): vets the URL
 * and, at connect time, every address it resolves to.
 */
export function createSender(deps: {
  clock: Clock;
  ids: IdGenerator;
  dns: DnsResolver;
  transport: WebhookTransport;
  /** Allow `http://` and private or loopback targets (development). */
  allowPrivate: boolean;
  timeoutMs: number;
}) {
  const { clock, ids, transport, allowPrivate, timeoutMs } = deps;
  const lookup = guardedLookup({ allowPrivate, dns: deps.dns }) as unknown as LookupFunction;

  return async function send(
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
  };
}

export type Send = ReturnType<typeof createSender>;
