import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { clientGone, whenClosedUnwritten } from '../../http/client-signal.js';
import { latencyMs } from '../../http/meta.js';
import type { AuditEndpoint, AuditsService } from '../audits/index.js';
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
 *
 * A record describes an answer a client was sent. When the client has closed its connection before
 * the commit, no audit record and no event are written (the call's own rows and the registry's
 * answers still are). When the connection closes after the commit, before the answer was written
 * to it, the record is marked as not delivered (`delivered: false` in `GET /v1/audits/{id}`).
 */
export function createResponseRecorder(
  outbox: Pick<Outbox, 'record'>,
  audits: Pick<AuditsService, 'markUndelivered'>,
  onError: (error: unknown) => void = () => {},
) {
  return async function sendRecorded(r: RecordedResponse): Promise<FastifyReply> {
    // A stored answer does not count against the key's monthly quota (see keys/quota.ts).
    if (r.meta?.cached === true) r.request.answeredFromCache = true;
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
    const ownAndAnswers = {
      ...(own ? { own: async (trx: Kysely<Database>) => void (await own(trx, body)) } : {}),
      ...(r.answers?.length ? { answers: r.answers } : {}),
    };
    if (clientGone(r.reply)) {
      // Nobody is left to receive the answer: what the registry said is kept, no answer is recorded.
      if (own || r.answers?.length) await outbox.record(ownAndAnswers);
      return r.reply.type('application/json; charset=utf-8').send(body);
    }
    await outbox.record({
      ...ownAndAnswers,
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
    const raw = r.reply.raw;
    const requestId = r.request.id;
    const notWritten = () => audits.markUndelivered(requestId).catch(onError);
    if (clientGone(r.reply)) void notWritten();
    else whenClosedUnwritten(raw, () => void notWritten());
    return r.reply.type('application/json; charset=utf-8').send(body);
  };
}

export type SendRecorded = ReturnType<typeof createResponseRecorder>;
