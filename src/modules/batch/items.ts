import type { BatchItemsTable } from '../../db/schema.js';
import { type ClaimedIdentity, claimOf } from '../identity-match/index.js';
import type { ValidationService } from '../validation/index.js';
import { parseVatNumber } from '../vat-numbers/index.js';
import { itemResult } from './results.js';

/** One number of a batch: a plain string, or an object with the company fields it claims. */
export type BatchItemBody =
  | string
  | {
      vat_number: string;
      company_name?: string;
      company_street?: string;
      company_postcode?: string;
      company_city?: string;
    };

export interface BatchItemInput {
  vatNumber: string;
  /** What the item claims about the company; null for a plain number or an object without one. */
  claim: ClaimedIdentity | null;
}

/** The batch's items as the validation path takes them. */
export function batchItems(body: readonly BatchItemBody[]): BatchItemInput[] {
  return body.map((item) =>
    typeof item === 'string'
      ? { vatNumber: item, claim: null }
      : { vatNumber: item.vat_number, claim: claimOf(item) },
  );
}

/**
 * The stored items of a new job, one per number, each ranked within its country; a malformed number
 * is answered at once (`done`, with its error), and `failed` counts those.
 */
export function itemRows(
  validation: Pick<ValidationService, 'parse'>,
  jobId: string,
  inputs: readonly BatchItemInput[],
  now: string,
): { items: BatchItemsTable[]; failed: number } {
  const ranks = new Map<string, number>();
  let failed = 0;
  const items = inputs.map(({ vatNumber, claim }, position): BatchItemsTable => {
    const parsed = parseVatNumber(vatNumber);
    const country = parsed.ok ? parsed.country : 'XX';
    const rank = ranks.get(country) ?? 0;
    ranks.set(country, rank + 1);
    const base: BatchItemsTable = {
      id: `${jobId}:${position}`,
      job_id: jobId,
      position,
      vat_number: vatNumber,
      claim: claim ? JSON.stringify(claim) : null,
      country,
      rank,
      status: 'pending',
      ok: null,
      result: null,
      source: null,
      attempts: 0,
      next_attempt_at: now,
      retry_until: null,
      last_error: null,
      locked_until: null,
      claimed_by: null,
      finished_at: null,
    };
    if (parsed.ok) return base;
    // No registry is asked for a number that cannot be one: its answer is known now.
    failed += 1;
    const outcome = validation.parse(vatNumber, 'vat_number');
    const result = outcome.kind === 'ok' ? null : itemResult(outcome);
    return { ...base, status: 'done', ok: 0, result: JSON.stringify(result), finished_at: now };
  });
  return { items, failed };
}
