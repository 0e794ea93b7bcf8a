/** The work done besides answering: confirmations' bursts, webhooks, batch jobs and monitors. */
import { bool, DAY, type Env, int, parseQuietWindows, str } from './readers.js';
import type { Config } from './types.js';

export function confirmations(env: Env): Config['confirmations'] {
  return {
    burst: int(env, 'OPENVAT_CONFIRM_BURST', 10, 1, 100_000),
    burstWindowSeconds: int(env, 'OPENVAT_CONFIRM_BURST_WINDOW', 10, 1, 86_400),
  };
}

export function webhooks(env: Env): Config['webhooks'] {
  return {
    allowPrivate: bool(env, 'OPENVAT_WEBHOOKS_ALLOW_PRIVATE', false),
    backoffMs: int(env, 'OPENVAT_WEBHOOK_BACKOFF_MS', 30_000, 1, 86_400_000),
  };
}

export function batch(env: Env): Config['batch'] {
  return {
    concurrency: int(env, 'OPENVAT_BATCH_CONCURRENCY', 256, 1, 10_000),
    leaseMs: int(env, 'OPENVAT_BATCH_LEASE_MS', 120_000, 100, 86_400_000),
    retryDeadlineMs: int(env, 'OPENVAT_BATCH_RETRY_DEADLINE_MS', 3_600_000, 0, 7 * 86_400_000),
    retryBackoffMs: int(env, 'OPENVAT_BATCH_RETRY_BACKOFF_MS', 5_000, 1, 3_600_000),
    jobRetentionDays: int(env, 'OPENVAT_BATCH_JOB_RETENTION_DAYS', 30, 1, 36_500),
  };
}

export function monitors(env: Env): Config['monitors'] {
  return {
    maxPerKey: {
      pro: int(env, 'OPENVAT_MONITORS_PRO', 10_000, 0, 100_000_000),
      business: int(env, 'OPENVAT_MONITORS_BUSINESS', 100_000, 0, 100_000_000),
    },
    concurrency: int(env, 'OPENVAT_MONITOR_CONCURRENCY', 32, 1, 10_000),
    perCountry: int(
      env,
      'OPENVAT_MONITOR_PER_COUNTRY',
      Math.max(1, int(env, 'OPENVAT_REGISTRY_CONCURRENCY', 2, 1, 1_000) - 1),
      1,
      1_000,
    ),
    leaseMs: int(env, 'OPENVAT_MONITOR_LEASE_MS', 120_000, 100, 86_400_000),
    retryBackoffMs: int(env, 'OPENVAT_MONITOR_RETRY_BACKOFF_MS', 60_000, 1, 86_400_000),
    staleAfterMs: int(env, 'OPENVAT_MONITOR_STALE_AFTER_MS', 3 * DAY * 1000, 0, 365 * DAY * 1000),
    checkRetentionDays: int(env, 'OPENVAT_MONITOR_CHECK_RETENTION_DAYS', 90, 1, 36_500),
    // VIES's published "unavailability shift" for Germany: daily 23:00–01:30 CET (21:00–00:30 UTC
    // covers it in summer time and in winter time).
    quietWindows: parseQuietWindows(
      'OPENVAT_MONITOR_QUIET_WINDOWS',
      str(env, 'OPENVAT_MONITOR_QUIET_WINDOWS', 'DE=21:00-00:30'),
    ),
  };
}
