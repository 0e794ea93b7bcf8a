import { type RawBuilder, sql } from 'kysely';

/** `text` with LIKE's wildcards (`%`, `_`) and its escape character (`\`) escaped by `\`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A LIKE pattern for values that start with `prefix` taken literally, on SQLite and PostgreSQL alike. */
export function startsWith(prefix: string): RawBuilder<string> {
  return sql<string>`${`${escapeLike(prefix)}%`} escape '\\'`;
}

/** A LIKE pattern for values that contain `part` taken literally, on SQLite and PostgreSQL alike. */
export function contains(part: string): RawBuilder<string> {
  return sql<string>`${`%${escapeLike(part)}%`} escape '\\'`;
}
