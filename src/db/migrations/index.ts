import type { Migration, MigrationProvider } from 'kysely';

/**
 * Every migration, in order, each loaded when the migrations are run. Forward-only: a migration
 * that has been released is never edited; a change is a new file. The names sort in the order they
 * run.
 */
const migrations: Record<string, () => Promise<Migration>> = {
  '2026-11-22-001-keys': () => import('./2026-11-22-001-keys.js'),
  '2026-11-22-002-audits-events': () => import('./2026-11-22-002-audits-events.js'),
  '2026-11-22-003-webhooks': () => import('./2026-11-22-003-webhooks.js'),
  '2026-11-22-004-confirmations': () => import('./2026-11-22-004-confirmations.js'),
  '2026-11-22-005-registry-answers': () => import('./2026-11-22-005-registry-answers.js'),
  '2026-11-22-006-batch': () => import('./2026-11-22-006-batch.js'),
  '2026-11-22-007-batch-claim-index': () => import('./2026-11-22-007-batch-claim-index.js'),
  '2026-11-22-008-usage': () => import('./2026-11-22-008-usage.js'),
  '2026-11-23-001-instances': () => import('./2026-11-23-001-instances.js'),
  '2026-11-23-016-evidence-head-signature': () => import('./2026-11-23-016-evidence-head-signature.js'),
  '2026-11-23-017-monitors': () => import('./2026-11-23-017-monitors.js'),
  '2026-11-26-001-webhook-claim-indexes': () => import('./2026-11-26-001-webhook-claim-indexes.js'),
  '2026-11-26-002-retention': () => import('./2026-11-26-002-retention.js'),
  '2026-11-27-010-upstream-text': () => import('./2026-11-27-010-upstream-text.js'),
  '2026-11-27-011-evidence-acknowledgements': () => import('./2026-11-27-011-evidence-acknowledgements.js'),
  '2026-11-27-020-audit-delivery': () => import('./2026-11-27-020-audit-delivery.js'),
  '2026-11-27-030-monitor-visitor': () => import('./2026-11-27-030-monitor-visitor.js'),
  '2026-11-27-040-batch-fair-claim': () => import('./2026-11-27-040-batch-fair-claim.js'),
  '2026-11-27-041-webhook-key-share': () => import('./2026-11-27-041-webhook-key-share.js'),
  '2026-11-27-050-rate-changes': () => import('./2026-11-27-050-rate-changes.js'),
  '2026-11-27-070-admin': () => import('./2026-11-27-070-admin.js'),
  '2026-11-28-100-admin-audit-retention': () => import('./2026-11-28-100-admin-audit-retention.js'),
  '2026-11-28-110-rates-events': () => import('./2026-11-28-110-rates-events.js'),
  '2026-11-28-120-evidence-timestamps': () => import('./2026-11-28-120-evidence-timestamps.js'),
  '2026-11-29-010-key-quota-share': () => import('./2026-11-29-010-key-quota-share.js'),
  '2026-12-02-400-batch-item-claim': () => import('./2026-12-02-400-batch-item-claim.js'),
  '2026-12-02-500-peppol-answers': () => import('./2026-12-02-500-peppol-answers.js'),
  '2026-12-02-300-eori-answers': () => import('./2026-12-02-300-eori-answers.js'),
  '2026-12-02-210-national-files': () => import('./2026-12-02-210-national-files.js'),
  '2026-12-02-600-batch-include': () => import('./2026-12-02-600-batch-include.js'),
  '2026-12-02-610-monitor-peppol': () => import('./2026-12-02-610-monitor-peppol.js'),
  '2026-12-02-620-register-sources': () => import('./2026-12-02-620-register-sources.js'),
  '2026-12-03-100-evidence-run-success': () => import('./2026-12-03-100-evidence-run-success.js'),
};

/**
 * The name of every migration, without loading one: a database that has applied them all (every
 * start but the first after an upgrade, every command) loads none of them.
 */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations);

export const migrationProvider: MigrationProvider = {
  getMigrations: async () =>
    Object.fromEntries(
      await Promise.all(
        Object.entries(migrations).map(async ([name, load]) => [name, await load()] as const),
      ),
    ),
};
