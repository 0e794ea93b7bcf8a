/**
 * The files of a validate-file run: the results file it writes, and the earlier run's it resumes
 * (read along with the input, then replaced by its successor).
 */
import { appendFileSync, existsSync, renameSync, writeFileSync } from 'node:fs';
import { csvRecords, formatCsvRow, formatCsvRows } from './csv.js';

/** An earlier run's rows, one per input row in order, read along with the input. */
export interface PreviousRun {
  /** Whether there was an earlier run's file (then this run writes to its successor). */
  exists: boolean;
  /** Its next row; null at its end, and from a row shorter than the header or malformed on. */
  next(): Promise<string[] | null>;
  close(): Promise<void>;
}

export async function openPreviousRun(
  out: string,
  header: string[],
  delimiter: string,
): Promise<PreviousRun> {
  let old: AsyncGenerator<{ record: string[] }> | null = null;
  if (existsSync(out)) {
    old = csvRecords(out, delimiter);
    const oldHeader = await old.next().catch(() => ({ done: true as const, value: undefined }));
    if (
      oldHeader.done ||
      formatCsvRow(oldHeader.value.record, delimiter) !== formatCsvRow(header, delimiter)
    ) {
      await old.return(undefined);
      throw new Error(`${out} exists but has other columns; remove it or choose another --out`);
    }
  }
  const exists = old !== null;
  async function close() {
    if (old) await old.return(undefined);
    old = null;
  }
  async function next(): Promise<string[] | null> {
    if (!old) return null;
    try {
      const next = await old.next();
      // A row shorter than the header is the half-written end of an interrupted run.
      if (!next.done && next.value.record.length >= header.length) return next.value.record;
    } catch {
      // A malformed end (an interrupted write inside quotes): what follows is validated again.
    }
    await close();
    return null;
  }
  return { exists, next, close };
}

/**
 * The results file, created with the first rows it gets (or at the end of an empty input), never
 * before the back end has answered: a service that cannot be reached leaves no file of a header alone.
 */
export function createResultsFile(target: string, header: string[], delimiter: string) {
  let made = false;
  function write(rows: string[][]) {
    if (!made) {
      writeFileSync(target, formatCsvRow(header, delimiter));
      made = true;
    }
    if (rows.length > 0) appendFileSync(target, formatCsvRows(rows, delimiter));
  }
  function created() {
    return made;
  }
  return { write, created };
}

export type ResultsFile = ReturnType<typeof createResultsFile>;

/**
 * Resuming: the earlier run's file is replaced by its successor (only when this run wrote to it;
 * one that failed before writing anything leaves it as it was). A run that failed part-way loses
 * nothing of the earlier run: its remaining rows follow unchanged.
 */
export async function replacePreviousRun(run: {
  target: string;
  out: string;
  /** When the run failed part-way: its rows not written yet (the validated ones and the kept ones). */
  unwritten: string[][] | null;
  previous: PreviousRun;
  delimiter: string;
}) {
  const { target, out, unwritten, previous, delimiter } = run;
  if (unwritten !== null) {
    const kept = [...unwritten];
    for (let row = await previous.next(); row !== null; row = await previous.next()) kept.push(row);
    if (kept.length > 0) appendFileSync(target, formatCsvRows(kept, delimiter));
  }
  renameSync(target, out);
}
