/**
 * `npm run bench -- cli-startup`: how long a command that needs no network takes against
 * `openvat --version`, and `npm run bench -- idle-memory`: the resident memory of an idle
 * `openvat serve` against a bare Fastify server on the same Node.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  envNumber,
  freePort,
  ROOT,
  startService,
  today,
  updatePerformanceTable,
  writeResult,
} from './lib.js';

const CLI = join(ROOT, 'dist/cli/index.js');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The Node running the benchmark (and the commands it runs), as `20.20`. */
function nodeVersion(): string {
  return process.versions.node.split('.').slice(0, 2).join('.');
}

/**
 * The result's name (its file in bench/results/ and its rows' marker): `name` on Node 20, the Node
 * of every other benchmark's rows, else `name-nodeN`, kept beside it (the CI's Node 24 runs it as
 * `node --import tsx bench/run.ts NAME`).
 */
function perNode(name: string): string {
  const major = process.versions.node.split('.')[0];
  return major === '20' ? name : `${name}-node${major}`;
}

/** One run of the built CLI; its wall time in milliseconds (a failed run stops the benchmark). */
function timeRun(args: readonly string[], env: Record<string, string>): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`openvat ${args.join(' ')} failed: ${run.stderr.toString()}`);
  return ms;
}

/** The commands timed: reads, a write (`keys update` of the key `id`) and the evidence check. */
const commandsOn = (id: string): Record<string, readonly string[]> => ({
  'keys list': ['keys', 'list'],
  'accounts list': ['accounts', 'list'],
  'keys update': ['keys', 'update', id, '--name', 'bench renamed'],
  'evidence verify': ['evidence', 'verify'],
});

/** CLI_RUNS (15) runs of each command, alternated, on a prepared SQLite database; medians compared. */
export async function benchCliStartup() {
  const runs = envNumber('CLI_RUNS', 15);
  const dir = mkdtempSync(join(tmpdir(), 'openvat-cli-bench-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`, LOG_LEVEL: 'warn' };
  try {
    timeRun(['migrate'], env);
    for (let i = 0; i < 3; i++)
      timeRun(['keys', 'create', '--plan', 'business', '--name', `bench ${i}`], env);
    const listed = spawnSync(process.execPath, [CLI, 'keys', 'list', '--json'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    const COMMANDS = commandsOn((JSON.parse(listed.stdout.toString()) as { id: string }[])[0]?.id ?? '');
    const times: Record<string, number[]> = { '--version': [] };
    for (const name of Object.keys(COMMANDS)) times[name] = [];
    // One warm-up round (the file system cache), then alternating rounds.
    timeRun(['--version'], env);
    for (const args of Object.values(COMMANDS)) timeRun(args, env);
    for (let round = 0; round < runs; round++) {
      times['--version']?.push(timeRun(['--version'], env));
      for (const [name, args] of Object.entries(COMMANDS)) times[name]?.push(timeRun(args, env));
    }
    const version = median(times['--version'] ?? []);
    const commands = Object.fromEntries(
      Object.keys(COMMANDS).map((name) => {
        const ms = median(times[name] ?? []);
        return [name, { medianMs: Math.round(ms), ratio: Math.round((ms / version) * 100) / 100 }];
      }),
    );
    const result = {
      command: 'npm run bench -- cli-startup',
      date: today(),
      node: process.version,
      runs,
      versionMedianMs: Math.round(version),
      commands,
    };
    writeResult(perNode('cli-startup'), result);
    const worst = Math.max(...Object.values(commands).map((c) => c.ratio));
    const list = Object.entries(commands)
      .map(([name, c]) => `\`${name}\` ${c.medianMs} ms (${c.ratio}×)`)
      .join(', ');
    updatePerformanceTable(
      perNode('cli-startup'),
      `| CLI start-up on a prepared SQLite database, median of ${runs} alternated runs (${result.date}, \`${result.command}\`, Node ${nodeVersion()}) | ${list} | \`openvat --version\`: ${result.versionMedianMs} ms | **${worst}×** at most (target ≤ 1.3: ${worst <= 1.3 ? 'met' : 'not met'}) |`,
    );
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resident memory of a process, in MB (Linux: `/proc/PID/status`). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.match(/\d+/)?.[0] ?? Number.NaN) / 1024);
}

async function bareFastify(): Promise<{ child: ChildProcess; stop: () => void }> {
  const port = await freePort();
  const script = `
    const Fastify = require('fastify');
    const app = Fastify({ logger: false });
    app.get('/health', async () => ({ status: 'ok' }));
    app.listen({ port: ${port}, host: '127.0.0.1' });
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: 'ignore' });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
    } catch {
      if (i > 300) throw new Error('the bare Fastify server did not start');
    }
    await sleep(100);
  }
  return { child, stop: () => child.kill('SIGTERM') };
}

/** RSS after IDLE_SECONDS (20) of idling, one `/health` each at start: openvat serve on SQLite and bare Fastify. */
export async function benchIdleMemory() {
  const idleSeconds = envNumber('IDLE_SECONDS', 20);
  const service = await startService({ OPENVAT_TEDB_URL: 'off' });
  const bare = await bareFastify();
  try {
    await sleep(idleSeconds * 1000);
    const openvat = rssMb(service.process.pid ?? 0);
    const fastify = rssMb(bare.child.pid ?? 0);
    const ratio = Math.round((openvat / fastify) * 100) / 100;
    const result = {
      command: 'npm run bench -- idle-memory',
      date: today(),
      node: process.version,
      idleSeconds,
      openvatRssMb: openvat,
      bareFastifyRssMb: fastify,
      ratio,
    };
    writeResult(perNode('idle-memory'), result);
    updatePerformanceTable(
      perNode('idle-memory'),
      `| Resident memory after ${idleSeconds} s idle, \`openvat serve\` on SQLite (${result.date}, \`${result.command}\`, Node ${nodeVersion()}) | ${openvat} MB | bare Fastify, same Node: ${fastify} MB | **${ratio}×** (target ≤ 2: ${ratio <= 2 ? 'met' : 'not met'}) |`,
    );
    return result;
  } finally {
    bare.stop();
    await service.stop();
    rmSync(service.dataDir, { recursive: true, force: true });
  }
}
