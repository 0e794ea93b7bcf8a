import type { Kysely } from 'kysely';
import type { Database, EoriAnswersTable } from '../../db/schema.js';

/** The stored EORI answers: the only SQL of the EORI module. */
export function createEoriAnswersRepository(db: Kysely<Database>) {
  async function findMany(eoris: readonly string[]): Promise<EoriAnswersTable[]> {
    if (eoris.length === 0) return [];
    return db
      .selectFrom('eori_answers')
      .selectAll()
      .where('eori', 'in', [...eoris])
      .execute();
  }

  /** Stores answers (one statement), each unless a newer one of its number is already stored. */
  async function upsertMany(answers: readonly EoriAnswersTable[], trx: Kysely<Database> = db): Promise<void> {
    // One row per number (the newest): a statement may not update the same row twice.
    const newest = new Map<string, EoriAnswersTable>();
    for (const answer of answers) {
      const known = newest.get(answer.eori);
      if (!known || known.checked_at < answer.checked_at) newest.set(answer.eori, answer);
    }
    if (newest.size === 0) return;
    await trx
      .insertInto('eori_answers')
      .values([...newest.values()])
      .onConflict((oc) =>
        oc
          .column('eori')
          .doUpdateSet({
            source: (eb) => eb.ref('excluded.source'),
            valid: (eb) => eb.ref('excluded.valid'),
            name: (eb) => eb.ref('excluded.name'),
            street: (eb) => eb.ref('excluded.street'),
            postal_code: (eb) => eb.ref('excluded.postal_code'),
            city: (eb) => eb.ref('excluded.city'),
            country: (eb) => eb.ref('excluded.country'),
            upstream_status: (eb) => eb.ref('excluded.upstream_status'),
            checked_at: (eb) => eb.ref('excluded.checked_at'),
          })
          .whereRef('eori_answers.checked_at', '<', 'excluded.checked_at'),
      )
      .execute();
  }

  return { findMany, upsertMany };
}

export type EoriAnswersRepository = ReturnType<typeof createEoriAnswersRepository>;
