/**
 * `npm run bench -- profile`: CPU profiles of the paid calls (bench/paid-calls.ts) under load, and
 * their flame graphs. One service on SQLite, as `paid` starts it, with bench/profile-probe.mjs
 * preloaded; per call, V8's sampling profiler runs for the PROFILE_SECONDS (10) of load at 50
 * connections and nothing else (not the start-up, not the warm-up). Written:
 * - the profiles (`.cpuprofile`, for Chrome DevTools or speedscope) in PROFILE_DIR (default a fresh
 *   directory under the system's temporary one, printed);
 * - `bench/results/profile.json`: per call, the main thread's busy share and the self time of the
 *   heaviest functions, of each part of the process (openvat's modules, the framework, the database
 *   driver, Node's HTTP stack…) and of a few areas that add up to all of it, as shares of the busy
 *   time;
 * - `docs/images/flame-<call>.png`: each profile's flame graph ("left heavy": the same stacks merged,
 *   the widest first), drawn by speedscope in headless Chromium, when Chromium is found.
 */

import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumPath } from '../test/helpers/browser.js';
import {
  askProbe,
  type Child,
  envNumber,
  load,
  ROOT,
  startService,
  startSimulatorProcess,
  today,
  warm,
  writeResult,
} from './lib.js';
import { CALLS, type Call, CONNECTIONS, callRequest, createKeyOn, primeCall } from './paid-calls.js';

const PROBE_ARGS = ['--import', pathToFileURL(join(ROOT, 'bench/profile-probe.mjs')).href];

/** Asks the profile probe of the service to start or stop (writing the profile to `file`). */
async function probe(service: Child, action: 'start' | 'stop', file?: string): Promise<void> {
  const answer = await askProbe<{ error: string | null }>(service, 'profile', { action, file }, 30_000);
  if (answer.error) throw new Error(`profile ${action}: ${answer.error}`);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The part of the process a script belongs to: an openvat module, a package, Node's own code. */
function partOf(url: string, functionName: string): string {
  // V8's own entries, e.g. (garbage collector); else a function of C++ (a native binding), by name:
  // `run` is a better-sqlite3 statement's, `writev` a socket write's.
  if (url === '') return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inPackage) return inPackage[1] as string;
  const own = /\/dist\/(.*)$/.exec(url);
  if (own) {
    const path = own[1] as string;
    const module = /^modules\/([^/]+)\//.exec(path);
    return module ? `openvat ${module[1]}` : `openvat ${path.replace(/\/[^/]*$|\.js$/, '')}`;
  }
  if (url.startsWith('node:'))
    return `node ${
      url
        .slice(5)
        .replace(/^internal\//, '')
        .split('/')[0]
    }`;
  return url;
}

/**
 * The profile without the probe's own samples: stopping the profiler serialises the profile inside
 * the profiled thread (2–3% of a 10-second profile), which is no work of the service. Each dropped
 * sample's time is carried to the next sample, so the others keep their timestamps.
 */
function withoutProbe(profile: CpuProfile): CpuProfile {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const probe = new Set<number>();
  const mark = (id: number) => {
    probe.add(id);
    for (const child of byId.get(id)?.children ?? []) mark(child);
  };
  for (const node of profile.nodes) if (node.callFrame.url.endsWith('/profile-probe.mjs')) mark(node.id);
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let carried = 0;
  profile.samples.forEach((id, i) => {
    const delta = (profile.timeDeltas[i] ?? 0) + carried;
    if (probe.has(id)) {
      carried = delta;
      return;
    }
    carried = 0;
    samples.push(id);
    timeDeltas.push(delta);
  });
  return { ...profile, samples, timeDeltas };
}

/** The packages of the framework: the router, hooks, body and query parsing, its plugins. */
const FRAMEWORK =
  /^(fastify|@fastify\/|find-my-way|avvio|secure-json-parse|fast-querystring|fast-decode-uri-component|light-my-request|toad-cache|abstract-logging|process-warning|rfdc|fast-uri|ret|safe-regex2)/;

/** The area of the process a part belongs to, for a summary that adds up to the whole busy time. */
function areaOf(part: string): string {
  if (part === 'native run') return "SQLite's statements (better-sqlite3's native run)";
  if (/^(kysely|better-sqlite3|pg|pg-.*|openvat db)$/.test(part))
    return 'the database layer (Kysely, drivers, openvat db)';
  if (part.startsWith('node ') || part === 'native writev')
    return "Node's HTTP stack, streams, events and socket writes";
  if (FRAMEWORK.test(part)) return 'Fastify (routing, hooks, parsing)';
  if (part === 'fast-json-stringify') return "the envelope's serialisation (fast-json-stringify)";
  if (part.startsWith('openvat ')) return "openvat's own code";
  if (part === '(program)' || part === '(garbage collector)')
    return 'V8 (code it does not attribute, garbage collection)';
  if (part.startsWith('native ')) return 'other native functions (hashing, the microtask queue…)';
  return 'other packages';
}

