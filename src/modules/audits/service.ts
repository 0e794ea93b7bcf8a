import type { Kysely } from 'kysely';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { AuditsTable, Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { AUDIT_RETENTION_DAYS } from '../keys/index.js';
import { PLAYGROUND_RETENTION_MS } from '../playground/index.js';
import type { AuditsRepository } from './repository.js';

export type AuditEndpoint =
  | 'validate'
  | 'decide'
  | 'validate_batch'
  | 'confirm'
  | 'monitor_check'
  | 'peppol'
  | 'eori'
  | 'eori_batch';

/** The refusal of a request id that no audit record this key may read has. */
export function auditNotFound(): Refusal {
  return refusal('not_found', 'No audit record with this request_id for this key.');
}

export interface AuditInput {
  requestId: string;
  endpoint: AuditEndpoint;
  /** The response body exactly as sent to the client. */
  responseJson: string;
  requestBody: unknown;
  latencyMs: number | null;
  statusCode: number;
  valid: boolean | null;
}

export interface StoredAudit {
  requestId: string;
  endpoint: string;
  responseJson: string;
  requestBodyJson: string | null;
  createdAt: string;
  expiresAt: string;
  latencyMs: number | null;
  statusCode: number | null;
  valid: boolean | null;
  /** False when the answer could not be written to the client after the record was committed. */
  delivered: boolean;
}

const DAY_MS = 86_400_000;

export function createAuditsService(deps: { repository: AuditsRepository; clock: Clock }) {
  const { repository, clock } = deps;
  /**
   * Stores the audit record of a successful call, in the caller's transaction. Free-plan keys have no
   * retention, so nothing is stored for them.
   */
  async function record(principal: ApiKeyPrincipal, input: AuditInput, trx: Kysely<Database>): Promise<void> {
    await recordMany([{ principal, ...input }], trx);
  }

  /** Stores the audit records of several calls with one statement, in the caller's transaction. */
  async function recordMany(
    records: ReadonlyArray<AuditInput & { principal: ApiKeyPrincipal }>,
    trx: Kysely<Database>,
  ): Promise<void> {
    const created = clock.now();
    const createdAt = created.toISOString();
    // One expiry per retention in a group (they share the creation time).
    const expiries = new Map<number, string>();
    const rows: AuditsTable[] = [];
    for (const input of records) {
      const { principal } = input;
      const days = AUDIT_RETENTION_DAYS[principal.plan];
      if (days === null) continue;
      const keptMs = principal.playground ? PLAYGROUND_RETENTION_MS : days * DAY_MS;
      let expiresAt = expiries.get(keptMs);
      if (expiresAt === undefined) {
        expiresAt = new Date(created.getTime() + keptMs).toISOString();
        expiries.set(keptMs, expiresAt);
      }
      rows.push({
        request_id: input.requestId,
        key_id: principal.id,
        endpoint: input.endpoint,
        response: input.responseJson,
        request_body: input.requestBody === undefined ? null : JSON.stringify(input.requestBody),
        created_at: createdAt,
        expires_at: expiresAt,
        latency_ms: input.latencyMs === null ? null : Math.round(input.latencyMs),
        status_code: input.statusCode,
        valid: input.valid === null ? null : input.valid ? 1 : 0,
      });
    }
    await repository.insertMany(rows, trx);
  }

  return {
    record,
    recordMany,

    /**
     * The record, when it exists, belongs to this key, has not expired and the plan keeps records;
     * refused (`not_found`) otherwise, the same way whatever the reason.
     */
    async find(
      principal: ApiKeyPrincipal,
      requestId: string,
    ): Promise<{ kind: 'ok'; audit: StoredAudit } | Refusal> {
      if (AUDIT_RETENTION_DAYS[principal.plan] === null) return auditNotFound();
      const row = await repository.findOfKey(principal.id, requestId);
      if (!row) return auditNotFound();
      if (row.expires_at <= clock.now().toISOString()) return auditNotFound();
      const audit: StoredAudit = {
        requestId: row.request_id,
        endpoint: row.endpoint,
        responseJson: row.response,
        requestBodyJson: row.request_body,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        latencyMs: row.latency_ms,
        statusCode: row.status_code,
        valid: row.valid === null ? null : row.valid === 1,
        delivered: (row.undelivered_at ?? null) === null,
      };
      return { kind: 'ok', audit };
    },

    /**
     * Marks the record of `requestId` as not delivered: the answer it holds was committed but could
     * not be written to the client (its connection closed first).
     */
    async markUndelivered(requestId: string): Promise<void> {
      await repository.markUndelivered(requestId, clock.now().toISOString());
    },

    /**
     * Deletes expired records in batches of `batchSize`, yielding to the event loop between batches so
     * requests are never blocked for long. Confirmations live in their own table and are never touched.
     */
    async purgeExpired(batchSize = 500): Promise<number> {
      return deleteInBatches(batchSize, () => repository.deleteExpired(clock.now().toISOString(), batchSize));
    },
  };
}

export type AuditsService = ReturnType<typeof createAuditsService>;
