// Re-runnable measurements behind two hand-written pieces of the hot path:
// - ids: src/lib/ids.ts's UUID v7 generator against the `uuid` package's v7, in one process,
//   alternating rounds of 1,000,000 ids each;
// - limiter: the public rates route's synchronous window counter (src/lib/window-limiter.ts)
//   against @fastify/rate-limit's hook, each in a minimal Fastify server of its own process
//   (bench/limiter-server.ts), alternating rounds under autocannon at 50 connections.
import { v7 } from 'uuid';
import { createIdGenerator } from '../src/lib/ids.js';
import {
  type LoadResult,
  load,
  median,
  startScript,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';

const IDS = 1_000_000;
const ID_ROUNDS = 6;
const LOAD_ROUNDS = 3;
const LOAD_SECONDS = 5;

function nsPerId(make: () => string): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < IDS; i++) sink += make().length;
  const ns = Number(process.hrtime.bigint() - start) / IDS;
  if (sink !== IDS * 36) throw new Error('an id was not 36 characters long');
  return ns;
}

export async function benchIds() {
  const ours = createIdGenerator();
  const own: number[] = [];
  const pkg: number[] = [];
  nsPerId(() => ours.uuid());
  nsPerId(v7);
  for (let round = 0; round < ID_ROUNDS; round++) {
    own.push(nsPerId(() => ours.uuid()));
    pkg.push(nsPerId(v7));
  }
  const result = {
    command: 'npm run bench -- ids',
    date: today(),
    node: process.version,
    idsPerRound: IDS,
    rounds: ID_ROUNDS,
    oursNsPerId: Math.round(median(own)),
    uuidPackageNsPerId: Math.round(median(pkg)),
    costRatio: Math.round((median(own) / median(pkg)) * 100) / 100,
  };
  writeResult('ids', result);
  updatePerformanceTable(
    'ids',
    `| UUID v7 request ids, ${IDS.toLocaleString('en')} ids × ${ID_ROUNDS} alternated rounds (${result.date}, \`${result.command}\`) | \`src/lib/ids.ts\`: ${result.oursNsPerId} ns per id | \`uuid\` package's \`v7\`: ${result.uuidPackageNsPerId} ns per id | **${result.costRatio}×** the cost |`,
  );
  return result;
}

export async function benchLimiter() {
  const modes = ['none', 'window', 'rate-limit'] as const;
  const runs: Record<(typeof modes)[number], LoadResult[]> = { none: [], window: [], 'rate-limit': [] };
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    for (const mode of modes) {
      const server = await startScript('limiter-server.ts', { LIMITER: mode });
      try {
        await warm(`${server.url}/x`);
        runs[mode].push(await load(`${server.url}/x`, { connections: 50, duration: LOAD_SECONDS }));
      } finally {
        await server.stop();
      }
    }
  }
  const rps = (mode: (typeof modes)[number]) => median(runs[mode].map((r) => r.requestsPerSecond));
  const result = {
    command: 'npm run bench -- limiter',
    date: today(),
    node: process.version,
    rounds: LOAD_ROUNDS,
    secondsPerRun: LOAD_SECONDS,
    requestsPerSecond: { none: rps('none'), window: rps('window'), rateLimit: rps('rate-limit') },
    windowRatio: Math.round((rps('window') / rps('none')) * 100) / 100,
    rateLimitRatio: Math.round((rps('rate-limit') / rps('none')) * 100) / 100,
    runs,
  };
  writeResult('limiter', result);
  updatePerformanceTable(
    'limiter',
    `| Per-IP limit on a minimal Fastify route, 50 connections, median of ${LOAD_ROUNDS} alternated rounds (${result.date}, \`${result.command}\`) | window counter: ${result.requestsPerSecond.window.toLocaleString('en')} req/s; \`@fastify/rate-limit\`: ${result.requestsPerSecond.rateLimit.toLocaleString('en')} req/s | no limit: ${result.requestsPerSecond.none.toLocaleString('en')} req/s | **${result.windowRatio}×** and **${result.rateLimitRatio}×** |`,
  );
  return result;
}
