/** What other modules may use of `playground`; everything else in the folder is its own. */

export type { Playground } from './playground.js';
export {
  PLAYGROUND_JOB_LIMIT,
  PLAYGROUND_RETENTION_MS,
  playgroundExcludes,
  playgroundLimited,
} from './playground.js';
