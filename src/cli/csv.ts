import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { CsvError, parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { stringify as stringifySync } from 'csv-stringify/sync';

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
export async function* csvRecords(
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
