import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import type { Config } from '../config.js';
import type { BatchItemResult } from '../modules/batch/service.js';
import type { ApiKeyPrincipal } from '../modules/keys/service.js';
import { openExistingDatabase } from './database.js';

// ---------------------------------------------------------------------------------------------
// CSV

/**
 * Parses CSV text (RFC 4180): quoted fields with embedded delimiters, quotes (`""`) and line breaks,
 * CRLF or LF line ends, a leading UTF-8 BOM. Returns the records as arrays of fields.
 */
export function parseCsv(text: string, delimiter = ','): string[][] {
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  let started = false;
  while (i < input.length) {
    const c = input[i] as string;
    if (quoted) {
      if (c === '"') {
        if (input[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        continue;
      }
      field += c;
      i += 1;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      started = true;
      i += 1;
    } else if (c === delimiter) {
      row.push(field);
      field = '';
      started = true;
      i += 1;
    } else if (c === '\r' || c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      started = false;
      i += c === '\r' && input[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      started = true;
      i += 1;
    }
  }
  if (started || field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
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

function csvField(value: string, delimiter: string): string {
  return /["\r\n]/.test(value) || value.includes(delimiter) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function formatCsvRow(fields: readonly string[], delimiter = ','): string {
  return `${fields.map((f) => csvField(f, delimiter)).join(delimiter)}\n`;
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

/** Reads a CSV with a header, or a plain newline-separated list of numbers. */
export function readInput(text: string, column?: string): InputTable {
  const delimiter = detectDelimiter(text);
  const records = parseCsv(text, delimiter).filter((r) => !(r.length === 1 && (r[0] ?? '').trim() === ''));
  const first = records[0] ?? [];
  // A list of numbers: one field per line, and the first line holds digits like any VAT number does.
  const hasHeader = column !== undefined || first.length > 1 || !/\d/.test(first[0] ?? '');
  const header = hasHeader ? first.map((h) => h.trim()) : ['vat_number'];
  const rows = hasHeader ? records.slice(1) : records;
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
  return { header, hasHeader, rows, column: index, delimiter };
}

function resultFields(result: BatchItemResult): string[] {
  if (!result.ok) return ['', '', '', '', result.error.code, ''];
  const { data } = result;
  return [
    String(data.valid),
    data.vat_number,
    data.company?.name ?? '',
    data.company?.address ?? '',
    '',
    data.verified_at,
  ];
}

/**
 * Prepares the output file: a new one gets the header; an existing one (an earlier, interrupted
 * run) is checked and cleaned of a partly written last row. Returns how many input rows it holds.
 */
function prepareOutput(path: string, header: string[], delimiter: string): number {
  const expected = formatCsvRow(header, delimiter);
  if (!existsSync(path)) {
    writeFileSync(path, expected);
    return 0;
  }
  const records = parseCsv(readFileSync(path, 'utf8'), delimiter);
  const [first, ...rows] = records;
  if (!first || formatCsvRow(first, delimiter) !== expected) {
    throw new Error(`${path} exists but has other columns; remove it or choose another --out`);
  }
  const complete: string[][] = [];
  for (const row of rows) {
    if (row.length !== header.length) break;
    complete.push(row);
  }
  if (complete.length !== rows.length) {
    writeFileSync(path, expected + complete.map((r) => formatCsvRow(r, delimiter)).join(''));
  }
  return complete.length;
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
    principal = {
      id: chosen.id,
      accountId: chosen.accountId,
      plan: chosen.plan,
      mode: chosen.mode,
      defaultRequesterVat: chosen.defaultRequesterVat,
    };
  }
  const who = principal;
  const validate: Validator = async (vatNumbers, progress) => {
    const batch = await container.batch.validateMany(vatNumbers, null, who);
    await container.db.kysely.transaction().execute(async (trx) => {
      for (const write of batch.writes) await write(trx);
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

function countryOf(input: string, result: BatchItemResult): string {
  if (result.ok) return result.data.country.code;
  const prefix = input
    .replace(/[^A-Za-z]/g, '')
    .slice(0, 2)
    .toUpperCase();
  return prefix.length === 2 ? prefix : '??';
}

/** Validates a file's numbers into `<input>.results.csv` (or `--out`), resuming an earlier run. */
export async function validateFile(
  path: string,
  options: ValidateFileOptions,
  config: () => Config,
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<{ out: string; processed: number; skipped: number; total: number }> {
  const input = readInput(readFileSync(path, 'utf8'), options.column);
  const out = options.out ?? `${path}.results.csv`;
  const header = [...input.header, ...RESULT_COLUMNS];
  const skipped = prepareOutput(out, header, input.delimiter);
  const remaining = input.rows.slice(
    skipped,
    options.limit === undefined ? undefined : skipped + options.limit,
  );

  let backend: { validate: Validator; close: () => Promise<void> };
  if (options.url) {
    if (!options.key) throw new Error('--url needs --key (an API key of a Pro or Business plan)');
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
    backend = await directValidator(config(), options.key);
  }
  const chunkSize = options.chunk ?? (options.url && !options.sync ? 1_000 : 100);
  const failures = new Map<string, number>();
  const describeFailures = () =>
    [...failures]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([c, n]) => `${c} ${n}`)
      .join(', ') || 'none';
  const started = Date.now();
  const bar = new SingleBar({
    stream: stderr,
    format: '{bar} {value}/{total} | {speed}/s | ETA {eta_formatted} | failed: {failures}',
    etaBuffer: 200,
    hideCursor: true,
    noTTYOutput: options.progress === true,
  });
  const rate = (done: number) => (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
  bar.start(input.rows.length, skipped, { speed: '0.0', failures: 'none' });
  let processed = 0;
  try {
    for (let i = 0; i < remaining.length; i += chunkSize) {
      const rows = remaining.slice(i, i + chunkSize);
      const numbers = rows.map((r) => (r[input.column] ?? '').trim());
      const results = await backend.validate(numbers, (done) =>
        bar.update(skipped + processed + done, {
          speed: rate(processed + done),
          failures: describeFailures(),
        }),
      );
      let text = '';
      rows.forEach((row, j) => {
        const result = results[j] as BatchItemResult;
        if (!result.ok) {
          const country = countryOf(numbers[j] ?? '', result);
          failures.set(country, (failures.get(country) ?? 0) + 1);
        }
        const padded = input.header.map((_, k) => row[k] ?? '');
        text += formatCsvRow([...padded, ...resultFields(result)], input.delimiter);
      });
      appendFileSync(out, text);
      processed += rows.length;
      bar.update(skipped + processed, { speed: rate(processed), failures: describeFailures() });
    }
  } finally {
    bar.stop();
    await backend.close();
  }
  stderr.write(
    `${processed} row(s) validated, ${skipped} already in ${out}; ${skipped + processed} of ${input.rows.length} done. Failed by country: ${describeFailures()}\n`,
  );
  return { out, processed, skipped, total: input.rows.length };
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
    .option('--key <key>', 'API key (with --url: Pro or Business; in-process: default the first active key)')
    .option('--sync', 'with --url: use the synchronous batch API (chunks of 100) instead of batch jobs')
    .option('--chunk <n>', 'numbers per request (default 1000 for batch jobs, 100 otherwise)', positiveInt)
    .option('--limit <n>', 'validate at most this many rows in this run', positiveInt)
    .option('--poll-ms <ms>', 'how often a batch job is polled (default 1000)', positiveInt)
    .option('--progress', 'draw the progress bar even when stderr is not a terminal')
    .action(async (file: string, options: ValidateFileOptions) => {
      await validateFile(file, options, config);
    });
}
