import { Command, InvalidArgumentError } from 'commander';
import type { Config } from '../config.js';
import type { BatchItemResult } from '../modules/batch/service.js';
import { type CsvInput, csvRecords, openCsvInput } from './csv.js';
import { checkInputFile, checkOutputFile, spreadsheetSafe } from './input-file.js';
import { directValidator, remoteValidator, type Validator } from './validate-backends.js';
import {
  createFailureTally,
  type FailureTally,
  listenForInterrupt,
  startProgress,
  summary,
  type Tally,
} from './validate-file-progress.js';
import {
  createResultsFile,
  openPreviousRun,
  type PreviousRun,
  type ResultsFile,
  replacePreviousRun,
} from './validate-file-results.js';

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

interface Entry {
  /** The row as written: the input fields padded to the header, then the results. */
  output: string[] | null;
  row: string[];
  number: string;
  old: string[] | null;
}

/** Where the results went, and how many rows were validated, kept, retried, failed and read. */
export interface ValidateFileResult {
  out: string;
  processed: number;
  skipped: number;
  retried: number;
  failed: number;
  total: number;
}

type Backend = { validate: Validator; close: () => Promise<void> };

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
): Promise<ValidateFileResult> {
  checkInputFile(path);
  const out = options.out ?? `${path}.results.csv`;
  checkOutputFile(out, path);
  const { csv, header, columns, previous, backend } = await openRun(path, out, options, config);
  const { delimiter } = csv;
  const target = previous.exists ? `${out}.partial` : out;
  const results = createResultsFile(target, header, delimiter);
  const failures = createFailureTally(columns);
  const tally: Tally = { processed: 0, skipped: 0, retried: 0, total: 0, bytes: 0 };
  const progress = startProgress(stderr, path, options, tally, failures.describe);
  const interrupt = listenForInterrupt();
  const queue = createQueue({ backend, inputHeader: csv.header, tally, failures, results, progress });
  const chunkSize = options.chunk ?? (options.url && !options.sync ? 1_000 : 100);
  let complete = false;
  let stoppedEarly = false;
  try {
    stoppedEarly = await validateRows(csv.rows, previous, queue, {
      columns,
      chunkSize,
      limit: options.limit,
      stopping: interrupt.stopping,
      tally,
    });
    // An input without rows still gets its results file (of the header).
    results.write([]);
    complete = true;
  } catch (error) {
    if (!results.created() && error instanceof Error)
      error.message += target === out ? `; nothing was written to ${out}` : `; ${out} is as it was`;
    throw error;
  } finally {
    progress.stop();
    interrupt.remove();
    await backend.close();
    if (target !== out && results.created())
      await replacePreviousRun({
        target,
        out,
        unwritten: complete ? null : queue.unwritten(),
        previous,
        delimiter,
      });
    await previous.close();
  }
  stderr.write(summary(tally, failures, { out, path, stoppedEarly }));
  const { processed, skipped, retried, total } = tally;
  return { out, processed, skipped, retried, failed: failures.failed(), total };
}

/**
 * The input (checked whole), the earlier run's results and the back end, opened in that order: what
 * was opened is closed again when a later one fails.
 */
async function openRun(path: string, out: string, options: ValidateFileOptions, config: () => Config) {
  const csv = await openCheckedInput(path, options.column);
  const header = [...csv.header, ...RESULT_COLUMNS];
  const columns = {
    number: csv.column,
    error: csv.header.length + RESULT_COLUMNS.indexOf('vat_error'),
    normalised: csv.header.length + RESULT_COLUMNS.indexOf('vat_normalised'),
  };
  let previous: PreviousRun | undefined;
  try {
    previous = await openPreviousRun(out, header, csv.delimiter);
    const backend = await openBackend(options, config);
    return { csv, header, columns, previous, backend };
  } catch (error) {
    await csv.close();
    await previous?.close();
    throw error;
  }
}

/**
 * The input file, read once whole before anything is written: a file that breaks a rule leaves no
 * output behind (and an earlier run's output untouched).
 */
