/** What other modules may use of `playground`; everything else in the folder is its own. */

export type { Playground, PlaygroundBudget } from './playground.js';
export {
  PLAYGROUND_JOB_LIMIT,
  PLAYGROUND_MONITOR_LIMIT,
  PLAYGROUND_PRINCIPAL,
  PLAYGROUND_RETENTION_MS,
} from './playground.js';
