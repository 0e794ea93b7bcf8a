import type { Kysely } from 'kysely';
import type { ConfirmationsTable, Database, EvidenceAcknowledgementsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { seconds } from '../../lib/errors.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { EvatrAnswer, EvatrClient, EvatrResult } from '../../registries/evatr.js';
import type { ApiKeyPrincipal, Mode } from '../keys/index.js';
import { PLAYGROUND_RETENTION_MS } from '../playground/index.js';
import type { HeadSigner, SignedHead } from './anchor.js';
import { toTaxauthCode, type UpstreamVerdict, upstreamVerdict } from './authority.js';
import type { BurstLimiter } from './burst.js';
import { hashRecord } from './chain.js';
import { createEvidenceGuard, type EvidenceProblem } from './guard.js';
import { createIdempotencyKeys, type KeyedRequest } from './idempotency.js';
import type { ConfirmationsRepository } from './repository.js';
import { type ConfirmNumbers, checkNumbers } from './request.js';
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

/** The refusal of a confirmation id that the caller's account and mode have no confirmation of. */
export function confirmationNotFound(): Refusal {
  return refusal('not_found', 'No confirmation with this id for this account.');
}

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

type ConfirmInput = {
  principal: ApiKeyPrincipal;
  body: ConfirmBody;
  requestId: string;
  idempotencyKey?: string | undefined;
};

/** The confirmation to store: the request, its checked numbers and the authority's answer. */
type Confirmed = {
  input: ConfirmInput;
  numbers: ConfirmNumbers;
  answer: EvatrAnswer;
  id: string;
  keyed: KeyedRequest | null;
};

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
  const idempotency = createIdempotencyKeys({ repository, clock, inFlightTimeoutMs });

  /**
   * One qualified confirmation: checks the inputs, honours the idempotency key and the burst limit,
   * asks the authority once (no retry) and maps its answer. A 200 comes back as `confirmed` with the
   * writes that store it; every refusal is a value.
   */
  async function confirm(input: ConfirmInput): Promise<ConfirmOutcome> {
    const numbers = checkNumbers(input.body, input.principal.defaultRequesterVat);
    if (numbers.kind !== 'ok') return numbers;
    const keyed = idempotency.keyed(input);
    const earlier = await idempotency.lookUp(keyed);
    if (earlier.kind !== 'ok') return earlier;
    // The chain is never extended from a head this instance cannot verify: nothing is asked of
    // the authority then.
    const stopped = await guard.check();
    if (stopped) return evidenceRefusal(stopped);
    const limited = burstRefusal(input.principal);
    if (limited) return limited;
    const claimed = await idempotency.claim(keyed, earlier.previous);
    if (claimed.kind !== 'ok') return claimed;
    const verdict = await askAuthority(input, numbers, keyed);
    if (verdict.kind !== 'ok') {
      // Nothing was confirmed, so nothing is kept: a retry with the same key asks again.
      await idempotency.release(keyed);
      return verdict;
    }
    return confirmed({ input, numbers, answer: verdict.answer, id: ids.uuid(), keyed });
  }

  /** The local burst limit of the key: a refusal with Retry-After once it is spent. */
  function burstRefusal(principal: ApiKeyPrincipal): Refusal | null {
    const burst = limiter.take(principal.id);
    if (burst.allowed) return null;
    return refusal(
      'rate_limited',
      `Too many confirmations in a short time; retry after ${seconds(burst.retryAfterSeconds)}.`,
      { retry_after_seconds: burst.retryAfterSeconds },
      burst.retryAfterSeconds,
    );
  }

  /** Asks the key mode's eVatR port once, and reads its result (an answer about the number, or a refusal). */
  async function askAuthority(
    input: ConfirmInput,
    numbers: ConfirmNumbers,
    keyed: KeyedRequest | null,
  ): Promise<UpstreamVerdict> {
    const { company } = input.body;
    let result: EvatrResult;
    try {
      result = await upstream[input.principal.mode].confirm({
        requesterVat: numbers.requesterVat,
        vat: numbers.target,
        name: company.name,
        ...(company.street !== undefined ? { street: company.street } : {}),
        ...(company.postcode !== undefined ? { postcode: company.postcode } : {}),
        ...(company.town !== undefined ? { town: company.town } : {}),
      });
    } catch (error) {
      await idempotency.release(keyed);
      throw error;
    }
    return upstreamVerdict(result);
  }

  /** The 200: the answer as `data` and `meta`, with the writes that store it. */
  function confirmed(confirmation: Confirmed): ConfirmOutcome {
    const { numbers, answer, id } = confirmation;
    const data: ConfirmationData = {
      valid: answer.category !== 'invalid',
      qualified: answer.category === 'qualified',
      vat_number: numbers.target,
      requester_vat_number: numbers.requesterVat,
      matches: answer.matches,
      company: answer.company,
      valid_from: answer.validFrom,
      valid_to: answer.validTo,
      confirmation_id: id,
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
      abandon: () => idempotency.release(confirmation.keyed),
      store: (trx, responseBody) => store(trx, confirmation, responseBody),
    };
  }

  /**
   * Appends the confirmation to the evidence chain (after the guard has checked the head it
   * extends), signs the new head, and completes the idempotency key; all in `trx`.
   */
  async function store(trx: Kysely<Database>, confirmation: Confirmed, responseBody: string): Promise<void> {
    const created = clock.now();
    const link = await repository.claimNextLink(trx);
    await guard.beforeAppend(trx, link.previous);
    const record = confirmationRecord(confirmation, link, created, responseBody);
    const hash = hashRecord(record);
    await repository.insert({ ...record, hash }, trx);
    await repository.setHeadHash(link.seq, hash, signer ? signer.sign(link.seq, hash) : null, trx);
    guard.appended(link.seq, hash);
    await idempotency.complete(
      confirmation.keyed,
      { confirmationId: confirmation.id, response: responseBody },
      trx,
    );
  }

  /**
   * A confirmation of the caller's account; refused (`not_found`) for an unknown id, another
   * account's or mode's, or one past its retention.
   */
  async function find(
    principal: ApiKeyPrincipal,
    id: string,
  ): Promise<{ kind: 'ok'; confirmation: StoredConfirmation } | Refusal> {
    // Test and live keys of one account see only their own mode's confirmations.
    const row = await repository.findOfAccount(principal.accountId, principal.mode, id);
    if (!row) return confirmationNotFound();
    // Past its retention a confirmation is no longer served (it stays in the evidence chain).
    if (row.retain_until <= clock.now().toISOString()) return confirmationNotFound();
    return { kind: 'ok', confirmation: row };
  }

  /** Walks the whole evidence chain and reports OK or the first broken link. */
  function verifyChain(pageSize = 500, anchor: AnchorOptions = {}): Promise<AnchoredReport> {
    return verifyEvidenceChain(repository, pageSize, anchor);
  }

  /**
   * The start-up and daily check (see `EvidenceGuard.audit`): the current head, already signed,
   * for the log, or why confirmations are stopped. Signs nothing. Null without an evidence key.
   */
  async function exportHead(): Promise<HeadLogResult | null> {
    if (!signer) return null;
    const audited = await guard.audit();
    if (!audited.ok) return audited;
    return { ok: true, head: signedHeadDocument(audited.head, signer, clock.now()) };
  }

  /** Why confirmations are stopped (null when they are not), as `/ready` and the metrics report it. */
  function evidenceProblem(): EvidenceProblem | null {
    return guard.problem();
  }

  /** Re-checks the chain head now (what `/ready` does); the problem, or null. */
  function checkEvidence(): Promise<EvidenceProblem | null> {
    return guard.check();
  }

  /** Deletes idempotency keys past their 24 hours; confirmations themselves are never deleted. */
  async function purgeExpiredIdempotencyKeys(limit = 500): Promise<number> {
    return repository.deleteExpiredIdempotency(clock.now().toISOString(), limit);
  }

  return {
    confirm,
    find,
    verifyChain,
    exportHead,
    evidenceProblem,
    checkEvidence,
    purgeExpiredIdempotencyKeys,
  };
}

/** The row a confirmation is stored as, before its hash: the request, the answer and the raw exchange. */
function confirmationRecord(
  confirmation: Confirmed,
  link: { seq: number; prevHash: string },
  created: Date,
  responseBody: string,
): Omit<ConfirmationsTable, 'hash'> {
  const { input, numbers, answer } = confirmation;
  const { principal } = input;
  return {
    id: confirmation.id,
    seq: link.seq,
    account_id: principal.accountId,
    key_id: principal.id,
    request_id: input.requestId,
    mode: principal.mode,
    vat_number: numbers.target,
    requester_vat_number: numbers.requesterVat,
    taxauth_status: answer.status,
    valid: answer.category !== 'invalid' ? 1 : 0,
    qualified: answer.category === 'qualified' ? 1 : 0,
    api_request: JSON.stringify(input.body),
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
}

export type ConfirmationsService = ReturnType<typeof createConfirmationsService>;
