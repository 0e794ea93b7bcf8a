import {
  appendFileSync,
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import { CsvError, parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { stringify as stringifySync } from 'csv-stringify/sync';
import type { Config } from '../config.js';
import type { BatchItemResult } from '../modules/batch/service.js';
import type { ApiKeyPrincipal } from '../modules/keys/service.js';
import { counted } from './counts.js';
import { openExistingDatabase } from './database.js';
import { checkInputFile, checkOutputFile, spreadsheetSafe } from './input-file.js';

// ---------------------------------------------------------------------------------------------
// CSV: read and written through csv-parse and csv-stringify, streaming, so a file of any size is
// processed in constant memory (see bench/results/validate-file-1m.md).

/** Parses CSV text (RFC 4180, a leading BOM, CRLF or LF); rows may have different lengths. */
export function parseCsv(text: string, delimiter = ','): string[][] {
  return parseSync(text, { delimiter, bom: true, relax_column_count: true, relax_quotes: true });
}

/** The delimiter of a CSV from its first line: `;` or tab when they outnumber commas, else `,`. */
export function detectDelimiter(text: string): string {
  const firstLine = text.replace(/^\ufeff/, '').split(/\r?\n/, 1)[0] ?? '';
  const unquoted = firstLine.replace(/"[^"]*"/g, '');
  const counts = [',', ';', '\t'].map((d) => [d, unquoted.split(d).length - 1] as const);
  counts.sort((a, b) => b[1] - a[1]);
  const best = counts[0];
  return best && best[1] > 0 ? best[0] : ',';
}

/** CSV text of rows, each ending in `\n`; fields are quoted only when they need it. */
export function formatCsvRows(rows: readonly (readonly string[])[], delimiter = ','): string {
  return stringifySync(rows as string[][], { delimiter, record_delimiter: 'unix' });
}

export function formatCsvRow(fields: readonly string[], delimiter = ','): string {
  return formatCsvRows([fields], delimiter);
}

/** A file's records, streamed, with the line each ends on; a malformed file throws a CsvInputError. */
async function* csvRecords(
  path: string,
  delimiter: string,
): AsyncGenerator<{ record: string[]; line: number; bytes: number }> {
  const parser = createReadStream(path).pipe(
    parse({
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      info: true,
    }),
  );
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; bytes: number };
    }>) {
      yield { record, line: info.lines, bytes: info.bytes };
    }
  } catch (error) {
    if (error instanceof CsvError) throw new CsvInputError(path, error);
    throw error;
  }
}

export class CsvInputError extends Error {
  constructor(path: string, error: CsvError) {
    const line = (error as CsvError & { lines?: number }).lines;
    super(`${path} is not valid CSV${line ? ` (line ${line})` : ''}: ${error.message}`);
  }
}

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

const VAT_HEADER_RE =
  /^\s*(vat|vat[ _-]?(number|no|nr|num|id)|vat[ _-]?reg(istration)?[ _-]?(number|no)?)\s*$/i;

export interface InputTable {
  header: string[];
  /** Whether the file had a header row (a plain list of numbers has none). */
  hasHeader: boolean;
  rows: string[][];
  column: number;
  delimiter: string;
}

/** The header of a file from its first record: a CSV header, or none for a plain list of numbers. */
export function inspectHeader(first: readonly string[], column?: string) {
  // A list of numbers: one field per line, and the first line holds digits like any VAT number does.
  const hasHeader = column !== undefined || first.length > 1 || !/\d/.test(first[0] ?? '');
  const header = hasHeader ? first.map((h) => h.trim()) : ['vat_number'];
  let index: number;
  if (column !== undefined) {
    index = header.findIndex((h) => h.toLowerCase() === column.trim().toLowerCase());
    if (index < 0) throw new Error(`no column "${column}"; the columns are: ${header.join(', ')}`);
  } else {
    index = Math.max(
      0,
      header.findIndex((h) => VAT_HEADER_RE.test(h)),
    );
  }
  return { header, hasHeader, column: index };
}

/** Reads a small CSV text at once (tests and previews); files are streamed by validate-file. */
export function readInput(text: string, column?: string): InputTable {
  const delimiter = detectDelimiter(text);
  const records = parseCsv(text, delimiter).filter((r) => !(r.length === 1 && (r[0] ?? '').trim() === ''));
  const { header, hasHeader, column: index } = inspectHeader(records[0] ?? [], column);
  return { header, hasHeader, rows: hasHeader ? records.slice(1) : records, column: index, delimiter };
}

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
// Validation back ends

