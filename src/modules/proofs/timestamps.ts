/**
 * The port through which a proof finds the newest trusted time-stamp token (RFC 3161) over a chain
 * head that covers a confirmation. A token over head `head_seq` proves that every link up to it
 * existed at `gen_time`; it covers link `seq` when `head_seq >= seq`.
 */
export interface TimestampToken {
  /** The chain head the token was requested over. */
  head_seq: number;
  /** The TSA's `genTime`: when the token was made (ISO 8601). */
  gen_time: string;
  /** The time-stamping authority that issued it. */
  tsa_url: string;
}

export interface TimestampLookup {
  /** The newest token over a head at or after `seq`, or null when none covers it yet. */
  newestCovering(seq: number): Promise<TimestampToken | null>;
}

/** Without time-stamping: no token covers any link. */
export const noTimestamps: TimestampLookup = {
  newestCovering: async () => null,
};