/** Self time of functions, of parts and of areas, as shares of the busy (not idle) time. */
function summarise(profile: CpuProfile, top = 20) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const functions = new Map<string, number>();
  const parts = new Map<string, number>();
  let idle = 0;
  let total = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = (byId.get(id) as ProfileNode).callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const where = url ? ` ${relative(ROOT, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'}${where}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const part = partOf(url, functionName);
    parts.set(part, (parts.get(part) ?? 0) + us);
  }
  const busy = total - idle;
  const areas = new Map<string, number>();
  for (const [part, us] of parts) areas.set(areaOf(part), (areas.get(areaOf(part)) ?? 0) + us);
  const shares = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, share: Math.round((us / busy) * 1000) / 1000 }));
  return {
    busy_share: Math.round((busy / total) * 100) / 100,
    areas: shares(areas, areas.size),
    functions: shares(functions, top),
    parts: shares(parts, top),
  };
}

/** Draws a profile's flame graph with speedscope ("left heavy") in headless Chromium, as a PNG. */
async function flameGraphs(profiles: Array<{ call: Call; file: string }>, outDir: string): Promise<string[]> {
  const executablePath = chromiumPath();
  const speedscope = join(ROOT, 'node_modules/speedscope/dist/release');
  const files = new Map(profiles.map((p, i) => [`/profile-${i}.cpuprofile`, p.file]));
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const profile = files.get(path);
    try {
      const body = readFileSync(profile ?? join(speedscope, path === '/' ? 'index.html' : path));
      const type = path.endsWith('.html') ? 'text/html' : path.endsWith('.js') ? 'text/javascript' : '';
      res.writeHead(200, type ? { 'content-type': type } : {}).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const browser = await chromium.launch({
    ...(executablePath ? { executablePath } : {}),
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const written: string[] = [];
  try {
    for (const [i, { call }] of profiles.entries()) {
      // A page of its own per profile: speedscope reads the profile's URL only as it loads.
      const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
      const title = encodeURIComponent(`${call.name}: ${call.title.replace(/`/g, '')}`);
      await page.goto(
        `http://127.0.0.1:${port}/index.html#profileURL=/profile-${i}.cpuprofile&title=${title}`,
      );
      await page.getByText('Left Heavy').first().click();
      await page.waitForTimeout(1_000);
      const out = join(outDir, `flame-${call.name}.png`);
      await page.screenshot({ path: out });
      await page.close();
      written.push(relative(ROOT, out));
    }
  } finally {
    await browser.close();
    server.close();
  }
  return written;
}

export async function benchProfile(seconds = envNumber('PROFILE_SECONDS', 10)) {
  const dir = process.env.PROFILE_DIR ?? mkdtempSync(join(tmpdir(), 'openvat-profiles-'));
  mkdirSync(dir, { recursive: true });
  const simulator = await startSimulatorProcess(0);
  const profiles: Array<{ call: Call; file: string; requests_per_second: number; p99_ms: number }> = [];
  try {
    const service = await startService(
      { ...simulator.urls, OPENVAT_STATUS_POLL_MS: '0' },
      { nodeArgs: PROBE_ARGS, ipc: true },
    );
    try {
      const url = `sqlite:${service.dataDir}/openvat.sqlite`;
      const keys = { live: createKeyOn(url, 'live'), test: createKeyOn(url, 'test') };
      for (const call of CALLS) {
        const { headers, request } = callRequest(call, keys);
        await primeCall(service.url, call, keys);
        await warm(`${service.url}${call.path}`, headers, request);
        const file = join(dir, `${call.name}.cpuprofile`);
        await probe(service, 'start');
        const measured = await load(`${service.url}${call.path}`, {
          connections: CONNECTIONS,
          duration: seconds,
          headers,
          ...request,
        });
        await probe(service, 'stop', file);
        writeFileSync(
          file,
          JSON.stringify(withoutProbe(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile)),
        );
        if (measured.non2xx || measured.errors) throw new Error(`${call.name}: ${JSON.stringify(measured)}`);
        profiles.push({ call, file, requests_per_second: measured.requestsPerSecond, p99_ms: measured.p99 });
      }
    } finally {
      await service.stop();
    }
  } finally {
    await simulator.stop();
  }
  const imagesDir = join(ROOT, 'docs/images');
  mkdirSync(imagesDir, { recursive: true });
  let images: string[] = [];
  try {
    images = await flameGraphs(profiles, imagesDir);
  } catch (error) {
    console.warn(`flame graphs not drawn (Chromium and speedscope are needed): ${String(error)}`);
  }
  const result = {
    benchmark: 'CPU profiles of the paid calls under load (the main thread of one instance on SQLite)',
    command: 'npm run bench -- profile',
    date: today(),
    node: process.version,
    connections: CONNECTIONS,
    seconds_per_call: seconds,
    note: 'Self time (a function’s own samples, not its callees’) as shares of the main thread’s busy time while the call was under load; (garbage collector) and (program) are V8’s own. The profiles are in profiles_dir; open one in Chrome DevTools (Performance) or speedscope.',
    profiles_dir: dir,
    calls: profiles.map((p) => ({
      call: p.call.name,
      title: p.call.title,
      requests_per_second: p.requests_per_second,
      p99_ms: p.p99_ms,
      flame_graph: images.find((i) => i.endsWith(`flame-${p.call.name}.png`)) ?? null,
      ...summarise(JSON.parse(readFileSync(p.file, 'utf8')) as CpuProfile),
    })),
  };
  writeResult('profile', result);
  console.log(`profiles in ${dir}`);
  return result;
}