/** Validates one chunk of numbers; reports progress within the chunk (items done). */
type Validator = (vatNumbers: string[], progress: (done: number) => void) => Promise<BatchItemResult[]>;

interface Envelope<T> {
  data: T;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds: number | null,
  ) {
    super(message);
  }
}

/** `fetch failed` says nothing: name the server and the reason (connection refused, unknown host, …). */
function unreachable(base: string, error: unknown): Error {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'unknown host',
    EAI_AGAIN: 'host name not resolved',
    ETIMEDOUT: 'timed out',
    ECONNRESET: 'connection reset',
  };
  const reason =
    (cause?.code && reasons[cause.code]) ??
    cause?.message ??
    (error instanceof Error ? error.message : String(error));
  return new Error(`cannot reach ${base} (${reason}); is the service running and --url right?`);
}

function remoteValidator(options: { url: string; key: string; sync: boolean; pollMs: number }): Validator {
  const base = options.url.replace(/\/+$/, '');
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${options.key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        if (res.ok) return JSON.parse(text) as T;
        let message = `${res.status} ${res.statusText}`;
        try {
          const error = (JSON.parse(text) as { error?: { code: string; message: string } }).error;
          if (error) message = `${error.code}: ${error.message}`;
        } catch {
          // not JSON
        }
        const retryAfter = Number(res.headers.get('retry-after'));
        throw new HttpError(
          res.status,
          message,
          Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
        );
      } catch (error) {
        const retryable =
          !(error instanceof HttpError) ||
          error.status === 429 ||
          error.status === 502 ||
          error.status === 503;
        if (!(error instanceof HttpError) && attempt >= 2) throw unreachable(base, error);
        if (!retryable || attempt >= 5) throw error;
        const wait =
          error instanceof HttpError && error.retryAfterSeconds
            ? error.retryAfterSeconds * 1000
            : 500 * 2 ** attempt;
        await sleep(Math.min(wait, 60_000));
      }
    }
  }

  return async (vatNumbers, progress) => {
    if (options.sync) {
      const res = await call<Envelope<{ results: BatchItemResult[] }>>('POST', '/v1/validate/batch', {
        vat_numbers: vatNumbers,
      });
      progress(vatNumbers.length);
      return res.data.results;
    }
    const created = await call<Envelope<{ id: string }>>('POST', '/v1/validate/batch', {
      vat_numbers: vatNumbers,
      async: true,
    });
    for (;;) {
      const job = await call<Envelope<{ status: string; done: number; results?: BatchItemResult[] }>>(
        'GET',
        `/v1/validate/batch/${created.data.id}`,
      );
      progress(job.data.done);
      if (job.data.status === 'completed' && job.data.results) return job.data.results;
      await sleep(options.pollMs);
    }
  };
}

