import type { NationalSource } from '../../registries/national-port.js';

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
}

/** What the status routes read of the national registers. */
export interface NationalRegistersStatus {
  status(): Promise<NationalRegisterStatus[]>;
}
