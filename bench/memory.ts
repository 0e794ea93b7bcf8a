import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { askProbe, type Child, ROOT } from './lib.js';

/** Node arguments that preload the memory probe (see bench/memory-probe.mjs); start with `ipc: true`. */
export const MEMORY_PROBE_ARGS = [
  '--expose-gc',
  '--import',
  pathToFileURL(join(ROOT, 'bench/memory-probe.mjs')).href,
];

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

/** The kernel's view of a process's memory (MB), from /proc/<pid>/status (Linux). */
export interface ProcMemory {
  /** Resident set size, and its parts: anonymous memory, mapped files, shared memory. */
  rss_mb: number;
  rss_anon_mb: number;
  rss_file_mb: number;
  rss_shmem_mb: number;
  /** The highest resident set size so far. */
  rss_peak_mb: number;
}

export function procMemory(pid: number): ProcMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Math.round((Number(match[1]) / 1024) * 10) / 10;
  };
  return {
    rss_mb: kb('VmRSS'),
    rss_anon_mb: kb('RssAnon'),
    rss_file_mb: kb('RssFile'),
    rss_shmem_mb: kb('RssShmem'),
    rss_peak_mb: kb('VmHWM'),
  };
}

/** V8's view (MB): the heap in use and reserved, and memory held outside it (buffers). */
export interface HeapMemory {
  heap_used_mb: number;
  heap_total_mb: number;
  external_mb: number;
  array_buffers_mb: number;
}

/** Asks the probe in the service for its memory; with `gc`, after a full garbage collection. */
export async function heapMemory(service: Child, gc: boolean): Promise<HeapMemory> {
  const m = await askProbe<{
    gc: boolean;
    heapUsed: number;
    heapTotal: number;
    external: number;
    arrayBuffers: number;
  }>(service, 'memory', { gc }, 10_000);
  if (gc && !m.gc) throw new Error('the service was not started with --expose-gc');
  return {
    heap_used_mb: mb(m.heapUsed),
    heap_total_mb: mb(m.heapTotal),
    external_mb: mb(m.external),
    array_buffers_mb: mb(m.arrayBuffers),
  };
}

/**
 * One sample of a service's memory: the kernel's and V8's view as the process holds it, then the
 * heap left after a full garbage collection (what is retained; a leak shows as its steady rise).
 */
export async function memorySample(service: Child) {
  const pid = service.process.pid;
  if (pid === undefined) throw new Error('the service has no pid');
  const proc = procMemory(pid);
  const heap = await heapMemory(service, false);
  const retained = await heapMemory(service, true);
  return { ...proc, ...heap, retained_heap_mb: retained.heap_used_mb };
}

/** Least-squares slope of `y` over `x`; 0 for fewer than two points. */
export function slope(points: Array<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  if (sxx === 0) return 0;
  return points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / sxx;
}
