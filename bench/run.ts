/**
 * `npm run bench [-- name…]`: runs the benchmarks, writes bench/results/*.json and the table of
 * docs/performance.md. Benchmarks measure; the test suite never asserts on time.
 */

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { benchBatch } from './batch.js';
import { benchIds, benchLimiter } from './choices.js';
import { benchDecide } from './decide.js';
import { ROOT, today, updatePerformanceTable, writeResult } from './lib.js';
import { benchMonitors } from './monitors.js';
import { benchPaid } from './paid.js';
import { benchPaidMemory } from './paid-memory.js';
import { benchPaidScale } from './paid-scale.js';
import { benchParser } from './parser.js';
import { benchProfile } from './profile.js';
import { benchRates } from './rates.js';
import { benchRegistries } from './registries.js';
import { benchScale } from './scale.js';
import { benchSlowClients } from './slow-clients.js';
import { benchCliStartup, benchIdleMemory } from './startup.js';
import { benchTransport } from './transport.js';
import { benchValidateTestMode } from './validate.js';
import { benchWebhooks } from './webhooks.js';
import { benchWebhooksApi } from './webhooks-api.js';

type Bench = () => Promise<unknown>;

async function benchParserRecorded() {
  const result = {
    command: 'npm run bench -- parser',
    date: today(),
    node: process.version,
    ...(await benchParser()),
  };
  writeResult('parser', result);
  updatePerformanceTable(
    'parser',
    `| Parser alone, 100,000 mixed inputs, one core (${result.date}, \`${result.command}\`) | ${Math.round(result.perSecond).toLocaleString('en')} numbers/s | target 1,000,000/s | ${result.perSecond >= 1_000_000 ? 'met' : 'not met'} |`,
  );
  return result;
}

const benches: Record<string, Bench> = {
  rates: () => benchRates(),
  batch: () => benchBatch(),
  parser: () => benchParserRecorded(),
  'validate-test': () => benchValidateTestMode(),
  registries: () => benchRegistries(),
  scale: () => benchScale(),
  decide: () => benchDecide(),
  webhooks: () => benchWebhooks(),
  'webhooks-api': () => benchWebhooksApi(),
  'slow-clients': () => benchSlowClients(),
  ids: () => benchIds(),
  limiter: () => benchLimiter(),
  monitors: () => benchMonitors(),
  transport: () => benchTransport(),
  // The PostgreSQL figures need BENCH_POSTGRES_URL; without it only SQLite is measured. PAID_SECONDS (5) per round.
  paid: () => benchPaid(),
  // CLI_RUNS (15) alternated runs of each command.
  'cli-startup': () => benchCliStartup(),
  // IDLE_SECONDS (20) of idling before the resident memory is read.
  'idle-memory': () => benchIdleMemory(),
  // PAID_MEMORY_MINUTES (10), PAID_MEMORY_SAMPLE_SECONDS (30), PAID_MEMORY_PAUSE_SECONDS (30).
  'paid-memory': () => benchPaidMemory(),
  // BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test), BENCH_REDIS_URL (redis://127.0.0.1:6379),
  // PAID_SCALE_SECONDS (5), PAID_SCALE_ROUNDS (3).
  'paid-scale': () => benchPaidScale(),
  // CPU profiles and flame graphs of the paid calls; PROFILE_SECONDS (10), PROFILE_DIR (a temporary one).
  profile: () => benchProfile(),
  // Needs BENCH_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test); works in its own schema.
  'monitors-postgres': () => {
    const url = process.env.BENCH_POSTGRES_URL;
    if (!url) throw new Error('monitors-postgres needs BENCH_POSTGRES_URL');
    return benchMonitors({ postgresUrl: url });
  },
};

// The service runs as `npm start` runs it: the built bundle (scripts/build.mjs).
execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });

const wanted = process.argv.slice(2);
const names = wanted.length
  ? wanted
  : Object.keys(benches).filter((n) => n !== 'monitors-postgres' || process.env.BENCH_POSTGRES_URL);
for (const name of names) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; known: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n== ${name}`);
  console.log(JSON.stringify(await bench(), null, 2));
}
