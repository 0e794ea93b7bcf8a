import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { latencyMs } from '../../http/meta.js';
import type { AuditEndpoint } from '../audits/index.js';
import type { EventType } from '../events/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { Outbox, RegistryAnswer } from './service.js';

/** A successful audited call, ready to be recorded and sent. */
export interface RecordedResponse {
  request: FastifyRequest;
  reply: FastifyReply;
  principal: ApiKeyPrincipal;
  endpoint: AuditEndpoint;
  statusCode?: number;
  data: unknown;
  /** Fields of `meta` besides `request_id` and `latency_ms`. */
  meta?: Record<string, unknown>;
  requestBody: unknown;
  valid: boolean | null;
  /** Fresh registry answers the call obtained. */
  answers?: readonly RegistryAnswer[];
  /**
   * The call's own rows, given the response body exactly as it will be sent (a confirmation stores it
   * as evidence).
   */
  own?: (trx: Kysely<Database>, responseBody: string) => Promise<void>;
  /** Emitted for live keys only; test keys never emit events. */
  event?: EventType;
}

/**
 * Finishes a successful audited HTTP call: builds the envelope, serialises it once through the
 * route's response schema (so only contract fields leave the service), records it through the
 * outbox, and sends exactly the recorded bytes once they are committed.
 */
export function createResponseRecorder(outbox: Pick<Outbox, 'record'>) {
  return async function sendRecorded(r: RecordedResponse): Promise<FastifyReply> {
    const latency = latencyMs(r.reply);
    const statusCode = r.statusCode ?? 200;
    r.reply.code(statusCode);
    const body = String(
      r.reply.serialize({
        data: r.data,
        meta: { request_id: r.request.id, latency_ms: latency, ...(r.meta ?? {}) },
      }),
    );
    const own = r.own;
    await outbox.record({
      ...(own ? { own: async (trx) => void (await own(trx, body)) } : {}),
      ...(r.answers?.length ? { answers: r.answers } : {}),
      audit: {
        principal: r.principal,
        requestId: r.request.id,
        endpoint: r.endpoint,
        responseJson: body,
        requestBody: r.requestBody,
        latencyMs: latency,
        statusCode,
        valid: r.valid,
      },
      ...(r.event && r.principal.mode === 'live'
        ? {
            events: [
              { accountId: r.principal.accountId, keyId: r.principal.id, type: r.event, payload: body },
            ],
          }
        : {}),
    });
    return r.reply.type('application/json; charset=utf-8').send(body);
  };
}

export type SendRecorded = ReturnType<typeof createResponseRecorder>;
