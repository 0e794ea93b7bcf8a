/**
 * The EORI check: read and check every number locally (a malformed one is refused with its reason
 * and never sent), ask the answer source of the key's mode for the well-formed ones at once (live
 * services or the test table), and shape each answer.
 */
import type { EoriAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { EoriService } from './countries.js';
import { parseEori } from './parse.js';
import type {
  EoriAnswerOptions,
  EoriAnswerOutcome,
  EoriAnswerSource,
  EoriData,
  EoriOutcome,
} from './types.js';

/** The most numbers one `POST /v1/eori/batch` takes. */
export const EORI_BATCH_LIMIT = 100;

export type EoriItemResult =
  | { ok: true; data: EoriData; meta: { source: EoriService; source_status: 'live' | 'cached' | 'degraded' } }
  | {
      ok: false;
      error: { code: 'invalid_format' | 'registry_unavailable'; message: string; reason?: string };
    };

export interface EoriBatchOutcome {
  summary: { total: number; valid: number; invalid: number; failed: number };
  results: EoriItemResult[];
  /** Answers per service and `source_status`. */
  sources: Record<string, { live: number; cached: number; degraded: number }>;
  /** Fresh service answers, stored with the response. */
  fresh: EoriAnswersTable[];
}

export function createEoriService(deps: {
  clock: Clock;
  sources: { live: EoriAnswerSource; test: EoriAnswerSource };
}) {
  const { clock, sources } = deps;

  function shape(
    eori: string,
    country: string,
    answer: Extract<EoriAnswerOutcome, { kind: 'answer' }>,
  ): EoriOutcome {
    const trader = answer.valid ? answer.trader : null;
    const hasAddress =
      trader !== null &&
      [trader.street, trader.postalCode, trader.city, trader.country].some((v) => v !== null);
    const data: EoriData = {
      valid: answer.valid,
      eori,
      country_code: country,
      company:
        trader === null
          ? null
          : {
              name: trader.name,
              address: hasAddress
                ? {
                    street: trader.street,
                    postal_code: trader.postalCode,
                    city: trader.city,
                    country: trader.country,
                  }
                : null,
            },
      verified_at: answer.checkedAt.toISOString(),
    };
    return {
      kind: 'ok',
      data,
      meta: {
        cached: answer.fromStore,
        source: answer.source,
        source_status: answer.sourceStatus,
        cached_at: answer.fromStore ? answer.checkedAt.toISOString() : null,
        stale_seconds: answer.fromStore
          ? Math.max(0, Math.floor((clock.millis() - answer.checkedAt.getTime()) / 1000))
          : null,
      },
      ...(answer.fresh ? { fresh: answer.fresh } : {}),
    };
  }

  /** Every input's outcome, in input order; each distinct well-formed number asked once. */
  async function outcomes(
    inputs: readonly unknown[],
    principal: ApiKeyPrincipal,
    options: EoriAnswerOptions,
  ): Promise<EoriOutcome[]> {
    const parsed = inputs.map((input) => parseEori(input));
    const wellFormed = parsed.flatMap((p) => (p.ok ? [p] : []));
    const source = principal.mode === 'test' ? sources.test : sources.live;
    const answers = wellFormed.length > 0 ? await source.answerMany(wellFormed, options) : new Map();
    return parsed.map((p): EoriOutcome => {
      if (!p.ok) return { kind: 'invalid_format', reason: p.reason, message: p.message };
      const answer = answers.get(p.eori);
      if (!answer) {
        return {
          kind: 'unavailable',
          source: p.service,
          message: `No answer for ${p.eori}.`,
          retryAfterSeconds: 60,
        };
      }
      if (answer.kind !== 'answer') return answer;
      return shape(p.eori, p.country, answer);
    });
  }

  /** One number (`GET /v1/eori/{number}`). */
  async function check(
    input: string,
    principal: ApiKeyPrincipal,
    options: EoriAnswerOptions,
  ): Promise<EoriOutcome> {
    const [outcome] = await outcomes([input], principal, options);
    return outcome as EoriOutcome;
  }

  /** Up to `EORI_BATCH_LIMIT` numbers; a malformed one or one without an answer fails alone. */
  async function checkMany(
    inputs: readonly string[],
    principal: ApiKeyPrincipal,
    options: EoriAnswerOptions,
  ): Promise<EoriBatchOutcome> {
    const all = await outcomes(inputs, principal, options);
    const summary = { total: inputs.length, valid: 0, invalid: 0, failed: 0 };
    const sourceCounts: EoriBatchOutcome['sources'] = {};
    const fresh = new Map<string, EoriAnswersTable>();
    const results = all.map((outcome): EoriItemResult => {
      if (outcome.kind !== 'ok') {
        summary.failed += 1;
        return outcome.kind === 'invalid_format'
          ? { ok: false, error: { code: 'invalid_format', message: outcome.message, reason: outcome.reason } }
          : { ok: false, error: { code: 'registry_unavailable', message: outcome.message } };
      }
      if (outcome.data.valid) summary.valid += 1;
      else summary.invalid += 1;
      const counts = sourceCounts[outcome.meta.source] ?? { live: 0, cached: 0, degraded: 0 };
      counts[outcome.meta.source_status] += 1;
      sourceCounts[outcome.meta.source] = counts;
      if (outcome.fresh) fresh.set(outcome.fresh.eori, outcome.fresh);
      return {
        ok: true,
        data: outcome.data,
        meta: { source: outcome.meta.source, source_status: outcome.meta.source_status },
      };
    });
    return { summary, results, sources: sourceCounts, fresh: [...fresh.values()] };
  }

  return { check, checkMany };
}

export type EoriCheckService = ReturnType<typeof createEoriService>;
