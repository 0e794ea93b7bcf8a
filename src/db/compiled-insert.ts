import { CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * An insert of one row into `table`, built and compiled by Kysely once (for the database's dialect)
 * and then run with each row's values. For the rows every paid call writes (its audit record, its
 * event): building and compiling the insert per row cost about 40 µs of a row's 80–120 µs on SQLite
 * (20,000 records, 20 per transaction, in process; 2026-11-23).
 */
export function compiledInsert<T extends keyof Database & string>(
  table: T,
  columns: ReadonlyArray<keyof Database[T] & string>,
) {
  let sql: string | null = null;
  return async (row: Database[T], trx: Kysely<Database>): Promise<void> => {
    const values = columns.map((column) => (row[column] as unknown) ?? null);
    sql ??= trx
      .insertInto(table)
      .values(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as Insertable<Database[T]>)
      .compile().sql;
    await trx.executeQuery(CompiledQuery.raw(sql, values));
  };
}
