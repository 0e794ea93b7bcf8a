/**
 * One participant's live look-up: the SML (DNS) says whether and where it is registered, then its
 * SMP which document types it has metadata for and its business card. An SML failure is
 * `unavailable` (never "not registered"); an SMP failure after the SML said registered is a
 * registered participant whose SMP could not be read.
 */

import type { SmlClient, SmlLookup } from '../../registries/peppol-sml.js';
import type { BusinessCardResult, ServiceGroupResult, SmpClient } from '../../registries/peppol-smp.js';
import { type BreakerStore, type CallOutcome, outcomeOfReason } from '../../registries/resilience.js';
import type { MetricsObserver } from '../metrics/index.js';
import type { ParticipantId } from './identifiers.js';
import type { SmpStatus, StoredParticipant } from './types.js';

/** Registered and not-registered answers are kept at least an hour (the SML's TTLs are shorter). */
export const MIN_ANSWER_TTL_SECONDS = 3_600;
/** An answer whose SMP failed is asked again sooner: the SMP may be back in minutes. */
export const SMP_FAILURE_TTL_SECONDS = 300;

/** The breaker of the SML (every DNS look-up), and the prefix of those per SMP host. */
export const SML_BREAKER = 'peppol-sml';
export const SMP_BREAKER_PREFIX = 'peppol-smp:';

/** The breaker key of an SMP: its host (and port). */
export function smpBreakerKey(smpUrl: string): string {
  try {
    return `${SMP_BREAKER_PREFIX}${new URL(smpUrl).host}`;
  } catch {
    return `${SMP_BREAKER_PREFIX}${smpUrl.slice(0, 100)}`;
  }
}

/** What a ServiceGroup answer says about its SMP's health. */
function smpHealth(group: ServiceGroupResult, aborted: boolean): CallOutcome {
  switch (group.kind) {
    case 'service_group':
    case 'not_found':
      return 'success';
    case 'refused':
      return 'neutral';
    case 'unavailable':
      return aborted ? 'neutral' : outcomeOfReason(group.reason);
  }
}

/** What an SML answer says about its health: any DNS answer (NXDOMAIN included) is one. */
function smlHealth(found: SmlLookup, aborted: boolean): CallOutcome {
  if (found.kind !== 'unavailable') return 'success';
  return aborted ? 'neutral' : 'failure';
}

const NO_BREAKER: Pick<BreakerStore, 'check' | 'report'> = {
  check: async () => ({ allowed: true, trial: null }),
  report: async () => {},
};

export type FetchedParticipant =
  | { kind: 'answer'; participant: StoredParticipant; ttlSeconds: number }
  | { kind: 'unavailable'; message: string };

