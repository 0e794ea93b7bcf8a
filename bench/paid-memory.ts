import autocannon from 'autocannon';
import {
  type Child,
  envNumber,
  startService,
  startSimulatorProcess,
  today,
  updatePerformanceTable,
  writeResult,
} from './lib.js';
import { MEMORY_PROBE_ARGS, memorySample, slope } from './memory.js';
import { CALLS, CONNECTIONS, callRequest, createKeyOn, primeCall } from './paid-calls.js';

type Sample = Awaited<ReturnType<typeof memorySample>> & {
  /** Seconds since the load started (negative before it, after its end for the last sample). */
  at_s: number;
  phase: 'idle after start-up' | 'load' | 'idle after the load';
  /** The load in the 30 s before a load sample: all three calls together. */
  requests_per_second?: number;
  p99_ms?: number;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The paid load on every connection in turn: each of the CONNECTIONS connections sends the three
 * calls one after the other (live cache hit, test-key validation, decide) and starts again, so the
 * three run together in equal numbers.
 */
async function mixedLoad(service: Child, keys: Record<'live' | 'test', string>, seconds: number) {
  const result = await autocannon({
    url: service.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: CALLS.map((call) => {
      const { headers, request } = callRequest(call, keys);
      return { path: call.path, headers, ...request };
    }),
  });
  return {
    requests_per_second: Math.round(result.requests.average),
    p99_ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Rise of `y` (MB per minute) and a word for it: a rise of more than 2 MB and 5% over the window is growth. */
function trend(samples: Sample[], value: (s: Sample) => number) {
  const points = samples.map((s) => ({ x: s.at_s / 60, y: value(s) }));
  const perMinute = slope(points);
  const windowMinutes = (points.at(-1)?.x ?? 0) - (points[0]?.x ?? 0);
  const rise = perMinute * windowMinutes;
  const mean = points.reduce((a, p) => a + p.y, 0) / Math.max(points.length, 1);
  const threshold = Math.max(2, mean * 0.05);
  return {
    mb_per_minute: Math.round(perMinute * 100) / 100,
    fitted_rise_mb: Math.round(rise * 10) / 10,
    verdict: rise > threshold ? 'growing' : rise < -threshold ? 'falling' : 'flat',
  };
}

/**
 * Memory of one instance on SQLite (as `npm run bench -- paid` starts it) under the paid load: RSS
 * (from /proc) and V8's heap (through bench/memory-probe.mjs, preloaded) idle after start-up, every
 * PAID_MEMORY_SAMPLE_SECONDS (30) during PAID_MEMORY_MINUTES (10) of the three paid calls mixed at
 * 50 connections, and idle again PAID_MEMORY_PAUSE_SECONDS (30) after the load.
 */
export async function benchPaidMemory() {
  const minutes = envNumber('PAID_MEMORY_MINUTES', 10);
  const sampleSeconds = envNumber('PAID_MEMORY_SAMPLE_SECONDS', 30);
  const pauseSeconds = envNumber('PAID_MEMORY_PAUSE_SECONDS', 30);
  const chunks = Math.max(1, Math.round((minutes * 60) / sampleSeconds));
  const simulator = await startSimulatorProcess(0);
  const samples: Sample[] = [];
  const loads: Array<Awaited<ReturnType<typeof mixedLoad>>> = [];
  try {
    const service = await startService(
      {
        VIES_URL: simulator.urls.VIES_URL,
        VIES_SOAP_URL: simulator.urls.VIES_SOAP_URL,
        OPENVAT_STATUS_POLL_MS: '0',
      },
      { nodeArgs: MEMORY_PROBE_ARGS, ipc: true },
    );
    try {
      const url = `sqlite:${service.dataDir}/openvat.sqlite`;
      const keys = { live: createKeyOn(url, 'live'), test: createKeyOn(url, 'test') };
      await sleep(pauseSeconds * 1000);
      samples.push({ ...(await memorySample(service)), at_s: -pauseSeconds, phase: 'idle after start-up' });
      for (const call of CALLS) await primeCall(service.url, call, keys);
      for (let i = 1; i <= chunks; i++) {
        const load = await mixedLoad(service, keys, sampleSeconds);
        loads.push(load);
        samples.push({
          ...(await memorySample(service)),
          at_s: i * sampleSeconds,
          phase: 'load',
          requests_per_second: load.requests_per_second,
          p99_ms: load.p99_ms,
        });
      }
      await sleep(pauseSeconds * 1000);
      samples.push({
        ...(await memorySample(service)),
        at_s: chunks * sampleSeconds + pauseSeconds,
        phase: 'idle after the load',
      });
    } finally {
      await service.stop();
    }
  } finally {
    await simulator.stop();
  }

  const idle = samples[0] as Sample;
  const underLoad = samples.filter((s) => s.phase === 'load');
  const last = underLoad.at(-1) as Sample;
  const after = samples.at(-1) as Sample;
  // The first minute fills caches and compiles code; the trend is fitted after it when there is more.
  const settled = underLoad.filter((s) => s.at_s > 60);
  const fitted = settled.length >= 3 ? settled : underLoad;
  const peak = (value: (s: Sample) => number) => Math.max(...samples.map(value));
  const result = {
    benchmark:
      'Memory of one instance on SQLite under the paid load (validate live cache hit, validate test key, decide; mixed on every connection)',
    command: 'npm run bench -- paid-memory',
    date: today(),
    node: process.version,
    connections: CONNECTIONS,
    minutes: (chunks * sampleSeconds) / 60,
    sample_every_s: sampleSeconds,
    pause_s: pauseSeconds,
    note: "RSS from /proc/<pid>/status (anonymous, file-backed and shared parts; the peak is VmHWM, the kernel's high-water mark); the heap from process.memoryUsage() in the service (bench/memory-probe.mjs, preloaded), as held and after a full garbage collection (retained), which the probe forces once per sample. Each connection sends the three calls in turn. The trend is a least-squares fit over the load samples after the first minute.",
    requests: {
      total: loads.reduce((a, l) => a + l.total, 0),
      non2xx: loads.reduce((a, l) => a + l.non2xx, 0),
      errors: loads.reduce((a, l) => a + l.errors, 0),
    },
    idle_after_start: idle,
    after_load: last,
    idle_after_load: after,
    peak: {
      rss_mb: peak((s) => s.rss_peak_mb),
      heap_used_mb: peak((s) => s.heap_used_mb),
      heap_total_mb: peak((s) => s.heap_total_mb),
      retained_heap_mb: peak((s) => s.retained_heap_mb),
    },
    trend: {
      fitted_from_s: fitted[0]?.at_s ?? null,
      rss: trend(fitted, (s) => s.rss_mb),
      retained_heap: trend(fitted, (s) => s.retained_heap_mb),
      requests_per_second: trend(fitted, (s) => s.requests_per_second ?? 0),
    },
    samples,
  };
  writeResult('paid-memory', result);
  const heap = (s: Sample) =>
    `RSS ${s.rss_mb} MB, heap ${s.heap_used_mb} of ${s.heap_total_mb} MB (${s.retained_heap_mb} MB after a full GC)`;
  const errors = result.requests.non2xx + result.requests.errors;
  updatePerformanceTable(
    'paid-memory',
    `| Memory of one instance, SQLite, the three paid calls mixed at ${CONNECTIONS} connections for ${result.minutes} min (${result.date}, \`${result.command}\`, ${result.requests.total.toLocaleString('en')} requests${errors ? `, ${errors} not 2xx or failed` : ''}) | after ${result.minutes} min: ${heap(last)}; peak RSS ${result.peak.rss_mb} MB; idle ${pauseSeconds} s later: ${heap(after)}; last ${sampleSeconds} s ${last.requests_per_second?.toLocaleString('en')} req/s, p99 ${last.p99_ms} ms | idle after start-up: ${heap(idle)} | retained heap ${result.trend.retained_heap.verdict} (${result.trend.retained_heap.mb_per_minute} MB/min), RSS ${result.trend.rss.verdict} (${result.trend.rss.mb_per_minute} MB/min) |`,
  );
  return result;
}
