import { appendFileSync, existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import type { Config } from '../config.js';
import type { BatchItemResult } from '../modules/batch/service.js';
import { counted } from './counts.js';
import { csvRecords, formatCsvRow, formatCsvRows, openCsvInput } from './csv.js';
import { checkInputFile, checkOutputFile, spreadsheetSafe } from './input-file.js';
import { directValidator, remoteValidator, type Validator } from './validate-backends.js';

// ---------------------------------------------------------------------------------------------
// Input and output

export const RESULT_COLUMNS = [
  'vat_valid',
  'vat_normalised',
  'vat_company_name',
  'vat_company_address',
  'vat_error',
  'vat_checked_at',
] as const;

function resultFields(result: BatchItemResult): string[] {
  if (!result.ok) return ['', '', '', '', result.error.code, ''];
  const { data } = result;
  return [
    String(data.valid),
    data.vat_number,
    // Registry text; the normalised number (letters and digits) and our own columns need no guard.
    spreadsheetSafe(data.company?.name ?? ''),
    spreadsheetSafe(data.company?.address ?? ''),
    '',
    data.verified_at,
  ];
}

// ---------------------------------------------------------------------------------------------
// The command

export interface ValidateFileOptions {
  column?: string;
  out?: string;
  url?: string;
  key?: string;
  sync?: boolean;
  chunk?: number;
  limit?: number;
  pollMs?: number;
  progress?: boolean;
}

/** Where a row with `invalid_format` is counted: a malformed number is no country's failure. */
const MALFORMED = 'malformed';

function countryOf(input: string, normalised: string): string {
  const prefix = (normalised || input)
    .replace(/[^A-Za-z]/g, '')
    .slice(0, 2)
    .toUpperCase();
  return prefix.length === 2 ? prefix : '??';
}

interface Entry {
  /** The row as written: the input fields padded to the header, then the results. */
  output: string[] | null;
  row: string[];
  number: string;
  old: string[] | null;
}

/**
 * Validates a file's numbers into `<input>.results.csv` (or `--out`), streaming both. A results
 * file from an earlier run is resumed: its rows are kept, except those that failed with
 * `registry_unavailable` and a partly written last row, which are validated again; it is then
 * rewritten through `<out>.partial` and replaced at the end (or on Ctrl-C, after the current chunk).
 */
export async function validateFile(
  path: string,
  options: ValidateFileOptions,
  config: () => Config,
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<{
  out: string;
  processed: number;
  skipped: number;
  retried: number;
  failed: number;
  total: number;
}> {
  checkInputFile(path);
  const out = options.out ?? `${path}.results.csv`;
  checkOutputFile(out, path);
  const csv = await openCsvInput(path, options.column);
  const { delimiter, header: inputHeader } = csv;
  const input = csv.rows;
  // The whole input is read once before anything is written: a file that breaks a rule leaves no
  // output behind (and an earlier run's output untouched).
  try {
    for await (const _ of csvRecords(path, delimiter)) {
      // parsing is the check
    }
  } catch (error) {
    await csv.close();
    throw error;
  }
  const { column } = csv;
  const header = [...inputHeader, ...RESULT_COLUMNS];
  const errorColumn = inputHeader.length + RESULT_COLUMNS.indexOf('vat_error');
  const normalisedColumn = inputHeader.length + RESULT_COLUMNS.indexOf('vat_normalised');

  // An earlier run's rows, one per input row in order, read along with the input.
  let old: AsyncGenerator<{ record: string[] }> | null = null;
  let target = out;
  if (existsSync(out)) {
    old = csvRecords(out, delimiter);
    const oldHeader = await old.next().catch(() => ({ done: true as const, value: undefined }));
    if (
      oldHeader.done ||
      formatCsvRow(oldHeader.value.record, delimiter) !== formatCsvRow(header, delimiter)
    ) {
      await old.return(undefined);
      await csv.close();
      throw new Error(`${out} exists but has other columns; remove it or choose another --out`);
    }
    target = `${out}.partial`;
  }
  const nextOld = async (): Promise<string[] | null> => {
    if (!old) return null;
    try {
      const next = await old.next();
      // A row shorter than the header is the half-written end of an interrupted run.
      if (!next.done && next.value.record.length >= header.length) return next.value.record;
    } catch {
      // A malformed end (an interrupted write inside quotes): what follows is validated again.
    }
    await old.return(undefined);
    old = null;
    return null;
  };

  let backend: { validate: Validator; close: () => Promise<void> };
  if (options.url) {
    if (!options.key) {
      await csv.close();
      if (old) await old.return(undefined);
      throw new Error('--url needs --key (an API key of a Pro or Business plan)');
    }
    backend = {
      validate: remoteValidator({
        url: options.url,
        key: options.key,
        sync: options.sync === true,
        pollMs: options.pollMs ?? 1_000,
      }),
      close: async () => {},
    };
  } else {
    try {
      backend = await directValidator(config(), options.key);
    } catch (error) {
      await csv.close();
      if (old) await old.return(undefined);
      throw error;
    }
  }
  // Created with the first rows it gets (or at the end of an empty input), never before the back
  // end has answered: a service that cannot be reached leaves no file of a header alone.
  let created = false;
  const write = (rows: string[][]) => {
    if (!created) {
      writeFileSync(target, formatCsvRow(header, delimiter));
      created = true;
    }
    if (rows.length > 0) appendFileSync(target, formatCsvRows(rows, delimiter));
  };
  const chunkSize = options.chunk ?? (options.url && !options.sync ? 1_000 : 100);
  const failures = new Map<string, number>();
  let failed = 0;
  const describeFailures = () => {
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
  };
  const started = Date.now();
  const size = Math.max(1, statSync(path).size);
  const bar = new SingleBar({
    stream: stderr,
    format: '{bar} {percentage}% | {rows} rows | {speed}/s | ETA {eta_formatted} | failed: {failures}',
    etaBuffer: 200,
    hideCursor: true,
    noTTYOutput: options.progress === true,
  });
  let processed = 0;
  let skipped = 0;
  let retried = 0;
  let total = 0;
  let bytes = 0;
  const rate = () => (processed / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
  const tick = () =>
    bar.update(bytes, {
      rows: (skipped + processed).toLocaleString('en'),
      speed: rate(),
      failures: describeFailures(),
    });
  bar.start(size, 0, { rows: '0', speed: '0.0', failures: 'none' });

  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const queue: Entry[] = [];
  let pendingCount = 0;
  const count = (fields: string[], inputNumber: string) => {
    const code = fields[errorColumn] ?? '';
    if (code === '') return;
    failed += 1;
    const group =
      code === 'invalid_format' ? MALFORMED : countryOf(inputNumber, fields[normalisedColumn] ?? '');
    failures.set(group, (failures.get(group) ?? 0) + 1);
  };
  const flush = async () => {
    const todo = queue.filter((e) => e.output === null);
    pendingCount = 0;
    if (todo.length > 0) {
      const results = await backend.validate(
        todo.map((e) => e.number),
        () => tick(),
      );
      todo.forEach((entry, j) => {
        const padded = inputHeader.map((_, k) => entry.row[k] ?? '');
        entry.output = [...padded, ...resultFields(results[j] as BatchItemResult)];
        if (entry.old) retried += 1;
      });
      processed += todo.length;
    }
    for (const entry of queue) count(entry.output as string[], entry.number);
    if (queue.length > 0) write(queue.map((e) => e.output as string[]));
    queue.length = 0;
    tick();
  };

  let complete = false;
  let stoppedEarly = false;
  try {
    let validations = 0;
    stoppedEarly = false;
    for await (const { record, bytes: read } of input) {
      bytes = read;
      total += 1;
      const previous = await nextOld();
      const retry = previous !== null && previous[errorColumn] === 'registry_unavailable';
      const number = (record[column] ?? '').trim();
      if (
        previous !== null &&
        (!retry || stopping || (options.limit !== undefined && validations >= options.limit))
      ) {
        queue.push({ output: previous, row: record, number, old: previous });
        skipped += 1;
      } else {
        if (stopping || (options.limit !== undefined && validations >= options.limit)) {
          stoppedEarly = true;
          break;
        }
        queue.push({ output: null, row: record, number, old: previous });
        pendingCount += 1;
        validations += 1;
      }
      if (pendingCount >= chunkSize || (pendingCount === 0 && queue.length >= 1_000)) await flush();
    }
    await flush();
    // An input without rows still gets its results file (of the header).
    write([]);
    complete = true;
  } catch (error) {
    if (!created && error instanceof Error)
      error.message += target === out ? `; nothing was written to ${out}` : `; ${out} is as it was`;
    throw error;
  } finally {
    bar.stop();
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await backend.close();
    // Resuming: the earlier run's file is replaced only when this run wrote to its successor; one
    // that failed before writing anything leaves it as it was.
    if (target !== out && created) {
      if (!complete) {
        // Failed part-way: nothing of the earlier run is lost; its remaining rows follow unchanged.
        const kept = queue.filter((e) => e.output !== null || e.old !== null).map((e) => e.output ?? e.old);
        for (let row = await nextOld(); row !== null; row = await nextOld()) kept.push(row);
        if (kept.length > 0) appendFileSync(target, formatCsvRows(kept as string[][], delimiter));
      }
      renameSync(target, out);
    }
    if (old) await (old as AsyncGenerator).return(undefined);
  }
  stderr.write(
    `${counted(processed, 'row', 'rows')} validated${retried > 0 ? ` (${retried.toLocaleString('en')} retried after registry_unavailable)` : ''}, ${skipped.toLocaleString('en')} already in ${out}; ${counted(skipped + processed, 'row', 'rows')} in it${stoppedEarly ? ` (stopped before the end of ${path}; run again to go on)` : ''}. Failed: ${failed === 0 ? 'none' : `${failed.toLocaleString('en')} (${describeFailures()})`}\n`,
  );
  return { out, processed, skipped, retried, failed, total };
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

/** `openvat validate-file FILE`: bulk validation of a CSV or a list of numbers. */
export function createValidateFileCommand(config: () => Config): Command {
  return new Command('validate-file')
    .description(
      'validate the VAT numbers of a CSV (or a list, one per line) into a results CSV; resumes an interrupted run',
    )
    .argument('<file>', 'CSV with a header row, or one VAT number per line')
    .option(
      '--column <name>',
      'the column holding the VAT numbers (default: vat, vat_number, vat_id, … or the first)',
    )
    .option('--out <file>', 'results file (default: <file>.results.csv); rows already in it are skipped')
    .option('--url <url>', 'a running openvat service (default: validate in-process on DATABASE_URL)')
    .option(
      '--key <key>',
      'API key (with --url: Pro or Business; in-process: default the first active key, when all are of one account)',
    )
    .option('--sync', 'with --url: use the synchronous batch API (chunks of 100) instead of batch jobs')
    .option('--chunk <n>', 'numbers per request (default 1000 for batch jobs, 100 otherwise)', positiveInt)
    .option('--limit <n>', 'validate at most this many rows in this run', positiveInt)
    .option('--poll-ms <ms>', 'how often a batch job is polled (default 1000)', positiveInt)
    .option('--progress', 'draw the progress bar even when stderr is not a terminal')
    .addHelpText(
      'after',
      '\nExit status: 0 when every row was validated without error, 1 when a row failed (see vat_error), 2 when\nthe file could not be processed (missing, malformed CSV, a row with more fields than the header or over\n1 MiB, service unreachable).',
    )
    .action(async (file: string, options: ValidateFileOptions) => {
      try {
        const result = await validateFile(file, options, config);
        if (result.failed > 0) process.exitCode = 1;
      } catch (error) {
        console.error(`openvat: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 2;
      }
    });
}