async function openCheckedInput(path: string, column: string | undefined): Promise<CsvInput> {
  const csv = await openCsvInput(path, column);
  try {
    for await (const _ of csvRecords(path, csv.delimiter)) {
      // parsing is the check
    }
  } catch (error) {
    await csv.close();
    throw error;
  }
  return csv;
}

/** What validates: a running service (`--url`), or this process on DATABASE_URL. */
async function openBackend(options: ValidateFileOptions, config: () => Config): Promise<Backend> {
  if (!options.url) return directValidator(config(), options.key);
  if (!options.key) throw new Error('--url needs --key (an API key of a Pro or Business plan)');
  return {
    validate: remoteValidator({
      url: options.url,
      key: options.key,
      sync: options.sync === true,
      pollMs: options.pollMs ?? 1_000,
    }),
    close: async () => {},
  };
}

/** The rows read and not yet written, in order: the ones to validate are validated a chunk at once. */
function createQueue(deps: {
  backend: Backend;
  inputHeader: string[];
  tally: Tally;
  failures: FailureTally;
  results: ResultsFile;
  progress: { tick(): void };
}) {
  const { backend, inputHeader, tally, failures, results, progress } = deps;
  const entries: Entry[] = [];
  let pending = 0;
  function push(entry: Entry) {
    entries.push(entry);
    if (entry.output === null) pending += 1;
  }
  /** A chunk to validate is full, or many rows kept wait to be written. */
  function due(chunkSize: number) {
    return pending >= chunkSize || (pending === 0 && entries.length >= 1_000);
  }
  async function flush() {
    const todo = entries.filter((e) => e.output === null);
    pending = 0;
    if (todo.length > 0) {
      const answers = await backend.validate(
        todo.map((e) => e.number),
        () => progress.tick(),
      );
      todo.forEach((entry, j) => {
        const padded = inputHeader.map((_, k) => entry.row[k] ?? '');
        entry.output = [...padded, ...resultFields(answers[j] as BatchItemResult)];
        if (entry.old) tally.retried += 1;
      });
      tally.processed += todo.length;
    }
    for (const entry of entries) failures.count(entry.output as string[], entry.number);
    if (entries.length > 0) results.write(entries.map((e) => e.output as string[]));
    entries.length = 0;
    progress.tick();
  }
  /** The rows not written that have a row to write: validated ones, and the earlier run's. */
  function unwritten(): string[][] {
    return entries
      .filter((e) => e.output !== null || e.old !== null)
      .map((e) => (e.output ?? e.old) as string[]);
  }
  return { push, due, flush, unwritten };
}

type Queue = ReturnType<typeof createQueue>;

/**
 * Reads the input along with the earlier run's rows: a row the earlier run answered is kept (unless
 * it failed with `registry_unavailable` and the run may go on), the others are validated, up to
 * `limit` and until interrupted. Whether the run stopped before the end of the input.
 */
async function validateRows(
  input: AsyncIterable<{ record: string[]; bytes: number }>,
  previous: PreviousRun,
  queue: Queue,
  run: {
    columns: { number: number; error: number };
    chunkSize: number;
    limit: number | undefined;
    stopping: () => boolean;
    tally: Tally;
  },
): Promise<boolean> {
  const { columns, chunkSize, limit, stopping, tally } = run;
  let validations = 0;
  let stoppedEarly = false;
  for await (const { record, bytes } of input) {
    tally.bytes = bytes;
    tally.total += 1;
    const old = await previous.next();
    const retry = old !== null && old[columns.error] === 'registry_unavailable';
    const number = (record[columns.number] ?? '').trim();
    const halted = stopping() || (limit !== undefined && validations >= limit);
    if (old !== null && (!retry || halted)) {
      queue.push({ output: old, row: record, number, old });
      tally.skipped += 1;
    } else {
      if (halted) {
        stoppedEarly = true;
        break;
      }
      queue.push({ output: null, row: record, number, old });
      validations += 1;
    }
    if (queue.due(chunkSize)) await queue.flush();
  }
  await queue.flush();
  return stoppedEarly;
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
