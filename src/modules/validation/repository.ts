import type { Kysely } from 'kysely';
import type { Database, RegistryAnswersTable } from '../../db/schema.js';

export function createRegistryAnswersRepository(db: Kysely<Database>) {
  return {
    async find(vatNumber: string, trx: Kysely<Database> = db): Promise<RegistryAnswersTable | undefined> {
      return trx
        .selectFrom('registry_answers')
        .selectAll()
        .where('vat_number', '=', vatNumber)
        .executeTakeFirst();
    },

    /** Stores an answer unless a newer one is already stored (another instance may have been faster). */
    async upsert(answer: RegistryAnswersTable, trx: Kysely<Database> = db): Promise<void> {
      await trx
        .insertInto('registry_answers')
        .values(answer)
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
            .where('registry_answers.checked_at', '<', answer.checked_at),
        )
        .execute();
    },
  };
}

export type RegistryAnswersRepository = ReturnType<typeof createRegistryAnswersRepository>;
