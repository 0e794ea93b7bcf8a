import type { Kysely } from 'kysely';
import type { Database, RegistryAnswersTable } from '../../db/schema.js';

export function createRegistryAnswersRepository(db: Kysely<Database>) {
  async function find(
    vatNumber: string,
    trx: Kysely<Database> = db,
  ): Promise<RegistryAnswersTable | undefined> {
    return trx
      .selectFrom('registry_answers')
      .selectAll()
      .where('vat_number', '=', vatNumber)
      .executeTakeFirst();
  }

  /** Stores an answer unless a newer one is already stored (another instance may have been faster). */
  async function upsert(answer: RegistryAnswersTable, trx: Kysely<Database> = db): Promise<void> {
    await upsertMany([answer], trx);
  }

  /** Stores answers (one statement), each unless a newer one of its number is already stored. */
  async function upsertMany(
    answers: readonly RegistryAnswersTable[],
    trx: Kysely<Database> = db,
  ): Promise<void> {
    // One row per number (the newest): a statement may not update the same row twice.
    const newest = new Map<string, RegistryAnswersTable>();
    for (const answer of answers) {
      const known = newest.get(answer.vat_number);
      if (!known || known.checked_at < answer.checked_at) newest.set(answer.vat_number, answer);
    }
    if (newest.size === 0) return;
    await trx
      .insertInto('registry_answers')
      .values([...newest.values()])
      .onConflict((oc) =>
        oc
          .column('vat_number')
          .doUpdateSet({
            source: (eb) => eb.ref('excluded.source'),
            valid: (eb) => eb.ref('excluded.valid'),
            name: (eb) => eb.ref('excluded.name'),
            address: (eb) => eb.ref('excluded.address'),
            checked_at: (eb) => eb.ref('excluded.checked_at'),
          })
          .whereRef('registry_answers.checked_at', '<', 'excluded.checked_at'),
      )
      .execute();
  }

  return { find, upsert, upsertMany };
}

export type RegistryAnswersRepository = ReturnType<typeof createRegistryAnswersRepository>;
