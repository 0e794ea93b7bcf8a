import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import { createGroupCommit } from '../db/group-commit.js';
import type { Database } from '../db/schema.js';
import type { AuditEndpoint, AuditsService } from '../modules/audits/service.js';
import type { EventsService, EventType } from '../modules/events/service.js';
import type { ApiKeyPrincipal } from '../modules/keys/service.js';
import { latencyMs } from './meta.js';

export interface Completion {
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
  /**
   * The call's own writes, run in the same transaction as its audit record and event. They get the
   * response body exactly as it will be sent (confirmations store it as evidence).
   */
  writes?: (trx: Kysely<Database>, responseBody: string) => Promise<void>;
  /** Emitted for live keys only; test keys never emit events. */
  event?: EventType;
}

/**
 * Finishes a successful audited call: builds the envelope, serialises it once, writes the call's own
 * rows, its audit record and its event in one transaction (shared with concurrent calls by group
 * commit), then sends exactly the stored bytes.
 */
export function createResponder(deps: {
  db: Db;
  audits: AuditsService;
  events: EventsService;
  onCommit?: (units: number) => void;
}) {
  const commit = createGroupCommit(deps.db.kysely, deps.onCommit ? { onCommit: deps.onCommit } : {});
  return async function complete(c: Completion): Promise<FastifyReply> {
    const latency = latencyMs(c.reply);
    const statusCode = c.statusCode ?? 200;
    // Serialised through the route's response schema, so only contract fields leave the service.
    c.reply.code(statusCode);
    const body = String(
      c.reply.serialize({
        data: c.data,
        meta: { request_id: c.request.id, latency_ms: latency, ...(c.meta ?? {}) },
      }),
    );
    const emit = c.event && c.principal.mode === 'live' ? c.event : null;
    await commit.run(async (trx) => {
      if (c.writes) await c.writes(trx, body);
      await deps.audits.record(
        c.principal,
        {
          requestId: c.request.id,
          endpoint: c.endpoint,
          responseJson: body,
          requestBody: c.requestBody,
          latencyMs: latency,
          statusCode,
          valid: c.valid,
        },
        trx,
      );
      if (emit) {
        await deps.events.record(
          { accountId: c.principal.accountId, keyId: c.principal.id, type: emit, payload: body },
          trx,
        );
      }
    });
    return c.reply.type('application/json; charset=utf-8').send(body);
  };
}

export type Responder = ReturnType<typeof createResponder>;
