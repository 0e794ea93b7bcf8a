import type { ConfirmationsTable, EvidenceAcknowledgementsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { seconds } from '../../lib/errors.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { EvatrClient, EvatrResult } from '../../registries/evatr.js';
import type { ApiKeyPrincipal, Mode } from '../keys/index.js';
import { PLAYGROUND_RETENTION_MS } from '../playground/index.js';
import type { HeadSigner, SignedHead } from './anchor.js';
import { toTaxauthCode, upstreamRefusal } from './authority.js';
import type { BurstLimiter } from './burst.js';
import { hashRecord } from './chain.js';
import { createEvidenceGuard, type EvidenceProblem } from './guard.js';
import type { ConfirmationsRepository, IdempotencyRow } from './repository.js';
import { canonicalJson, checkRequester, normaliseTarget } from './request.js';
import type {
  ConfirmationData,
  ConfirmationMeta,
  ConfirmBody,
  ConfirmOutcome,
  StoredConfirmation,
} from './types.js';
import {
  type AnchoredReport,
  type AnchorOptions,
  signedHeadDocument,
  verifyEvidenceChain,
} from './verify.js';

export { OFFICIAL_TEST_REQUESTER } from './request.js';

export type {
  ConfirmationData,
  ConfirmationMeta,
  ConfirmBody,
  ConfirmOutcome,
  StoredConfirmation,
} from './types.js';

const DAY_MS = 86_400_000;
/** How long an idempotency key is honoured (spec §8). */
export const IDEMPOTENCY_WINDOW_MS = DAY_MS;
/** Confirmations are evidence for 10 years (spec §8). */
export const RETENTION_YEARS = 10;

function addYears(at: Date, years: number): Date {
  const out = new Date(at.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + years);
  return out;
}

export type HeadLogResult = { ok: true; head: SignedHead } | { ok: false; problem: EvidenceProblem };

/**
 * What a stopped instance says about the problem outside its log (API callers, `/ready`): the reason
 * and the link, never a confirmation's id (the chain spans every account).
 */
export function evidenceSummary(problem: Pick<EvidenceProblem, 'reason' | 'seq'>): string {
  return `the evidence chain head does not verify against the last signed head (${problem.reason} at seq ${problem.seq})`;
}

/** The refusal of a confirmation while the chain head cannot be verified. */
export function evidenceRefusal(problem: EvidenceProblem): Refusal {
  return refusal(
    'evidence_unverified',
    `Confirmations are stopped: ${evidenceSummary(problem)}. Nothing is signed or appended until an operator reviews the evidence chain ("openvat evidence verify") and acknowledges its head ("openvat evidence acknowledge").`,
    { reason: problem.reason, seq: problem.seq, since: problem.since },
  );
}

export function createConfirmationsService(deps: {
  repository: ConfirmationsRepository;
  clock: Clock;
  ids: IdGenerator;
  /** The eVatR port per key mode: the real client for live keys, the magic-number table for test keys. */
  upstream: Readonly<Record<Mode, EvatrClient>>;
  limiter: BurstLimiter;
  /** An in-flight idempotency key older than this is considered abandoned (crashed) and taken over. */
  inFlightTimeoutMs: number;
  /** Signs every new chain head (OPENVAT_EVIDENCE_KEY); without it heads are stored unsigned. */
  signer?: HeadSigner | null;
  /** Told once each time confirmations stop because the chain head cannot be verified. */
  onEvidenceProblem?: (problem: EvidenceProblem) => void;
  /** Told when an operator's acknowledgement lets confirmations resume. */
  onEvidenceResume?: (acknowledgement: EvidenceAcknowledgementsTable) => void;
}) {
  const { repository, clock, ids, upstream, limiter, inFlightTimeoutMs } = deps;
  const signer = deps.signer ?? null;
  const guard = createEvidenceGuard({
    repository,
    signer,
    clock,
    ...(deps.onEvidenceProblem ? { onProblem: deps.onEvidenceProblem } : {}),
    ...(deps.onEvidenceResume ? { onResume: deps.onEvidenceResume } : {}),
  });

  /** A request's idempotency fingerprint: its body under its key's mode. */
  const fingerprintOf = (mode: string, body: unknown) => sha256Hex(canonicalJson({ mode, body }));

  /**
   * What an existing idempotency row means for a request, or null to take it over. An
   * Idempotency-Key belongs to the account: a key of the other mode reusing it for the same body is
   * told so.
   */
  function resolveExisting(
    row: IdempotencyRow,
    request: { mode: string; body: unknown; fingerprint: string },
    now: Date,
  ): ConfirmOutcome | null {
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

  return {
    /**
     * One qualified confirmation: checks the inputs, honours the idempotency key and the burst limit,
     * asks the authority once (no retry) and maps its answer. A 200 comes back as `confirmed` with the
     * writes that store it; every refusal is a value.
     */
    async confirm(input: {
      principal: ApiKeyPrincipal;
      body: ConfirmBody;
      requestId: string;
      idempotencyKey?: string | undefined;
    }): Promise<ConfirmOutcome> {
      const { principal, body, requestId, idempotencyKey } = input;

      const target = normaliseTarget(body.vat_number);
      if (target === null || !/^[A-Z]{2}./.test(target)) {
        return refusal(
          'invalid_format',
          'vat_number must start with a two-letter country prefix, e.g. ATU12345678.',
          { reason: target === null ? 'length' : 'country', field: 'vat_number' },
        );
      }
      if (target.startsWith('DE')) {
        return refusal(
          'invalid_format',
          'The German tax authority cannot confirm German (DE) VAT numbers for a German requester; confirm foreign EU VAT numbers only, and use GET /v1/validate for DE numbers.',
          { field: 'vat_number' },
        );
      }
      const requesterInput = body.requester_vat_number ?? principal.defaultRequesterVat;
      if (!requesterInput) {
        return refusal(
          'requester_invalid',
          'A German requester VAT number is required: send requester_vat_number, or set a default on the key with "openvat keys create --default-requester-vat DE…".',
          { field: 'requester_vat_number' },
        );
      }
      const requester = checkRequester(requesterInput);
      if (requester.kind !== 'ok') return requester;

      const fingerprint = fingerprintOf(principal.mode, body);
      const identity = { mode: principal.mode, body, fingerprint };
      let now = clock.now();
      let previous: IdempotencyRow | undefined;
      if (idempotencyKey !== undefined) {
        previous = await repository.findIdempotency(principal.accountId, idempotencyKey);
        if (previous) {
          const resolved = resolveExisting(previous, identity, now);
          if (resolved) return resolved;
        }
      }

      // The chain is never extended from a head this instance cannot verify: nothing is asked of
      // the authority then.
      const stopped = await guard.check();
      if (stopped) return evidenceRefusal(stopped);

      const burst = limiter.take(principal.id);
      if (!burst.allowed) {
        return refusal(
          'rate_limited',
          `Too many confirmations in a short time; retry after ${seconds(burst.retryAfterSeconds)}.`,
          { retry_after_seconds: burst.retryAfterSeconds },
          burst.retryAfterSeconds,
        );
      }

      const owner = requestId;
      if (idempotencyKey !== undefined) {
        now = clock.now();
        const row: IdempotencyRow = {
          account_id: principal.accountId,
          idempotency_key: idempotencyKey,
          fingerprint,
          state: 'in_flight',
          owner,
          key_id: principal.id,
          confirmation_id: null,
          status_code: null,
          response: null,
          created_at: now.toISOString(),
          locked_at: now.toISOString(),
          expires_at: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
        };
        const claimed = previous
          ? await repository.takeOverIdempotency(previous.owner, row)
          : await repository.insertIdempotency(row);
        if (!claimed) {
          // Another request got there first: answer as if it had been there all along.
          const current = await repository.findIdempotency(principal.accountId, idempotencyKey);
          const resolved = current ? resolveExisting(current, identity, clock.now()) : null;
          return (
            resolved ??
            refusal(
              'idempotency_in_flight',
              'A request with this Idempotency-Key is in progress; retry later.',
            )
          );
        }
      }
      const release = async () => {
        if (idempotencyKey !== undefined) {
          await repository.releaseIdempotency(principal.accountId, idempotencyKey, owner);
        }
      };

      let result: EvatrResult;
      try {
        result = await upstream[principal.mode].confirm({
          requesterVat: requester.vat,
          vat: target,
          name: body.company.name,
          ...(body.company.street !== undefined ? { street: body.company.street } : {}),
          ...(body.company.postcode !== undefined ? { postcode: body.company.postcode } : {}),
          ...(body.company.town !== undefined ? { town: body.company.town } : {}),
        });
      } catch (error) {
        await release();
        throw error;
      }
      const refused = upstreamRefusal(result);
      if (refused || result.kind !== 'answer') {
        // Nothing was confirmed, so nothing is kept: a retry with the same key asks again.
        await release();
        return refused ?? refusal('authority_unavailable', 'The tax authority is unavailable.');
      }

      const answer = result;
      const confirmationId = ids.uuid();
      const valid = answer.category !== 'invalid';
      const qualified = answer.category === 'qualified';
      const data: ConfirmationData = {
        valid,
        qualified,
        vat_number: target,
        requester_vat_number: requester.vat,
        matches: answer.matches,
        company: answer.company,
        valid_from: answer.validFrom,
        valid_to: answer.validTo,
        confirmation_id: confirmationId,
        confirmed_at: answer.answeredAt,
      };
      const meta: ConfirmationMeta = {
        source: 'taxauth',
        source_status: 'live',
        taxauth_status_code: toTaxauthCode(answer.status),
        taxauth_id: answer.id,
      };

      return {
        kind: 'confirmed',
        data,
        meta,
        abandon: release,
        async store(trx, responseBody) {
          const created = clock.now();
          const link = await repository.claimNextLink(trx);
          await guard.beforeAppend(trx, link.previous);
          const record: Omit<ConfirmationsTable, 'hash'> = {
            id: confirmationId,
            seq: link.seq,
            account_id: principal.accountId,
            key_id: principal.id,
            request_id: requestId,
            mode: principal.mode,
            vat_number: target,
            requester_vat_number: requester.vat,
            taxauth_status: answer.status,
            valid: valid ? 1 : 0,
            qualified: qualified ? 1 : 0,
            api_request: JSON.stringify(body),
            upstream_url: answer.raw.url,
            upstream_request: answer.raw.requestBody,
            upstream_response: answer.raw.responseBody,
            upstream_http_status: answer.raw.httpStatus,
            upstream_id: answer.id,
            response: responseBody,
            created_at: created.toISOString(),
            // The demo key's confirmations are test data every visitor shares: served for 24 hours.
            retain_until: (principal.playground
              ? new Date(created.getTime() + PLAYGROUND_RETENTION_MS)
              : addYears(created, RETENTION_YEARS)
            ).toISOString(),
            prev_hash: link.prevHash,
          };
          const hash = hashRecord(record);
          await repository.insert({ ...record, hash }, trx);
          await repository.setHeadHash(link.seq, hash, signer ? signer.sign(link.seq, hash) : null, trx);
          guard.appended(link.seq, hash);
          if (idempotencyKey !== undefined) {
            const done = await repository.completeIdempotency(
              principal.accountId,
              idempotencyKey,
              owner,
              { confirmationId, statusCode: 200, response: responseBody },
              trx,
            );
            if (!done) throw new Error('idempotency key was taken over while the confirmation was running');
          }
        },
      };
    },

    /** A confirmation of the caller's account, or null (unknown id or another account's). */
    async find(principal: ApiKeyPrincipal, id: string): Promise<StoredConfirmation | null> {
      // Test and live keys of one account see only their own mode's confirmations.
      const row = await repository.findOfAccount(principal.accountId, principal.mode, id);
      if (!row) return null;
      // Past its retention a confirmation is no longer served (it stays in the evidence chain).
      if (row.retain_until <= clock.now().toISOString()) return null;
      return row;
    },

    /** Walks the whole evidence chain and reports OK or the first broken link. */
    verifyChain(pageSize = 500, anchor: AnchorOptions = {}): Promise<AnchoredReport> {
      return verifyEvidenceChain(repository, pageSize, anchor);
    },

    /**
     * The start-up and daily check (see `EvidenceGuard.audit`): the current head, already signed,
     * for the log, or why confirmations are stopped. Signs nothing. Null without an evidence key.
     */
    async exportHead(): Promise<HeadLogResult | null> {
      if (!signer) return null;
      const audited = await guard.audit();
      if (!audited.ok) return audited;
      return { ok: true, head: signedHeadDocument(audited.head, signer, clock.now()) };
    },

    /** Why confirmations are stopped (null when they are not), as `/ready` and the metrics report it. */
    evidenceProblem(): EvidenceProblem | null {
      return guard.problem();
    },

    /** Re-checks the chain head now (what `/ready` does); the problem, or null. */
    checkEvidence(): Promise<EvidenceProblem | null> {
      return guard.check();
    },

    /** Deletes idempotency keys past their 24 hours; confirmations themselves are never deleted. */
    async purgeExpiredIdempotencyKeys(limit = 500): Promise<number> {
      return repository.deleteExpiredIdempotency(clock.now().toISOString(), limit);
    },
  };
}

export type ConfirmationsService = ReturnType<typeof createConfirmationsService>;
