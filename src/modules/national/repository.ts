/**
 * The local copy of the registers' published files in the database (`national_file_parts`,
 * `national_file_rows`), the only SQL of the national registers besides the lease of their sync
 * (`national_file_syncs`, claimed through `createScheduledSyncs` like the rates sync). Every instance
 * on the database answers from the same copy, and a restart keeps it.
 *
 * A sync of a part writes its rows as a new generation beside the one answering, in batches outside
 * any transaction, and swaps the part over to it in one transaction only once the rows ended without
 * an error; a file found wrong halfway (cut short, another layout, too few rows) deletes its own
 * rows and leaves the previous copy answering. Two instances syncing at once are safe: the swap only
 * moves a part forward to a generation begun later than the one answering, and the generations
 * before the one swapped in are deleted then (a sync that lost deletes its own rows).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { compiledInsert } from '../../db/compiled-insert.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { createScheduledSyncs } from '../../jobs/scheduled-sync.js';
import type {
  NationalFileIndex,
  NationalFilePartMeta,
  NationalFilePartStatus,
  NationalFileRow,
} from '../../registries/national-file.js';
import type { NationalSource } from '../../registries/national-port.js';

/** Rows per insert statement (5 values each: well under SQLite's and PostgreSQL's parameter limits). */
const BATCH = 1_000;

/** A generation sorts by when its sync began (then at random): `000001764700000000-1a2b3c4d5e6f`. */
function newGeneration(): string {
  return `${String(Date.now()).padStart(18, '0')}-${randomBytes(6).toString('hex')}`;
}

export function createNationalFileRepository(db: Kysely<Database>): NationalFileIndex {
  // Compiled for this database's dialect (its placeholders), once per batch size.
  const insertRowsSql = compiledInsert('national_file_rows', [
    'source',
    'part',
    'generation',
    'number',
    'row',
  ]);

  async function insertRows(source: NationalSource, generation: string, rows: NationalFileRow[]) {
    await insertRowsSql(
      rows.map((row) => ({
        source,
        part: row.part,
        generation,
        number: row.number,
        row: JSON.stringify(row),
      })),
      db,
    );
  }

  async function dropGeneration(source: NationalSource, part: string, generation: string) {
    await db
      .deleteFrom('national_file_rows')
      .where('source', '=', source)
      .where('part', '=', part)
      .where('generation', '=', generation)
      .execute();
  }

  /** Makes `generation` the part's answering copy unless a later one already is; whether it did. */
  async function swap(
    source: NationalSource,
    generation: string,
    meta: NationalFilePartMeta,
    count: number,
  ): Promise<boolean> {
    const values = {
      generation,
      data_date: meta.dataDate,
      etag: meta.etag,
      last_modified: meta.lastModified,
      encoding: meta.encoding,
      rows: count,
      fetched_at: meta.fetchedAt.toISOString(),
      checked_at: meta.fetchedAt.toISOString(),
    };
    return db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('national_file_parts')
        .values({ source, part: meta.part, ...values })
        .onConflict((oc) =>
          oc
            .columns(['source', 'part'])
            .doUpdateSet(values)
            .where('national_file_parts.generation', '<', generation),
        )
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      // The copy replaced, and any sync begun before this one (which then loses its swap).
      await trx
        .deleteFrom('national_file_rows')
        .where('source', '=', source)
        .where('part', '=', meta.part)
        .where('generation', '<', generation)
        .execute();
      return true;
    });
  }

  async function replace(
    source: NationalSource,
    part: string,
    rows: AsyncIterable<NationalFileRow>,
    meta: NationalFilePartMeta,
  ): Promise<{ rows: number }> {
    const generation = newGeneration();
    let count = 0;
    let batch: NationalFileRow[] = [];
    try {
      for await (const row of rows) {
        if (row.part !== part) throw new Error(`a row of part ${row.part} was given for part ${part}`);
        batch.push(row);
        count++;
        if (batch.length >= BATCH) {
          await insertRows(source, generation, batch);
          batch = [];
        }
      }
      await insertRows(source, generation, batch);
    } catch (error) {
      await dropGeneration(source, part, generation);
      throw error;
    }
    if (!(await swap(source, generation, { ...meta, part }, count))) {
      // Another instance swapped in a copy it began later: that one answers.
      await dropGeneration(source, part, generation);
    }
    return { rows: count };
  }

  async function confirm(source: NationalSource, part: string, checkedAt: Date) {
    const at = checkedAt.toISOString();
    await db
      .updateTable('national_file_parts')
      .set({ checked_at: at })
      .where('source', '=', source)
      .where('part', '=', part)
      .where('checked_at', '<', at)
      .execute();
  }

  async function lookup(source: NationalSource, number: string): Promise<NationalFileRow[]> {
    const found = await db
      .selectFrom('national_file_rows as r')
      .innerJoin('national_file_parts as p', (join) =>
        join
          .onRef('p.source', '=', 'r.source')
          .onRef('p.part', '=', 'r.part')
          .onRef('p.generation', '=', 'r.generation'),
      )
      .select('r.row')
      .where('r.source', '=', source)
      .where('r.number', '=', number)
      .orderBy('r.part')
      .execute();
    return found.map((entry) => JSON.parse(entry.row) as NationalFileRow);
  }

  async function parts(source: NationalSource): Promise<NationalFilePartStatus[]> {
    const found = await db
      .selectFrom('national_file_parts')
      .selectAll()
      .where('source', '=', source)
      .orderBy('part')
      .execute();
    return found.map((row) => ({
      part: row.part,
      dataDate: row.data_date,
      etag: row.etag,
      lastModified: row.last_modified,
      fetchedAt: new Date(row.fetched_at),
      encoding: row.encoding,
      rows: Number(row.rows),
      checkedAt: new Date(row.checked_at),
    }));
  }

  return { replace, confirm, lookup, parts };
}

/** The sync runs of the file registers (`national_file_syncs`), one instance at a time per register. */
export function createNationalFileSyncsRepository(db: Kysely<Database>, dialect: Dialect) {
  const { claim, finish, list } = createScheduledSyncs(db, dialect, 'national_file_syncs');
  return { claim, finish, list };
}

export type NationalFileSyncsRepository = ReturnType<typeof createNationalFileSyncsRepository>;
