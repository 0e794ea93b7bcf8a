/**
 * What a validate-file run tells as it goes and at its end: the progress bar on stderr, the rows
 * that failed (by country), Ctrl-C, and the closing line.
 */
import { statSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { counted, grouped } from './counts.js';

/** Where a row with `invalid_format` is counted: a malformed number is no country's failure. */
const MALFORMED = 'malformed';

function countryOf(input: string, normalised: string): string {
  const prefix = (normalised || input)
    .replace(/[^A-Za-z]/g, '')
    .slice(0, 2)
    .toUpperCase();
  return prefix.length === 2 ? prefix : '??';
}

/** What a run has done so far: rows validated, kept from the earlier run, retried, read; bytes read. */
export interface Tally {
  processed: number;
  skipped: number;
  retried: number;
  total: number;
  bytes: number;
}

/** The rows that failed, by country (or malformed). */
export function createFailureTally(columns: { error: number; normalised: number }) {
  const failures = new Map<string, number>();
  let total = 0;
  function count(fields: string[], inputNumber: string) {
    const code = fields[columns.error] ?? '';
    if (code === '') return;
    total += 1;
    const group =
      code === 'invalid_format' ? MALFORMED : countryOf(inputNumber, fields[columns.normalised] ?? '');
    failures.set(group, (failures.get(group) ?? 0) + 1);
  }
  function describe() {
    const malformed = failures.get(MALFORMED) ?? 0;
    const countries = [...failures]
      .filter(([group]) => group !== MALFORMED)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([c, n]) => `${c} ${n}`)
      .join(', ');
    const parts = [
      ...(malformed > 0 ? [`${MALFORMED} ${malformed}`] : []),
      ...(countries ? [`by country: ${countries}`] : []),
    ];
    return parts.join('; ') || 'none';
  }
  function failed() {
    return total;
  }
  return { count, describe, failed };
}

export type FailureTally = ReturnType<typeof createFailureTally>;

/** The progress bar on stderr, by bytes of the input read. */
export function startProgress(
  stderr: NodeJS.WritableStream,
  path: string,
  options: { progress?: boolean },
  tally: Tally,
  describeFailures: () => string,
) {
  const started = Date.now();
  const size = Math.max(1, statSync(path).size);
  const bar = new SingleBar({
    stream: stderr,
    format: '{bar} {percentage}% | {rows} rows | {speed}/s | ETA {eta_formatted} | failed: {failures}',
    etaBuffer: 200,
    hideCursor: true,
    noTTYOutput: options.progress === true,
  });
  const rate = () => (tally.processed / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
  function tick() {
    bar.update(tally.bytes, {
      rows: grouped(tally.skipped + tally.processed),
      speed: rate(),
      failures: describeFailures(),
    });
  }
  function stop() {
    bar.stop();
  }
  bar.start(size, 0, { rows: '0', speed: '0.0', failures: 'none' });
  return { tick, stop };
}

/** Ctrl-C (or SIGTERM) stops the run after the current chunk. */
export function listenForInterrupt() {
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  function stopping() {
    return stopped;
  }
  function remove() {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
  return { stopping, remove };
}

/** The line that ends a run: what it validated, kept and failed. */
export function summary(
  tally: Tally,
  failures: FailureTally,
  run: { out: string; path: string; stoppedEarly: boolean },
): string {
  const { processed, retried, skipped } = tally;
  const failed = failures.failed();
  return `${counted(processed, 'row', 'rows')} validated${retried > 0 ? ` (${grouped(retried)} retried after registry_unavailable)` : ''}, ${grouped(skipped)} already in ${run.out}; ${counted(skipped + processed, 'row', 'rows')} in it${run.stoppedEarly ? ` (stopped before the end of ${run.path}; run again to go on)` : ''}. Failed: ${failed === 0 ? 'none' : `${grouped(failed)} (${failures.describe()})`}\n`;
}
