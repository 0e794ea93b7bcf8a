import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../config.js';

/** Name and version of the running service, from its package.json (the one `npm version` sets). */
export const PACKAGE = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  readonly name: string;
  readonly version: string;
};
