/**
 * The built CLI (`dist/cli/index.js`) as `node` arguments: tests spawn it as a user runs it, without
 * compiling TypeScript in every process. scripts/run-tests.mjs rebuilds dist/ first when src/ is newer.
 */
import { fileURLToPath } from 'node:url';

export const builtCli: string[] = [fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url))];
