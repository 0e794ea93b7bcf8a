import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { ConfirmationsRepository, IdempotencyRow } from './repository.js';
import { canonicalJson } from './request.js';
import type { ConfirmOutcome } from './types.js';

/** How long an idempotency key is honoured (spec §8). */
export const IDEMPOTENCY_WINDOW_MS = 86_400_000;

/** A confirmation request that carries an Idempotency-Key. */
export interface KeyedRequest {
  accountId: string;
  keyId: string;
  mode: string;
  body: unknown;
  /** The body's fingerprint under its mode (`keyed`). */
  fingerprint: string;
  key: string;
  /** The request that holds the key while it runs (its request id). */
  owner: string;
}

/** What an Idempotency-Key answers without the authority: the stored response, or a refusal. */
export type KeyAnswer = Extract<ConfirmOutcome, { kind: 'replay' }> | Refusal;

/**
 * The life of an Idempotency-Key on `POST /v1/confirm`: looked up before anything is asked, claimed
 * (in flight) while the authority is asked, then completed with the stored response or released.
 * Each step takes the request as `keyed` made it; for a request without a key (null) it does nothing.
 */
export function createIdempotencyKeys(deps: {
  repository: ConfirmationsRepository;
  clock: Clock;
  /** An in-flight key older than this is considered abandoned (crashed) and taken over. */
  inFlightTimeoutMs: number;
}) {
  const { repository, clock, inFlightTimeoutMs } = deps;

  /** A request's idempotency fingerprint: its body under its key's mode. */
  const fingerprintOf = (mode: string, body: unknown) => sha256Hex(canonicalJson({ mode, body }));

  /** The request with its key, or null without an Idempotency-Key. */
  function keyed(input: {
    principal: Pick<ApiKeyPrincipal, 'accountId' | 'id' | 'mode'>;
    body: unknown;
    requestId: string;
    idempotencyKey?: string | undefined;
  }): KeyedRequest | null {
    const { principal, body, requestId, idempotencyKey } = input;
    if (idempotencyKey === undefined) return null;
    return {
      accountId: principal.accountId,
      keyId: principal.id,
      mode: principal.mode,
      body,
      fingerprint: fingerprintOf(principal.mode, body),
      key: idempotencyKey,
      owner: requestId,
    };
  }

  /**
   * The key's earlier use: its answer, or `ok` to go on (taking over `previous`, expired or
   * abandoned, if there is one).
   */
  async function lookUp(
    request: KeyedRequest | null,
  ): Promise<{ kind: 'ok'; previous: IdempotencyRow | undefined } | KeyAnswer> {
    if (!request) return { kind: 'ok', previous: undefined };
    const now = clock.now();
    const previous = await repository.findIdempotency(request.accountId, request.key);
    const resolved = previous ? resolveExisting(previous, request, now) : null;
    return resolved ?? { kind: 'ok', previous };
  }

  /**
   * What an existing idempotency row means for a request, or null to take it over. An
   * Idempotency-Key belongs to the account: a key of the other mode reusing it for the same body is
   * told so.
   */
  function resolveExisting(row: IdempotencyRow, request: KeyedRequest, now: Date): KeyAnswer | null {
    if (row.expires_at <= now.toISOString()) return null;
    if (row.fingerprint !== request.fingerprint) {
      const otherMode = request.mode === 'live' ? 'test' : 'live';
      return refusal(
        'idempotency_key_reused',
        row.fingerprint === fingerprintOf(otherMode, request.body)
          ? `This Idempotency-Key was already used for this request by a ${otherMode} key of this account; live and test requests need keys of their own.`
          : 'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
      );
    }
    if (row.state === 'completed' && row.response !== null) {
      return { kind: 'replay', statusCode: row.status_code ?? 200, body: row.response };
    }
    if (new Date(row.locked_at).getTime() + inFlightTimeoutMs <= now.getTime()) return null;
    return refusal(
      'idempotency_in_flight',
      'A request with this Idempotency-Key is still in progress; retry after it has finished.',
    );
  }

  /**
   * Marks the key in flight for this request (taking `previous` over); when another request got
   * there first, answers as if it had been there all along.
   */
  async function claim(
    request: KeyedRequest | null,
    previous: IdempotencyRow | undefined,
  ): Promise<{ kind: 'ok' } | KeyAnswer> {
    if (!request) return { kind: 'ok' };
    const row = inFlightRow(request, clock.now());
    const claimed = previous
      ? await repository.takeOverIdempotency(previous.owner, row)
      : await repository.insertIdempotency(row);
    if (claimed) return { kind: 'ok' };
    const current = await repository.findIdempotency(request.accountId, request.key);
    const resolved = current ? resolveExisting(current, request, clock.now()) : null;
    return (
      resolved ??
      refusal('idempotency_in_flight', 'A request with this Idempotency-Key is in progress; retry later.')
    );
  }

  function inFlightRow(request: KeyedRequest, now: Date): IdempotencyRow {
    return {
      account_id: request.accountId,
      idempotency_key: request.key,
      fingerprint: request.fingerprint,
      state: 'in_flight',
      owner: request.owner,
      key_id: request.keyId,
      confirmation_id: null,
      status_code: null,
      response: null,
      created_at: now.toISOString(),
      locked_at: now.toISOString(),
      expires_at: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
    };
  }

  /** Frees the key: nothing was confirmed, so a retry with it asks again. */
  async function release(request: KeyedRequest | null): Promise<void> {
    if (request) await repository.releaseIdempotency(request.accountId, request.key, request.owner);
  }

  /** Stores the response under the key, in the transaction that stores the confirmation. */
  async function complete(
    request: KeyedRequest | null,
    stored: { confirmationId: string; response: string },
    trx: Kysely<Database>,
  ): Promise<void> {
    if (!request) return;
    const done = await repository.completeIdempotency(
      request.accountId,
      request.key,
      request.owner,
      { confirmationId: stored.confirmationId, statusCode: 200, response: stored.response },
      trx,
    );
    if (!done) throw new Error('idempotency key was taken over while the confirmation was running');
  }

  return { keyed, lookUp, claim, release, complete };
}

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;
