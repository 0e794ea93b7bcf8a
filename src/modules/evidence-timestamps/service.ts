import { type KeyObject, randomBytes } from 'node:crypto';
import type { EvidenceTimestampsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import { headMessage, verifyHeadSignature } from '../confirmations/index.js';
import type { TsaClient } from './client.js';
import type { EvidenceTimestampsRepository } from './repository.js';
import type { TrustedRoots } from './trust.js';
import { checkResponse, imprintOf, timeStampRequest } from './tsp.js';

/**
 * Trusted timestamps of the evidence chain head: after each interval with new links, one instance
 * at a time (the run's lease) asks the configured RFC 3161 authorities, in order, for a token over
 * the current signed head: the imprint is SHA-256 of `headMessage(seq, hash)` (the bytes the
 * evidence key signs), with a random nonce and `certReq`. The answer is checked (`checkResponse`,
 * against the pinned roots only) before it is stored; an authority that fails or answers wrong is reported and the next one asked.
 * Confirmations never wait for this: it only reads the head.
 */

/** The chain head as the confirmations feature stores it. */
export interface HeadRow {
  seq: number;
  hash: string;
  signature: string | null;
}

export type StampOutcome =
  | { kind: 'stamped'; row: EvidenceTimestampsTable }
  /** No link since the newest token (or no link at all). */
  | { kind: 'current'; seq: number }
  /** The head cannot be time-stamped: it does not verify, or carries no valid signature. */
  | { kind: 'unverified'; message: string }
  /** Every authority failed; one reason per authority, in the order asked. */
  | { kind: 'failed'; failures: { url: string; reason: string }[] };

export interface TimestampStatus {
  enabled: boolean;
  tsa_urls: string[];
  interval_seconds: number;
  newest: { head_seq: number; gen_time: string; tsa_url: string; age_seconds: number } | null;
  last_run_at: string | null;
  last_error: string | null;
  next_run_at: string | null;
}

/** An authority's URL as stored, logged and shown: without credentials a URL may carry. */
export function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

/** How long a claimed run stays leased: every authority's timeout, plus time to store. */
function leaseMsFor(urls: number, timeoutMs: number): number {
  return urls * timeoutMs + 60_000;
}

export function createEvidenceTimestamps(deps: {
  repository: EvidenceTimestampsRepository;
  client: TsaClient;
  clock: Clock;
  ids: IdGenerator;
  workerId: string;
  urls: readonly string[];
  /** The pinned roots (`OPENVAT_TSA_ROOTS`): a token that does not chain to one is refused. */
  roots: TrustedRoots;
  intervalMs: number;
  timeoutMs: number;
  /** The current chain head (read only). */
  head(): Promise<HeadRow | undefined>;
  /** The evidence public key: the head must carry a valid signature by it. Null without a key. */
  publicKey: KeyObject | null;
  /** The evidence guard's check of the head (null when it verifies). */
  checkEvidence(): Promise<{ message: string } | null>;
  onFailure?: (url: string, reason: string) => void;
  onStored?: (row: EvidenceTimestampsTable) => void;
  /** Random nonce bytes (default: 16 from the CSPRNG). */
  nonce?: () => Buffer;
}) {
  const { repository, client, clock, ids, urls } = deps;
  const nonceOf = deps.nonce ?? (() => randomBytes(16));

  async function ask(url: string, head: HeadRow): Promise<EvidenceTimestampsTable | string> {
    const data = headMessage(head.seq, head.hash);
    const nonce = nonceOf();
    const answer = await client.post(url, timeStampRequest(imprintOf(data), nonce), deps.timeoutMs);
    if (!answer.ok) return answer.reason;
    if (answer.status !== 200) return `HTTP ${answer.status}`;
    const checked = await checkResponse(answer.body, { data, nonce, now: clock.now(), roots: deps.roots });
    if (!checked.ok) return checked.reason;
    const { facts } = checked;
    return {
      id: ids.uuid(),
      head_seq: head.seq,
      head_hash: head.hash,
      gen_time: facts.genTime.toISOString(),
      tsa_url: displayUrl(url),
      serial: facts.serial,
      token: facts.token.toString('base64'),
      chain: facts.chain.join(''),
      created_at: clock.now().toISOString(),
    };
  }

  /** Time-stamps the current head now, if it has new links (whatever the schedule). */
  async function stamp(): Promise<StampOutcome> {
    const problem = await deps.checkEvidence();
    if (problem) return { kind: 'unverified', message: problem.message };
    const stored = await deps.head();
    if (!stored) return { kind: 'unverified', message: 'the evidence chain head row is missing' };
    const head = { seq: Number(stored.seq), hash: stored.hash, signature: stored.signature };
    if (head.seq === 0 || head.seq <= (await repository.highestSeq()))
      return { kind: 'current', seq: head.seq };
    if (deps.publicKey) {
      if (
        head.signature === null ||
        !verifyHeadSignature(deps.publicKey, head.seq, head.hash, head.signature)
      ) {
        return {
          kind: 'unverified',
          message: `the evidence chain head (seq ${head.seq}) carries no valid signature`,
        };
      }
    }
    const failures: { url: string; reason: string }[] = [];
    for (const url of urls) {
      const result = await ask(url, head).catch((error: unknown) => `failed: ${(error as Error).message}`);
      if (typeof result === 'string') {
        failures.push({ url: displayUrl(url), reason: result });
        deps.onFailure?.(displayUrl(url), result);
        continue;
      }
      await repository.insert(result);
      deps.onStored?.(result);
      return { kind: 'stamped', row: result };
    }
    return { kind: 'failed', failures };
  }

  function describe(outcome: StampOutcome): string | null {
    if (outcome.kind === 'unverified') return outcome.message;
    if (outcome.kind === 'failed')
      return `no authority gave a valid token: ${outcome.failures.map((f) => `${f.url}: ${f.reason}`).join('; ')}`;
    return null;
  }

  return {
    enabled: urls.length > 0,
    stamp,

    /**
     * The scheduled run: when due and not held by another instance, time-stamps the head if it has
     * new links; the next run is one interval later (a failed one is retried after at most ten
     * minutes). Null when it did not run.
     */
    async runIfDue(): Promise<StampOutcome | null> {
      if (urls.length === 0) return null;
      const started = clock.now();
      const leaseUntil = new Date(started.getTime() + leaseMsFor(urls.length, deps.timeoutMs)).toISOString();
      const claimed = await repository.claimRun(deps.workerId, started.toISOString(), leaseUntil);
      if (!claimed) return null;
      let outcome: StampOutcome;
      try {
        outcome = await stamp();
      } catch (error) {
        outcome = { kind: 'unverified', message: `time-stamping failed: ${(error as Error).message}` };
      }
      const error = describe(outcome);
      const wait = error ? Math.min(deps.intervalMs, 600_000) : deps.intervalMs;
      await repository.finishRun(deps.workerId, {
        at: clock.now().toISOString(),
        nextRunAt: new Date(started.getTime() + wait).toISOString(),
        error,
      });
      return outcome;
    },

    /** The newest token's age and authority, and the run's state, for `/v1/status` and the metrics. */
    async status(): Promise<TimestampStatus> {
      const [newest, run] = await Promise.all([repository.newest(), repository.run()]);
      const now = clock.millis();
      return {
        enabled: urls.length > 0,
        tsa_urls: urls.map(displayUrl),
        interval_seconds: Math.round(deps.intervalMs / 1000),
        newest: newest
          ? {
              head_seq: Number(newest.head_seq),
              gen_time: newest.gen_time,
              tsa_url: newest.tsa_url,
              age_seconds: Math.max(0, Math.floor((now - Date.parse(newest.gen_time)) / 1000)),
            }
          : null,
        last_run_at: run?.last_run_at ?? null,
        last_error: run?.last_error ?? null,
        next_run_at: urls.length > 0 ? (run?.next_run_at ?? null) : null,
      };
    },

    newestTokenCovering: (seq: number) => repository.newestTokenCovering(seq),
  };
}

export type EvidenceTimestamps = ReturnType<typeof createEvidenceTimestamps>;
