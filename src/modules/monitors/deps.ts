import type { QuietWindow } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { KeyState } from '../keys/index.js';
import type { Outbox } from '../outbox/index.js';
import type { PeppolPort } from '../peppol/index.js';
import type { AnswerSource, ValidationService } from '../validation/index.js';
import type { MonitorsRepository } from './repository.js';

export interface MonitorsDeps {
  db: Db;
  repository: MonitorsRepository;
  validation: Pick<ValidationService, 'validate' | 'parse'>;
  /** The Peppol look-up of monitors created with `"peppol": true`. */
  peppol: PeppolPort;
  /** The validate test table, which test-mode monitors fall back on for other numbers. */
  testAnswers: AnswerSource;
  /** Records each check with its audit record, events and registry answer. */
  outbox: Pick<Outbox, 'record'>;
  clock: Clock;
  ids: IdGenerator;
  /** Identifies this process's leases. */
  workerId: string;
  /** Whether a monitor's key may still be used (the monitors of a key that may not are not checked). */
  keyState: (keyId: string) => Promise<KeyState>;
  maxPerKey: Readonly<Record<'pro' | 'business', number>>;
  perCountry: number;
  leaseMs: number;
  retryBackoffMs: number;
  staleAfterMs: number;
  /** Days a check is kept in a monitor's history (its changes are kept as long as the monitor). */
  checkRetentionDays: number;
  quietWindows: ReadonlyArray<QuietWindow>;
  /** Called when monitors were queued for their first check (wakes the scheduler). */
  onQueued?: () => void;
  random?: () => number;
}
