import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database, EvidenceTimestampRunsTable, EvidenceTimestampsTable } from '../../db/schema.js';
import { createScheduledSyncs } from '../../jobs/scheduled-sync.js';

/** The one row of the leased time-stamping schedule. */
const RUN_ID = 'evidence-head';

/** A stored token as other features read it: the DER bytes, not their base64 column. */
export interface CoveringToken {
  head_seq: number;
  gen_time: string;
  tsa_url: string;
  /** The token: DER of the CMS ContentInfo (SignedData over TSTInfo). */
  token: Buffer;
}

export function createEvidenceTimestampsRepository(db: Kysely<Database>, dialect: Dialect) {
  const runs = createScheduledSyncs(db, dialect, 'evidence_timestamp_runs');
  return {
    async insert(row: EvidenceTimestampsTable): Promise<void> {
      await db.insertInto('evidence_timestamps').values(row).execute();
    },

    /** The token with the newest time, or undefined before the first one. */
    async newest(): Promise<EvidenceTimestampsTable | undefined> {
      return db
        .selectFrom('evidence_timestamps')
        .selectAll()
        .orderBy('gen_time', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    /** How many tokens are stored. */
    async count(): Promise<number> {
      const row = await db
        .selectFrom('evidence_timestamps')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** The highest head seq any stored token covers (0 when none does). */
    async highestSeq(): Promise<number> {
      const row = await db
        .selectFrom('evidence_timestamps')
        .select((eb) => eb.fn.max('head_seq').as('seq'))
        .executeTakeFirst();
      return Number(row?.seq ?? 0);
    },

    /**
     * The newest stored token whose head seq is at least `seq` (so it covers link `seq` and every
     * link before it), or null when none does yet.
     */
    async newestTokenCovering(seq: number): Promise<CoveringToken | null> {
      const row = await db
        .selectFrom('evidence_timestamps')
        .select(['head_seq', 'gen_time', 'tsa_url', 'token'])
        .where('head_seq', '>=', seq)
        .orderBy('gen_time', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!row) return null;
      return {
        head_seq: Number(row.head_seq),
        gen_time: row.gen_time,
        tsa_url: row.tsa_url,
        token: Buffer.from(row.token, 'base64'),
      };
    },

    /** The earliest token over head seq `seq` or a later head (the first to cover link `seq`). */
    async firstCovering(seq: number): Promise<EvidenceTimestampsTable | undefined> {
      return db
        .selectFrom('evidence_timestamps')
        .selectAll()
        .where('head_seq', '>=', seq)
        .orderBy('head_seq')
        .orderBy('gen_time')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
    },

    /** The tokens of one head seq (newest first). */
    async ofSeq(seq: number): Promise<EvidenceTimestampsTable[]> {
      return db
        .selectFrom('evidence_timestamps')
        .selectAll()
        .where('head_seq', '=', seq)
        .orderBy('gen_time', 'desc')
        .orderBy('id', 'desc')
        .execute();
    },

    /** Up to `limit` tokens after (`afterSeq`, `afterId`), in (head seq, id) order. */
    async page(afterSeq: number, afterId: string, limit: number): Promise<EvidenceTimestampsTable[]> {
      return db
        .selectFrom('evidence_timestamps')
        .selectAll()
        .where((eb) =>
          eb.or([
            eb('head_seq', '>', afterSeq),
            eb.and([eb('head_seq', '=', afterSeq), eb('id', '>', afterId)]),
          ]),
        )
        .orderBy('head_seq')
        .orderBy('id')
        .limit(limit)
        .execute();
    },

    /**
     * Claims the time-stamping run when it is due and no other instance holds it, under the
     * scheduled syncs' lease (`createScheduledSyncs`); creates its row, due at once, the first time.
     */
    claimRun: (
      workerId: string,
      now: string,
      leaseUntil: string,
    ): Promise<EvidenceTimestampRunsTable | null> => runs.claim(RUN_ID, workerId, now, leaseUntil),

    /** Ends a claimed run: when the next one is due, and why this one stored nothing (or null: a success). */
    finishRun: (workerId: string, result: { at: string; nextRunAt: string; error: string | null }) =>
      runs.finish(RUN_ID, workerId, result),

    run: (): Promise<EvidenceTimestampRunsTable | undefined> => runs.get(RUN_ID),
  };
}

export type EvidenceTimestampsRepository = ReturnType<typeof createEvidenceTimestampsRepository>;
