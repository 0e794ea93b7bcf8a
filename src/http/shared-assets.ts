import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../config.js';

const SHARED = join(PACKAGE_ROOT, 'public', 'shared');

/**
 * The scripts the pages that hold a key share (`public/shared/*.js`: DOM helpers, the usage chart,
 * the registry status), as each page serves them under its own path, `<prefix>/shared/<file>`: the
 * admin console may be on a listener of its own, where the dashboard's paths are not.
 */
export function sharedScripts(prefix: string): { url: string; file: string }[] {
  return readdirSync(SHARED)
    .filter((file) => file.endsWith('.js'))
    .sort()
    .map((file) => ({ url: `${prefix}/shared/${file}`, file: join(SHARED, file) }));
}
