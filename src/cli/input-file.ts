import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/** Throws a message that names the file when `path` is not a file a command can read its rows from. */
export function checkInputFile(path: string): void {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file`);
  if (statSync(path).isDirectory()) throw new UsageError(`${path} is a directory, not a CSV file`);
}

function samePath(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  return existsSync(a) && existsSync(b) && realpathSync(a) === realpathSync(b);
}

/**
 * Throws a message that names the problem when `out` cannot take a command's output: it is the
 * input file, a directory, or its directory does not exist. Checked before anything is written.
 */
export function checkOutputFile(out: string, input?: string): void {
  if (input !== undefined && samePath(input, out)) {
    throw new UsageError(`--out ${out} is the input file; choose another file for the results`);
  }
  if (existsSync(out) && statSync(out).isDirectory()) {
    throw new UsageError(`--out ${out} is a directory; name a file`);
  }
  const directory = dirname(resolve(out));
  if (!existsSync(directory)) {
    throw new UsageError(`cannot write ${out}: the directory ${directory} does not exist`);
  }
  if (!statSync(directory).isDirectory()) {
    throw new UsageError(`cannot write ${out}: ${directory} is not a directory`);
  }
}

/**
 * A cell of text that came from a registry (a company's name or address), safe to open in a
 * spreadsheet: text beginning with `=`, `+`, `-`, `@`, a tab or a carriage return would be taken for
 * a formula, so it is prefixed with a single quote, as OWASP recommends against CSV injection.
 */
export function spreadsheetSafe(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}
