import { existsSync, statSync } from 'node:fs';

/** Throws a message that names the file when `path` is not a file a command can read its rows from. */
export function checkInputFile(path: string): void {
  if (!existsSync(path)) throw new Error(`${path}: no such file`);
  if (statSync(path).isDirectory()) throw new Error(`${path} is a directory, not a CSV file`);
}
