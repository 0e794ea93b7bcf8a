import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { CsvError, parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { stringify as stringifySync } from 'csv-stringify/sync';
import { grouped } from './counts.js';
import { checkInputFile } from './input-file.js';

// CSV: read and written through csv-parse and csv-stringify, streaming, so a file of any size is
// processed in bounded memory: no row is held beyond MAX_ROW_BYTES (see bench/results/validate-file-1m.md).

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

/**
 * The most a row of an input file may hold (1 MiB): a file without the line ends or quotes it seems
 * to have (a binary file, an unclosed quote) is refused at this point instead of being read into
 * memory whole.
 */
export const MAX_ROW_BYTES = 1_048_576;

/** One record of a file, with the line it ends on and the bytes read up to its end. */
export interface CsvRecord {
  record: string[];
  line: number;
  bytes: number;
}

/**
 * The options of every reading of an input file: a UTF-8 BOM, quoted fields (with delimiters, quotes
 * and line breaks; a stray quote inside an unquoted field is kept as text), empty lines skipped, rows
 * bounded by `MAX_ROW_BYTES`, and no row with more fields than the first (the header): a shorter row
 * is read as if its missing fields were empty.
 */
function readingOptions(delimiter: string, maxRowBytes: number) {
  return {
    delimiter,
    bom: true,
    relax_quotes: true,
    relax_column_count_less: true,
    skip_empty_lines: true,
    max_record_size: maxRowBytes,
  };
}

/** Parses CSV text (small texts: tests and previews) with the rules of `csvRecords`. */
export function parseCsv(text: string, delimiter = ',', maxRowBytes = MAX_ROW_BYTES): string[][] {
  return parseSync(text, readingOptions(delimiter, maxRowBytes));
}

/** A file's records, streamed, with the line each ends on; a file that breaks a rule throws a CsvInputError. */
export async function* csvRecords(
  path: string,
  delimiter: string,
  maxRowBytes = MAX_ROW_BYTES,
): AsyncGenerator<CsvRecord> {
  const source = createReadStream(path);
  const parser = source.pipe(parse({ ...readingOptions(delimiter, maxRowBytes), info: true }));
  let width: number | null = null;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; bytes: number };
    }>) {
      width ??= record.length;
      yield { record, line: info.lines, bytes: info.bytes };
    }
  } catch (error) {
    if (error instanceof CsvError) throw new CsvInputError(path, error, { width, maxRowBytes });
    throw error;
  } finally {
    // Stopped early (a refused row, or the caller is done): the file is closed at once.
    source.destroy();
  }
}

/** A file that breaks a rule of `csvRecords`, named with its line. */
export class CsvInputError extends Error {
  constructor(path: string, error: CsvError, context: { width: number | null; maxRowBytes: number }) {
    const details = error as CsvError & { lines?: number; record?: string[] };
    const line = details.lines;
    if (error.code === 'CSV_MAX_RECORD_SIZE') {
      super(
        `${path}, line ${line}: a row longer than ${grouped(context.maxRowBytes)} bytes, the most a row may hold (an unclosed quote, or not a CSV file?)`,
      );
    } else if (error.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') {
      super(
        `${path}, line ${line}: ${details.record?.length ?? 'more'} fields, but the first row has ${context.width ?? 'fewer'}; a row may not have more fields than the header (quote a field that holds the delimiter)`,
      );
    } else {
      super(`${path} is not valid CSV${line ? ` (line ${line})` : ''}: ${error.message}`);
    }
  }
}

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

/** The first 64 KiB of a file, as text (enough to see its first line). */
export function readSample(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(65_536);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** An input file opened for its rows: its delimiter, its header and the column of the VAT numbers. */
export interface CsvInput {
  delimiter: string;
  /** The header row (for a plain list of numbers, which has none: `vat_number`). */
  header: string[];
  hasHeader: boolean;
  /** The column of the VAT numbers. */
  column: number;
  /** The data rows, streamed (the first record too when the file has no header). */
  rows: AsyncGenerator<CsvRecord>;
  /** Closes the file when the rows are not read to the end. */
  close(): Promise<void>;
}

/**
 * Opens an input file of VAT numbers as every command reads one (validate-file, monitors import):
 * a CSV with a header row, comma, semicolon or tab (from the first line), or a plain list with one
 * number per line; the VAT column is `column`, else the first named like `vat`, `vat_number` or
 * `vat_id`, else the first. Throws a message naming the file when it cannot be read.
 */
export async function openCsvInput(path: string, column?: string): Promise<CsvInput> {
  checkInputFile(path);
  const delimiter = detectDelimiter(readSample(path));
  const records = csvRecords(path, delimiter);
  const first = await records.next();
  if (first.done) throw new Error(`${path} is empty`);
  let inspected: ReturnType<typeof inspectHeader>;
  try {
    inspected = inspectHeader(first.value.record, column);
  } catch (error) {
    await records.return(undefined);
    throw error;
  }
  const rows = inspected.hasHeader
    ? records
    : (async function* () {
        yield first.value;
        yield* records;
      })();
  return {
    delimiter,
    ...inspected,
    rows,
    close: async () => {
      await rows.return(undefined);
      await records.return(undefined);
    },
  };
}
