import type { Migration, MigrationProvider } from 'kysely';
import * as keys from './2026-11-22-001-keys.js';
import * as auditsEvents from './2026-11-22-002-audits-events.js';

/**
 * Every migration, in order. Forward-only: a migration that has been released is never edited;
 * a change is a new file. The names sort in the order they run.
 */
const migrations: Record<string, Migration> = {
  '2026-11-22-001-keys': keys,
  '2026-11-22-002-audits-events': auditsEvents,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