export function createParticipantFetch(deps: {
  sml: SmlClient;
  smp: SmpClient;
  /** Told of every SML and SMP exchange (`peppol-sml` and `peppol-smp`, by the scheme's country). */
  observer?: Pick<MetricsObserver, 'registryCall'>;
  /**
   * Circuit breakers: one for the SML (`peppol-sml`), one per SMP host (`peppol-smp:<host>`). While
   * the SML's is open, no DNS query is sent (the look-up is unavailable: a stored answer or 502);
   * while an SMP's is open, it is sent nothing (`smp_status: "unavailable"`).
   */
  breaker?: Pick<BreakerStore, 'check' | 'report'>;
  now?: () => number;
}) {
  const { sml, smp } = deps;
  const breaker = deps.breaker ?? NO_BREAKER;
  const now = deps.now ?? Date.now;

  function observe(registry: string, participant: ParticipantId, outcome: string, startedAt: number) {
    deps.observer?.registryCall({
      registry,
      country: participant.scheme.country,
      outcome,
      durationMs: now() - startedAt,
    });
  }

  function base(participant: ParticipantId): Pick<StoredParticipant, 'id' | 'icd'> {
    return { id: participant.id, icd: participant.icd };
  }

  /** The SMP's ServiceGroup as a status and document types. */
  function fromServiceGroup(group: ServiceGroupResult): {
    status: SmpStatus;
    documentTypes: string[] | null;
  } {
    switch (group.kind) {
      case 'service_group':
        return { status: 'ok', documentTypes: group.documentTypes };
      case 'not_found':
        return { status: 'not_found', documentTypes: [] };
      case 'refused':
        return { status: 'refused', documentTypes: null };
      case 'unavailable':
        return { status: 'unavailable', documentTypes: null };
    }
  }

  function fromCard(card: BusinessCardResult): StoredParticipant['business_card'] {
    if (card.kind !== 'business_card' || card.name === null) return null;
    return { name: card.name, country_code: card.countryCode };
  }

  async function atSmp(
    participant: ParticipantId,
    smpUrl: string,
    smlTtl: number,
    signal: AbortSignal,
  ): Promise<FetchedParticipant> {
    const startedAt = now();
    const key = smpBreakerKey(smpUrl);
    const gate = await breaker.check(key);
    let read: { status: SmpStatus; documentTypes: string[] | null };
    if (gate.allowed) {
      const group = await smp.serviceGroup(smpUrl, participant.id, signal);
      await breaker.report(key, smpHealth(group, signal.aborted), gate.trial);
      read = fromServiceGroup(group);
      observe('peppol-smp', participant, read.status, startedAt);
    } else {
      // The SMP failed repeatedly: it is left alone until its breaker lets a trial through.
      read = { status: 'unavailable', documentTypes: null };
      observe('peppol-smp', participant, 'circuit_open', startedAt);
    }
    // A card is only asked of an SMP that answered for the participant.
    const card =
      read.status === 'ok' ? fromCard(await smp.businessCard(smpUrl, participant.id, signal)) : null;
    const failed = read.status === 'unavailable';
    return {
      kind: 'answer',
      participant: {
        ...base(participant),
        registered: true,
        smp_url: smpUrl,
        smp_status: read.status,
        document_types: read.documentTypes,
        business_card: card,
      },
      ttlSeconds: failed ? SMP_FAILURE_TTL_SECONDS : Math.max(smlTtl, MIN_ANSWER_TTL_SECONDS),
    };
  }

  return async function fetchParticipant(
    participant: ParticipantId,
    signal: AbortSignal,
  ): Promise<FetchedParticipant> {
    const startedAt = now();
    const gate = await breaker.check(SML_BREAKER);
    if (!gate.allowed) {
      observe('peppol-sml', participant, 'circuit_open', startedAt);
      return {
        kind: 'unavailable',
        message: `The Peppol SML could not be asked: it failed repeatedly and is asked again in ${gate.retryAfterSeconds} s (circuit open).`,
      };
    }
    const found = await sml.lookup(participant.id, signal);
    await breaker.report(SML_BREAKER, smlHealth(found, signal.aborted), gate.trial);
    observe(
      'peppol-sml',
      participant,
      found.kind === 'unavailable' ? found.detail.toLowerCase() : found.kind,
      startedAt,
    );
    switch (found.kind) {
      case 'unavailable':
        return { kind: 'unavailable', message: `The Peppol SML could not be asked: ${found.message}` };
      case 'not_registered':
        return {
          kind: 'answer',
          participant: {
            ...base(participant),
            registered: false,
            smp_url: null,
            smp_status: null,
            document_types: null,
            business_card: null,
          },
          ttlSeconds: Math.max(found.negativeTtlSeconds ?? 0, MIN_ANSWER_TTL_SECONDS),
        };
      case 'registered_without_smp':
        return {
          kind: 'answer',
          participant: {
            ...base(participant),
            registered: true,
            smp_url: null,
            smp_status: 'no_smp',
            document_types: null,
            business_card: null,
          },
          ttlSeconds: Math.max(found.ttlSeconds, MIN_ANSWER_TTL_SECONDS),
        };
      case 'registered':
        return atSmp(participant, found.smpUrl, found.ttlSeconds, signal);
    }
  };
}

export type FetchParticipant = ReturnType<typeof createParticipantFetch>;
