/** The shapes of confirmations: the request body, the answer, the service's outcomes. */
import type { Kysely } from 'kysely';
import type { ConfirmationsTable, Database } from '../../db/schema.js';
import type { Refusal } from '../../lib/refusal.js';
import type { EvatrMatches } from '../../registries/evatr.js';

/** The body of `POST /v1/confirm` (spec §2.3), as validated by the route schema. */
export interface ConfirmBody {
  vat_number: string;
  company: { name: string; street?: string; postcode?: string; town?: string };
  requester_vat_number?: string;
}

/** `data` of a confirmation response (spec §2.4). */
export interface ConfirmationData {
  valid: boolean;
  qualified: boolean;
  vat_number: string;
  requester_vat_number: string;
  matches: EvatrMatches;
  company: { name: string | null; street: string | null; postcode: string | null; town: string | null };
  valid_from: string | null;
  valid_to: string | null;
  confirmation_id: string;
  confirmed_at: string;
}

/** `meta` of a confirmation response besides `request_id` and `latency_ms`. */
export interface ConfirmationMeta {
  source: 'taxauth';
  source_status: 'live';
  taxauth_status_code: string;
  taxauth_id: string | null;
}

export type ConfirmOutcome =
  /** The authority answered: respond 200 and store the confirmation with `store`, in the transaction that records the response. */
  | {
      kind: 'confirmed';
      data: ConfirmationData;
      meta: ConfirmationMeta;
      /** Appends the confirmation to the evidence chain and completes the idempotency key. */
      store: (trx: Kysely<Database>, responseBody: string) => Promise<void>;
      /** Frees the idempotency key when the response could not be stored. */
      abandon: () => Promise<void>;
    }
  /** The same idempotency key and body were answered before: send the stored bytes again. */
  | { kind: 'replay'; statusCode: number; body: string }
  /** The request is refused; nothing was stored. */
  | Refusal;

/** A stored confirmation with its evidence, as `GET /v1/confirmations/{id}` returns it. */
export type StoredConfirmation = ConfirmationsTable;
