/**
 * The Peppol look-up: from a VAT number or a participant identifier to the participants' SML and
 * SMP answers. Each participant identifier is one cache entry (`peppol_answers`), served while it
 * has not expired; `cache=false` asks again. Concurrent look-ups of one identifier share one query
 * (the coalescer, across instances when Redis is configured). When the SML cannot be asked, the
 * stored answer is served (`degraded`); without one the look-up is `unavailable`, never "not
 * registered".
 */
import type { PeppolAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { BreakerStore } from '../../registries/breaker.js';
import type { Coalescer } from '../../registries/coalescer.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { peppolData } from './answer.js';
import { type FetchParticipant, SML_BREAKER, SMP_BREAKER_PREFIX } from './fetch.js';
import { PARTICIPANT_ID_SCHEME, type ParticipantId, parsePeppolIdentifier } from './identifiers.js';
import type { PeppolAnswersRepository } from './repository.js';
import { testParticipant } from './test-answers.js';
import type {
  PeppolMeta,
  PeppolOutcome,
  PeppolPort,
  PeppolRequest,
  PeppolStatus,
  StoredParticipant,
} from './types.js';

/** Seconds a client is told to wait after the SML could not be asked. */
export const PEPPOL_RETRY_AFTER_SECONDS = 30;

/** One participant's part, and where it came from. */
type Part =
  | { kind: 'live'; participant: StoredParticipant; checkedAt: Date; row: PeppolAnswersTable }
  | { kind: 'stored'; participant: StoredParticipant; checkedAt: Date; stale: boolean }
  | { kind: 'unavailable'; participant: ParticipantId; message: string };

type Target = { identifier: string; participants: ParticipantId[] };

function parse(input: string): Target | Exclude<PeppolOutcome, { kind: 'ok' | 'unavailable' }> {
  const parsed = parsePeppolIdentifier(input);
  if (parsed.ok) {
    return parsed.kind === 'participant'
      ? {
          identifier: `${PARTICIPANT_ID_SCHEME}::${parsed.participant.id}`,
          participants: [parsed.participant],
        }
      : { identifier: parsed.vat.normalised, participants: parsed.participants };
  }
  if (parsed.kind === 'participant') {
    return { kind: 'invalid_format', reason: `participant_${parsed.reason}`, message: parsed.message };
  }
  const failure = parsed.failure;
  if (failure.reason === 'unsupported_country') {
    return { kind: 'country_unsupported', country: failure.country, message: failure.message };
  }
  return { kind: 'invalid_format', reason: failure.reason, message: failure.message };
}

function readStored(row: PeppolAnswersTable): StoredParticipant | null {
  try {
    return JSON.parse(row.answer) as StoredParticipant;
  } catch {
    return null;
  }
}

export function createPeppolService(deps: {
  repository: PeppolAnswersRepository;
  fetchParticipant: FetchParticipant;
  coalescer: Coalescer;
  clock: Clock;
  /** The SML zone, part of the coalescing key. */
  zone: string;
  /** The breakers `fetchParticipant` reports to, for the status. */
  breaker?: Pick<BreakerStore, 'snapshot'>;
}): PeppolPort & { parse: typeof parse; status(): Promise<PeppolStatus> } {
  const { repository, fetchParticipant, coalescer, clock, zone } = deps;
  const health = {
    last_success_at: null as string | null,
    last_failure_at: null as string | null,
    last_failure: null as string | null,
  };

  async function livePart(
    participant: ParticipantId,
    row: PeppolAnswersTable | undefined,
    useCache: boolean,
    signal?: AbortSignal,
  ): Promise<Part> {
    const now = clock.now();
    const stored = row ? readStored(row) : null;
    if (row && stored && useCache && row.expires_at > now.toISOString()) {
      return { kind: 'stored', participant: stored, checkedAt: new Date(row.checked_at), stale: false };
    }
    const fetched = await coalescer.run(
      `peppol:${zone}:${participant.id}`,
      (shared) => fetchParticipant(participant, shared),
      signal,
    );
    if (fetched.kind === 'unavailable') {
      health.last_failure_at = clock.now().toISOString();
      health.last_failure = fetched.message.slice(0, 300);
      if (row && stored) {
        return { kind: 'stored', participant: stored, checkedAt: new Date(row.checked_at), stale: true };
      }
      return { kind: 'unavailable', participant, message: fetched.message };
    }
    const checkedAt = clock.now();
    health.last_success_at = checkedAt.toISOString();
    return {
      kind: 'live',
      participant: fetched.participant,
      checkedAt,
      row: {
        participant_id: participant.id,
        answer: JSON.stringify(fetched.participant),
        checked_at: checkedAt.toISOString(),
        expires_at: new Date(checkedAt.getTime() + fetched.ttlSeconds * 1000).toISOString(),
      },
    };
  }

  async function liveParts(target: Target, useCache: boolean, signal?: AbortSignal): Promise<Part[]> {
    const rows = await repository.findMany(target.participants.map((p) => p.id));
    const byId = new Map(rows.map((row) => [row.participant_id, row]));
    const parts = await Promise.all(
      target.participants.map((p) => livePart(p, byId.get(p.id), useCache, signal)),
    );
    const fresh = parts.flatMap((part) => (part.kind === 'live' ? [part.row] : []));
    await repository.upsertMany(fresh);
    return parts;
  }

  function testParts(target: Target): Part[] {
    const now = clock.now();
    return target.participants.map((p): Part => {
      const answer = testParticipant(p);
      if (answer.kind === 'unavailable') return { ...answer, participant: p };
      return {
        kind: 'live',
        participant: answer.participant,
        checkedAt: now,
        row: { participant_id: p.id, answer: '', checked_at: '', expires_at: '' },
      };
    });
  }

  function metaOf(parts: Exclude<Part, { kind: 'unavailable' }>[], partial: boolean): PeppolMeta {
    const stored = parts.filter((p) => p.kind === 'stored');
    const oldest = stored.reduce<Date | null>(
      (min, p) => (min === null || p.checkedAt < min ? p.checkedAt : min),
      null,
    );
    const cached = parts.length > 0 && stored.length === parts.length;
    return {
      cached,
      source: 'peppol',
      source_status: partial || stored.some((p) => p.stale) ? 'degraded' : cached ? 'cached' : 'live',
      cached_at: oldest ? oldest.toISOString() : null,
      stale_seconds: oldest ? Math.max(0, Math.floor((clock.millis() - oldest.getTime()) / 1000)) : null,
    };
  }

  async function lookup(
    request: PeppolRequest,
    principal: Pick<ApiKeyPrincipal, 'mode'>,
  ): Promise<PeppolOutcome> {
    const target = parse(request.identifier);
    if ('kind' in target) return target;
    const parts =
      principal.mode === 'test'
        ? testParts(target)
        : await liveParts(target, request.useCache !== false, request.signal);
    const failed = parts.filter((p) => p.kind === 'unavailable');
    const answered = parts.filter((p) => p.kind !== 'unavailable');
    // A participant that could not be asked is unknown, never "not registered": the answer is
    // given only when another one is registered (then `reachable` is true whatever the unknown one
    // would say), else it is 502.
    const [firstFailure] = failed;
    if (firstFailure && !answered.some((p) => p.participant.registered)) {
      return {
        kind: 'unavailable',
        message: firstFailure.message,
        retryAfterSeconds: PEPPOL_RETRY_AFTER_SECONDS,
      };
    }
    const checkedAt = answered.reduce<Date>((min, p) => (p.checkedAt < min ? p.checkedAt : min), clock.now());
    return {
      kind: 'ok',
      data: peppolData(
        target.identifier,
        parts.map((p) =>
          p.kind === 'unavailable'
            ? { unavailable: true, id: p.participant.id, icd: p.participant.icd, message: p.message }
            : p.participant,
        ),
        checkedAt,
      ),
      meta: metaOf(answered, failed.length > 0),
    };
  }

  /** The SML as this instance last saw it (live keys' look-ups only), and the breakers now. */
  async function status(): Promise<PeppolStatus> {
    const views = deps.breaker ? await deps.breaker.snapshot() : [];
    const sml = views.find((v) => v.key === SML_BREAKER);
    const smp_breakers = views
      .filter((v) => v.key.startsWith(SMP_BREAKER_PREFIX) && v.phase !== 'closed')
      .sort((a, b) => a.key.localeCompare(b.key))
      .slice(0, 50)
      .map((v) => ({
        host: v.key.slice(SMP_BREAKER_PREFIX.length),
        breaker: v.phase as 'open' | 'half_open',
        retry_after_seconds: v.retryAfterSeconds,
        last_failure_at: v.lastFailureAt ? new Date(v.lastFailureAt).toISOString() : null,
      }));
    return {
      sml_zone: zone,
      ...health,
      sml_breaker: sml?.phase ?? 'closed',
      sml_retry_after_seconds: sml?.retryAfterSeconds ?? null,
      smp_breakers,
    };
  }

  return { parse, lookup, status };
}

export type PeppolService = ReturnType<typeof createPeppolService>;
