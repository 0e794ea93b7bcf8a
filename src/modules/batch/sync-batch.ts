import type { RegistryAnswersTable } from '../../db/schema.js';
import { claimKey } from '../identity-match/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { type PeppolPort, peppolPart } from '../peppol/index.js';
import type { ValidationOutcome, ValidationService } from '../validation/index.js';
import { parseVatNumber } from '../vat-numbers/index.js';
import type { BatchItemInput } from './items.js';
import {
  type BatchItemResult,
  type BatchSummary,
  countSource,
  itemResult,
  type SourceCounts,
  withPeppol,
} from './results.js';

export interface ValidatedBatch {
  summary: BatchSummary;
  results: BatchItemResult[];
  sources: SourceCounts;
  /** Fresh registry answers, recorded with the response. */
  answers: RegistryAnswersTable[];
}

/** Synchronous batches: every number through the one validation path, answered in one response. */
export function createSyncBatch(deps: {
  validation: Pick<ValidationService, 'validate'>;
  peppol: PeppolPort;
}) {
  const { validation, peppol } = deps;
  /**
   * Validates up to 100 numbers at once: each distinct number (after normalisation) with the same
   * claim is validated once, all of them concurrently; results come back in input order. With
   * `include.peppol`, each distinct number's Peppol part is looked up alongside its validation.
   */
  async function validateMany(
    items: readonly BatchItemInput[],
    requester: string | null,
    principal: ApiKeyPrincipal,
    include: { peppol: boolean } = { peppol: false },
  ): Promise<ValidatedBatch> {
    const groups = new Map<string, { input: BatchItemInput; positions: number[] }>();
    items.forEach((input, position) => {
      const parsed = parseVatNumber(input.vatNumber);
      const number = parsed.ok ? parsed.normalised : `\u0000${input.vatNumber}`;
      const key = `${number}\u0000${claimKey(input.claim)}`;
      const group = groups.get(key);
      if (group) group.positions.push(position);
      else groups.set(key, { input, positions: [position] });
    });
    const distinct = [...groups.values()];
    const peppolParts = include.peppol
      ? Promise.all(distinct.map((g) => peppolPart(peppol, g.input.vatNumber, principal)))
      : null;
    const outcomes = await Promise.all(
      distinct.map((g) =>
        // A client waits for the whole batch: each item's wait for a registry permit is bounded.
        validation.validate(
          {
            vatNumber: g.input.vatNumber,
            requesterVatNumber: requester,
            clientWaiting: true,
            ...(g.input.claim ? { claim: g.input.claim } : {}),
          },
          principal,
        ),
      ),
    );
    const parts = peppolParts ? await peppolParts : null;
    const results: BatchItemResult[] = new Array(items.length);
    const answers: RegistryAnswersTable[] = [];
    const sources: SourceCounts = {};
    let failed = 0;
    distinct.forEach((group, i) => {
      const outcome = outcomes[i] as ValidationOutcome;
      const result = withPeppol(itemResult(outcome), parts?.[i] ?? null);
      if (outcome.kind === 'ok' && outcome.fresh) answers.push(outcome.fresh);
      for (const position of group.positions) {
        results[position] = result;
        if (!result.ok) failed += 1;
        if (outcome.kind === 'ok') countSource(sources, outcome.meta.source, outcome.meta.source_status);
      }
    });
    return {
      summary: { total: items.length, successful: items.length - failed, failed },
      results,
      sources,
      answers,
    };
  }

  return { validateMany };
}
