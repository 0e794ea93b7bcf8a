import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

/** Every table of the database's schema (migration bookkeeping excluded), found at run time. */
export async function tableNames(db: Db): Promise<string[]> {
  const query =
    db.dialect === 'postgres'
      ? sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
      : sql<{
          name: string;
        }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`;
  const { rows } = await query.execute(db.kysely);
  return rows
    .map((r) => r.name)
    .filter((name) => !name.startsWith('kysely_'))
    .sort();
}

/**
 * A digest per table of everything stored in it (row order ignored), so that two snapshots compare
 * equal exactly when no row was added, removed or changed. Tables created later are included too.
 */
export async function snapshot(db: Db): Promise<Record<string, string>> {
  if (db.dialect === 'postgres') return snapshotPostgres(db);
  const out: Record<string, string> = {};
  for (const table of await tableNames(db)) {
    const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(db.kysely);
    const lines = rows
      .map((row) =>
        JSON.stringify(row, (_key, value) =>
          Buffer.isBuffer(value) ? value.toString('hex') : typeof value === 'bigint' ? String(value) : value,
        ),
      )
      .sort();
    out[table] = `${rows.length}:${createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)}`;
  }
  return out;
}

const tablesOf = new WeakMap<Db, Promise<string[]>>();

/** PostgreSQL: the same digest per table computed by the server, in one round trip. */
async function snapshotPostgres(db: Db): Promise<Record<string, string>> {
  let tables = tablesOf.get(db);
  if (!tables) {
    tables = tableNames(db);
    tablesOf.set(db, tables);
  }
  const parts = (await tables).map(
    (table) =>
      sql`SELECT ${table}::text AS name, count(*)::text AS n,
            md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) AS h
          FROM ${sql.table(table)} r`,
  );
  const { rows } = await sql<{
    name: string;
    n: string;
    h: string;
  }>`${sql.join(parts, sql` UNION ALL `)}`.execute(db.kysely);
  return Object.fromEntries(rows.map((r) => [r.name, `${r.n}:${r.h.slice(0, 16)}`]));
}
