import type { PeppolPart } from '../peppol/index.js';
import type {
  FallbackMeta,
  SourceStatus,
  ValidationData,
  ValidationOutcome,
  ValidationSource,
} from '../validation/index.js';

/** The hosted contract's closed list of per-item codes: a batch item fails with one of these three. */
export type BatchItemErrorCode = 'invalid_format' | 'country_unsupported' | 'registry_unavailable';

/** An item a national register answered because VIES could not: which register, and what it said. */
export interface BatchItemFallback {
  source: ValidationSource;
  source_status: 'fallback';
  fallback: FallbackMeta;
}

export type BatchItemResult =
  | { ok: true; data: ValidationData; meta?: BatchItemFallback }
  | { ok: false; error: { code: BatchItemErrorCode; message: string } };

export interface BatchSummary {
  total: number;
  successful: number;
  failed: number;
}

/**
 * Answers per registry and `source_status`, e.g. `{vies: {live: 3, cached: 1, degraded: 0}}`; a
 * national register that answered for VIES also counts `fallback` (`{pl_whitelist: {…, fallback: 2}}`).
 */
export type SourceCounts = Record<
  string,
  { live: number; cached: number; degraded: number; fallback?: number }
>;

export function itemResult(outcome: Exclude<ValidationOutcome, { kind: 'ok' }>): BatchItemResult;
export function itemResult(outcome: ValidationOutcome): BatchItemResult;
export function itemResult(outcome: ValidationOutcome): BatchItemResult {
  if (outcome.kind === 'ok') {
    const { meta } = outcome;
    // A register's answer keeps, with the item, which register answered and its identifiers.
    if (meta.source_status === 'fallback' && meta.fallback)
      return {
        ok: true,
        data: outcome.data,
        meta: { source: meta.source, source_status: 'fallback', fallback: meta.fallback },
      };
    return { ok: true, data: outcome.data };
  }
  switch (outcome.reason) {
    case 'invalid_format':
    case 'country_unsupported':
    case 'registry_unavailable':
      return { ok: false, error: { code: outcome.reason, message: outcome.message } };
    // The number could not be checked now (the test-mode throttled number): retry later, as for an
    // unavailable registry. A caller's own limit fails the whole batch before any item is looked up.
    case 'rate_limited':
      return { ok: false, error: { code: 'registry_unavailable', message: outcome.message } };
  }
}

/** Counts one answer of `source` with `status` (`live`, `cached`, `degraded` or `fallback`). */
export function countSource(sources: SourceCounts, source: string, status: string): void {
  const entry = sources[source] ?? { live: 0, cached: 0, degraded: 0 };
  sources[source] = entry;
  if (status === 'live' || status === 'cached' || status === 'degraded') entry[status] += 1;
  if (status === 'fallback') entry.fallback = (entry.fallback ?? 0) + 1;
}

/** The hosted contract's batch `meta` fields, rolled up from the per-registry counts. */
export interface BatchMetaRollup {
  /** True when every answer was a stored one (none live). */
  cached: boolean;
  /** The registry that gave the most answers (`vies` when none answered). */
  source: ValidationSource;
  /** The worst status among the answers: `degraded` over `fallback` over `cached` over `live`. */
  source_status: SourceStatus;
}

export function rollup(sources: SourceCounts): BatchMetaRollup {
  let source: ValidationSource = 'vies';
  let most = 0;
  const totals = { live: 0, cached: 0, degraded: 0, fallback: 0 };
  for (const [name, counts] of Object.entries(sources)) {
    const fallback = counts.fallback ?? 0;
    const answers = counts.live + counts.cached + counts.degraded + fallback;
    if (answers > most) {
      most = answers;
      source = name as ValidationSource;
    }
    totals.live += counts.live;
    totals.cached += counts.cached;
    totals.degraded += counts.degraded;
    totals.fallback += fallback;
  }
  return {
    cached: most > 0 && totals.live === 0 && totals.fallback === 0,
    source,
    source_status: worstStatus(totals),
  };
}

/** A successful item's result with its Peppol part (`"include": ["peppol"]`); a failed item has none. */
export function withPeppol(result: BatchItemResult, part: PeppolPart | null): BatchItemResult {
  return result.ok && part ? { ...result, data: { ...result.data, peppol: part } } : result;
}

function worstStatus(totals: { cached: number; degraded: number; fallback: number }): SourceStatus {
  if (totals.degraded > 0) return 'degraded';
  if (totals.fallback > 0) return 'fallback';
  return totals.cached > 0 ? 'cached' : 'live';
}
