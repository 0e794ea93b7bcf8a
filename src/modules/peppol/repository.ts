import type { Kysely } from 'kysely';
import type { Database, PeppolAnswersTable } from '../../db/schema.js';

/** The stored Peppol look-ups, one row per participant identifier (`ICD:value`). */
export function createPeppolAnswersRepository(db: Kysely<Database>) {
  async function findMany(participantIds: readonly string[]): Promise<PeppolAnswersTable[]> {
    if (participantIds.length === 0) return [];
    return db
      .selectFrom('peppol_answers')
      .selectAll()
      .where('participant_id', 'in', [...participantIds])
      .execute();
  }

  /** Stores answers (one statement), each unless a newer one of its identifier is already stored. */
  async function upsertMany(answers: readonly PeppolAnswersTable[]): Promise<void> {
    const newest = new Map<string, PeppolAnswersTable>();
    for (const answer of answers) {
      const known = newest.get(answer.participant_id);
      if (!known || known.checked_at < answer.checked_at) newest.set(answer.participant_id, answer);
    }
    if (newest.size === 0) return;
    await db
      .insertInto('peppol_answers')
      .values([...newest.values()])
      .onConflict((oc) =>
        oc
          .column('participant_id')
          .doUpdateSet({
            answer: (eb) => eb.ref('excluded.answer'),
            checked_at: (eb) => eb.ref('excluded.checked_at'),
            expires_at: (eb) => eb.ref('excluded.expires_at'),
          })
          .whereRef('peppol_answers.checked_at', '<', 'excluded.checked_at'),
      )
      .execute();
  }

  return { findMany, upsertMany };
}

export type PeppolAnswersRepository = ReturnType<typeof createPeppolAnswersRepository>;
