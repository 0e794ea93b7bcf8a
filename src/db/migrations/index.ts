import type { Migration, MigrationProvider } from 'kysely';
import * as keys from './2026-11-22-001-keys.js';
import * as auditsEvents from './2026-11-22-002-audits-events.js';
import * as webhooks from './2026-11-22-003-webhooks.js';
import * as confirmations from './2026-11-22-004-confirmations.js';
import * as registryAnswers from './2026-11-22-005-registry-answers.js';
import * as batch from './2026-11-22-006-batch.js';
import * as batchClaimIndex from './2026-11-22-007-batch-claim-index.js';
import * as usage from './2026-11-22-008-usage.js';
import * as instances from './2026-11-23-001-instances.js';
import * as evidenceHeadSignature from './2026-11-23-016-evidence-head-signature.js';
import * as monitors from './2026-11-23-017-monitors.js';
import * as webhookClaimIndexes from './2026-11-26-001-webhook-claim-indexes.js';
import * as retention from './2026-11-26-002-retention.js';
import * as upstreamText from './2026-11-27-010-upstream-text.js';
import * as evidenceAcknowledgements from './2026-11-27-011-evidence-acknowledgements.js';
import * as auditDelivery from './2026-11-27-020-audit-delivery.js';
import * as monitorVisitor from './2026-11-27-030-monitor-visitor.js';
import * as batchFairClaim from './2026-11-27-040-batch-fair-claim.js';
import * as webhookKeyShare from './2026-11-27-041-webhook-key-share.js';
import * as rateChanges from './2026-11-27-050-rate-changes.js';
import * as admin from './2026-11-27-070-admin.js';
import * as adminAuditRetention from './2026-11-28-100-admin-audit-retention.js';
import * as ratesEvents from './2026-11-28-110-rates-events.js';
import * as evidenceTimestamps from './2026-11-28-120-evidence-timestamps.js';
import * as keyQuotaShare from './2026-11-29-010-key-quota-share.js';
import * as nationalFiles from './2026-12-02-210-national-files.js';
import * as eoriAnswers from './2026-12-02-300-eori-answers.js';
import * as batchItemClaim from './2026-12-02-400-batch-item-claim.js';
import * as peppolAnswers from './2026-12-02-500-peppol-answers.js';
import * as batchInclude from './2026-12-02-600-batch-include.js';
import * as monitorPeppol from './2026-12-02-610-monitor-peppol.js';
import * as registerSources from './2026-12-02-620-register-sources.js';
import * as evidenceRunSuccess from './2026-12-03-100-evidence-run-success.js';

/**
 * Every migration, in order. Forward-only: a migration that has been released is never edited;
 * a change is a new file. The names sort in the order they run.
 */
const migrations: Record<string, Migration> = {
  '2026-11-22-001-keys': keys,
  '2026-11-22-002-audits-events': auditsEvents,
  '2026-11-22-003-webhooks': webhooks,
  '2026-11-22-004-confirmations': confirmations,
  '2026-11-22-005-registry-answers': registryAnswers,
  '2026-11-22-006-batch': batch,
  '2026-11-22-007-batch-claim-index': batchClaimIndex,
  '2026-11-22-008-usage': usage,
  '2026-11-23-001-instances': instances,
  '2026-11-23-016-evidence-head-signature': evidenceHeadSignature,
  '2026-11-23-017-monitors': monitors,
  '2026-11-26-001-webhook-claim-indexes': webhookClaimIndexes,
  '2026-11-26-002-retention': retention,
  '2026-11-27-010-upstream-text': upstreamText,
  '2026-11-27-011-evidence-acknowledgements': evidenceAcknowledgements,
  '2026-11-27-020-audit-delivery': auditDelivery,
  '2026-11-27-030-monitor-visitor': monitorVisitor,
  '2026-11-27-040-batch-fair-claim': batchFairClaim,
  '2026-11-27-041-webhook-key-share': webhookKeyShare,
  '2026-11-27-050-rate-changes': rateChanges,
  '2026-11-27-070-admin': admin,
  '2026-11-28-100-admin-audit-retention': adminAuditRetention,
  '2026-11-28-110-rates-events': ratesEvents,
  '2026-11-28-120-evidence-timestamps': evidenceTimestamps,
  '2026-11-29-010-key-quota-share': keyQuotaShare,
  '2026-12-02-400-batch-item-claim': batchItemClaim,
  '2026-12-02-500-peppol-answers': peppolAnswers,
  '2026-12-02-300-eori-answers': eoriAnswers,
  '2026-12-02-210-national-files': nationalFiles,
  '2026-12-02-600-batch-include': batchInclude,
  '2026-12-02-610-monitor-peppol': monitorPeppol,
  '2026-12-02-620-register-sources': registerSources,
  '2026-12-03-100-evidence-run-success': evidenceRunSuccess,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
