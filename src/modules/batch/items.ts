import { type ClaimedIdentity, claimOf } from '../identity-match/index.js';

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
