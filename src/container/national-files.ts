/**
 * The sync of the national registers' published files (SI FURS, LV VID) into their copy in the
 * database: each register's run claimed under a lease (`national_file_syncs`), so one instance at a
 * time downloads its files, whether the schedule (`OPENVAT_REGISTERS_SYNC_MS`) or
 * `openvat registers sync` started it; how the last run ended is kept beside it for every instance.
 */
import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import type { FileSource, NationalFileCopyStatus } from '../modules/national/index.js';
import type { NationalFileSyncsRepository } from '../modules/national/repository.js';
import { LV_VID_FILES } from '../registries/lv-vid.js';
import { zoneDate } from '../registries/national-common.js';
import { daysBetween, type NationalFileIndex } from '../registries/national-file.js';
import { createFileDownloader } from '../registries/national-file-download.js';
import { type NationalFileSyncResult, syncNationalFiles } from '../registries/national-file-sync.js';
import { SI_FURS_FILES } from '../registries/si-furs.js';

const FILE_SPECS = { si_furs: SI_FURS_FILES, lv_vid: LV_VID_FILES } as const;
/** A run holds its register this long at most (a crashed instance's run is taken over after it). */
const LEASE_MS = 30 * 60_000;
/** A run that did not sync every file is tried again this soon (or at the schedule, if sooner). */
const RETRY_MS = 60 * 60_000;
/** When the schedule is off (`0`), the next run a claim sees as due: never, in effect. */
const UNSCHEDULED_MS = 365 * 86_400_000;

/** A register's sync run: what each file did, or that another instance holds the run now. */
export type NationalFileSyncRun = NationalFileSyncResult & { busy: boolean };

export interface NationalFileSync {
  readonly fileSources: readonly FileSource[];
  /** Syncs now, whatever the schedule (the CLI); a register another instance is syncing is `busy`. */
  syncNow(only?: readonly FileSource[]): Promise<NationalFileSyncRun[]>;
  /** The scheduled run: each register whose sync is due and free; the runs made. */
  syncDue(): Promise<NationalFileSyncRun[]>;
  /** Each file register's copy as held, with its last sync run. */
  files(): Promise<NationalFileCopyStatus[]>;
}

export function createNationalFileSync(deps: {
  config: Config;
  clock: Clock;
  index: NationalFileIndex;
  syncs: NationalFileSyncsRepository;
  workerId: string;
}): NationalFileSync {
  const { config, clock, index, syncs, workerId } = deps;
  const national = config.national;
  const on = new Set(national.enabled);
  const fileSources = (['si_furs', 'lv_vid'] as const).filter((source) => on.has(source));
  const download = createFileDownloader();
  const now = () => clock.now();

  function sync(source: FileSource): Promise<NationalFileSyncResult> {
    const spec = FILE_SPECS[source];
    const minRows = national.minRows;
    return syncNationalFiles({
      spec,
      baseUrl: source === 'si_furs' ? national.siUrl : national.lvUrl,
      index,
      download,
      timeoutMs: Math.max(national.timeoutMs, 60_000),
      ...(minRows !== null
        ? { minRows: Object.fromEntries(spec.parts.map((part) => [part.part, minRows])) }
        : {}),
      now,
    });
  }

  /** One register's run under its lease; `null` when not claimed (not due, or held elsewhere). */
  async function run(source: FileSource, evenIfNotDue: boolean): Promise<NationalFileSyncRun | null> {
    const started = now();
    const leaseUntil = new Date(started.getTime() + LEASE_MS).toISOString();
    const claimed = await syncs.claim(source, workerId, started.toISOString(), leaseUntil, { evenIfNotDue });
    if (!claimed) return null;
    let result: NationalFileSyncResult;
    try {
      result = await sync(source);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      result = { source, ok: false, parts: [{ part: '*', outcome: 'failed', reason: 'down', message }] };
    }
    const every = national.syncEveryMs > 0 ? national.syncEveryMs : UNSCHEDULED_MS;
    const error = result.parts
      .flatMap((part) => (part.outcome === 'failed' ? [`${part.part}: ${part.message}`] : []))
      .join('; ');
    await syncs.finish(source, workerId, {
      at: now().toISOString(),
      nextRunAt: new Date(started.getTime() + (result.ok ? every : Math.min(every, RETRY_MS))).toISOString(),
      error: result.ok ? null : error,
    });
    return { ...result, busy: false };
  }

  async function syncNow(only?: readonly FileSource[]): Promise<NationalFileSyncRun[]> {
    const runs: NationalFileSyncRun[] = [];
    for (const source of fileSources.filter((chosen) => !only || only.includes(chosen))) {
      runs.push((await run(source, true)) ?? { source, ok: false, parts: [], busy: true });
    }
    return runs;
  }

  async function syncDue(): Promise<NationalFileSyncRun[]> {
    const runs: NationalFileSyncRun[] = [];
    for (const source of fileSources) {
      const made = await run(source, false);
      if (made) runs.push(made);
    }
    return runs;
  }

  async function files(): Promise<NationalFileCopyStatus[]> {
    const lastRuns = new Map((await syncs.list()).map((row) => [row.id, row]));
    return Promise.all(
      fileSources.map(async (source) => {
        const spec = FILE_SPECS[source];
        const expected = spec.parts.map((part) => part.part);
        const parts = (await index.parts(source)).filter((part) => expected.includes(part.part));
        const dataDate = parts.map((part) => part.dataDate).sort()[0] ?? null;
        const whole = expected.every((part) => parts.some((held) => held.part === part));
        const age = dataDate ? daysBetween(dataDate, zoneDate(spec.timeZone, clock.now())) : Number.NaN;
        const state = !whole ? 'missing' : age <= national.maxAgeDays ? 'current' : 'stale';
        const last = lastRuns.get(source);
        const lastSync = last
          ? {
              lastRunAt: last.last_run_at,
              lastSuccessAt: last.last_success_at,
              lastError: last.last_error,
              nextRunAt: national.syncEveryMs > 0 ? last.next_run_at : null,
            }
          : null;
        return { source, state, dataDate, expected, parts, lastSync } satisfies NationalFileCopyStatus;
      }),
    );
  }

  return { fileSources, syncNow, syncDue, files };
}
