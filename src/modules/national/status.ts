import type { NationalFilePartStatus } from '../../registries/national-file.js';
import type { NationalSource } from '../../registries/national-port.js';

/** The registers answered from a local copy of their published files. */
export type FileSource = 'si_furs' | 'lv_vid';

/** One national register as `GET /v1/status` shows it. */
export interface NationalRegisterStatus {
  source: NationalSource;
  country: string;
  breaker: 'closed' | 'open' | 'half_open';
  retry_after_seconds: number | null;
  last_answer_at: string | null;
  last_failure_at: string | null;
  last_failure: string | null;
  /** The published files' date the answers come from (SI, LV; the oldest part's), else null. */
  data_date: string | null;
  /** When the files were last confirmed current (SI, LV), else null. */
  files_checked_at: string | null;
  /** The local copy of the published files (SI, LV), else null. */
  files: NationalFilesView | null;
}

/** What the status routes read of the national registers. */
export interface NationalRegistersStatus {
  status(): Promise<NationalRegisterStatus[]>;
}

/** A file register's local copy: whether it answers, its date, and each part (one published file). */
export interface NationalFileCopyStatus {
  source: FileSource;
  /** `current`: every part held and the oldest at most `OPENVAT_REGISTERS_MAX_AGE_DAYS` old; `stale`: older; `missing`: a part never synced. */
  state: 'current' | 'stale' | 'missing';
  /** The oldest part's file date (what answers carry as `data_date`), or null before a first sync. */
  dataDate: string | null;
  /** The parts a whole copy has. */
  expected: readonly string[];
  parts: NationalFilePartStatus[];
  /** The register's last sync run (any instance's, or the CLI's), or null before the first. */
  lastSync: {
    lastRunAt: string | null;
    lastSuccessAt: string | null;
    /** The files that failed in the last run, and why; null when it synced every one. */
    lastError: string | null;
    /** When the schedule runs it next; null when the schedule is off. */
    nextRunAt: string | null;
  } | null;
}

/** A file register's copy as `GET /v1/status` shows it in `files`. */
export interface NationalFilesView {
  state: 'current' | 'stale' | 'missing';
  parts: { part: string; data_date: string; rows: number; fetched_at: string; checked_at: string }[];
  last_sync_at: string | null;
  last_sync_success_at: string | null;
  last_sync_error: string | null;
  next_sync_at: string | null;
}

/** A file register's copy as `GET /v1/status` and `openvat registers status --json` show it. */
export function fileCopyView(
  copy: NationalFileCopyStatus,
): NationalFilesView & { source: FileSource; data_date: string | null } {
  return {
    source: copy.source,
    state: copy.state,
    data_date: copy.dataDate,
    parts: copy.parts.map((part) => ({
      part: part.part,
      data_date: part.dataDate,
      rows: part.rows,
      fetched_at: part.fetchedAt.toISOString(),
      checked_at: part.checkedAt.toISOString(),
    })),
    last_sync_at: copy.lastSync?.lastRunAt ?? null,
    last_sync_success_at: copy.lastSync?.lastSuccessAt ?? null,
    last_sync_error: copy.lastSync?.lastError ?? null,
    next_sync_at: copy.lastSync?.nextRunAt ?? null,
  };
}
