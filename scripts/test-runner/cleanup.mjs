// `node cleanup.mjs RUN PID`: drops what test process PID of run RUN left on PostgreSQL
// (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL), see resources.mjs. test/helpers/resources.ts runs
// it as the test process exits, whether its tests passed or failed.
import { dropLeftovers } from './resources.mjs';

const [run, pid] = process.argv.slice(2);
const found = await dropLeftovers({
  run,
  pid,
  databaseUrl: process.env.TEST_DATABASE_URL,
  redisUrl: process.env.TEST_REDIS_URL,
});
for (const error of found.errors) console.error(`# clean-up of test process ${pid}: ${error}`);