async function directValidator(config: Config, key: string | undefined) {
  // Reads keys from the database: a missing SQLite file is refused, not created empty.
  await openExistingDatabase(config.databaseUrl).close();
  const { createContainer } = await import('../container.js');
  const { rollup } = await import('../modules/batch/service.js');
  const container = await createContainer(config);
  let principal: ApiKeyPrincipal | null = null;
  if (key) {
    principal = await container.keys.authenticate(key);
    if (!principal) {
      await container.close();
      throw new Error('--key is not an active API key of this database');
    }
  } else {
    const keys = (await container.keys.listKeys()).filter((k) => k.revokedAt === null);
    const chosen = keys.find((k) => k.mode === 'live') ?? keys[0];
    if (!chosen) {
      await container.close();
      throw new Error('the database has no active API key; create one with "openvat keys create"');
    }
    // The run is recorded under the key (its audit records, and a live key's webhook events): with
    // several accounts, none is picked for the operator.
    if (keys.some((k) => k.accountId !== chosen.accountId)) {
      await container.close();
      throw new Error(
        'the database holds active keys of several accounts; name the key to validate with: --key svc_…',
      );
    }
    principal = {
      id: chosen.id,
      accountId: chosen.accountId,
      plan: chosen.plan,
      mode: chosen.mode,
      defaultRequesterVat: chosen.defaultRequesterVat,
    };
  }
  const who = principal;
  // Each chunk is recorded as a synchronous batch call would be: its registry answers, its audit
  // record (the answer as this command saw it) and, for a live key, its `batch.completed` event.
  const validate: Validator = async (vatNumbers, progress) => {
    const started = performance.now();
    const batch = await container.batch.validateMany(vatNumbers, null, who);
    const requestId = container.ids.uuid();
    const latency = Math.round(performance.now() - started);
    const body = JSON.stringify({
      data: { summary: batch.summary, results: batch.results },
      meta: { request_id: requestId, latency_ms: latency, ...rollup(batch.sources), sources: batch.sources },
    });
    await container.outbox.record({
      answers: batch.answers,
      audit: {
        principal: who,
        requestId,
        endpoint: 'validate_batch',
        responseJson: body,
        requestBody: { vat_numbers: vatNumbers },
        latencyMs: latency,
        statusCode: 200,
        valid: null,
      },
      events:
        who.mode === 'live'
          ? [{ accountId: who.accountId, keyId: who.id, type: 'batch.completed', payload: body }]
          : [],
    });
    progress(vatNumbers.length);
    return batch.results;
  };
  return { validate, close: () => container.close(), mode: principal.mode };
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

function countryOf(input: string, normalised: string): string {
  const prefix = (normalised || input)
    .replace(/[^A-Za-z]/g, '')
    .slice(0, 2)
    .toUpperCase();
  return prefix.length === 2 ? prefix : '??';
}

function readSample(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(65_536);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

interface Entry {
  /** The row as written: the input fields padded to the header, results, then any extra fields. */
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
  const delimiter = detectDelimiter(readSample(path));
  // The whole input is read once before anything is written: a malformed file leaves no output
  // behind (and an earlier run's output untouched).
  for await (const _ of csvRecords(path, delimiter)) {
    // parsing is the check
  }
  const input = csvRecords(path, delimiter);
  const first = await input.next();
  if (first.done) throw new Error(`${path} is empty`);
  let inspected: ReturnType<typeof inspectHeader>;
  try {
    inspected = inspectHeader(first.value.record, options.column);
  } catch (error) {
    await input.return(undefined);
    throw error;
  }
  const { header: inputHeader, hasHeader, column } = inspected;
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
      await input.return(undefined);
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
      await input.return(undefined);
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
      await input.return(undefined);
      if (old) await old.return(undefined);
      throw error;
    }
  }
  // Created only once the input has been read and the back end is ready.
  writeFileSync(target, formatCsvRow(header, delimiter));
  const chunkSize = options.chunk ?? (options.url && !options.sync ? 1_000 : 100);
  const failures = new Map<string, number>();
  let failed = 0;
  const describeFailures = () =>
    [...failures]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([c, n]) => `${c} ${n}`)
      .join(', ') || 'none';
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
    if ((fields[errorColumn] ?? '') === '') return;
    failed += 1;
    const country = countryOf(inputNumber, fields[normalisedColumn] ?? '');
    failures.set(country, (failures.get(country) ?? 0) + 1);
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
        const extra = entry.row.slice(inputHeader.length);
        entry.output = [...padded, ...resultFields(results[j] as BatchItemResult), ...extra];
        if (entry.old) retried += 1;
      });
      processed += todo.length;
    }
    for (const entry of queue) count(entry.output as string[], entry.number);
    if (queue.length > 0)
      appendFileSync(
        target,
        formatCsvRows(
          queue.map((e) => e.output as string[]),
          delimiter,
        ),
      );
    queue.length = 0;
    tick();
  };

  let complete = false;
  let stoppedEarly = false;
  try {
    const rows = hasHeader
      ? input
      : (async function* () {
          yield first.value;
          yield* input;
        })();
    let validations = 0;
    stoppedEarly = false;
    for await (const { record, bytes: read } of rows) {
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
    complete = true;
  } finally {
    bar.stop();
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await backend.close();
    if (target !== out) {
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
    `${counted(processed, 'row', 'rows')} validated${retried > 0 ? ` (${retried.toLocaleString('en')} retried after registry_unavailable)` : ''}, ${skipped.toLocaleString('en')} already in ${out}; ${counted(skipped + processed, 'row', 'rows')} in it${stoppedEarly ? ` (stopped before the end of ${path}; run again to go on)` : ''}. Failed: ${failed === 0 ? 'none' : `${failed.toLocaleString('en')} (by country: ${describeFailures()})`}\n`,
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
      '\nExit status: 0 when every row was validated without error, 1 when a row failed (see vat_error), 2 when\nthe file could not be processed (missing, malformed CSV, service unreachable).',
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
