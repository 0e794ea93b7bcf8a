import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { createDatabase } from '../src/db/database.js';
import { createManualClock } from '../src/lib/clock.js';
import type { RegistryClient } from '../src/registries/port.js';
import { EU_PREFIXES, euNumbers } from '../test/helpers/batch-numbers.js';
import { today, updatePerformanceTable, writeResult } from './lib.js';

const HOUR = 3_600_000;

/**
 * 100,000 monitored numbers over the 27 member states, daily, on one instance with SQLite (a file,
 * WAL) and a registry that answers at once, so what is measured is the scheduler's own work: claims,
 * the validation path, and each check's writes (monitor, check row, cache, audit record). A manual
 * clock is moved an hour at a time through a day; each hour's due checks are run and their CPU time
 * taken. The registry calls per member state and hour are compared with what the limits allow.
 */
export async function benchMonitors(
  options: { count?: number; callLatencyMs?: number; postgresUrl?: string } = {},
) {
  const count = options.count ?? 100_000;
  const postgres = options.postgresUrl ?? null;
  const name = postgres ? 'monitors-postgres' : 'monitors';
  const schema = `bench_monitors_${process.pid}`;
  // PostgreSQL runs in its own process: its CPU is not in this process's figures (wall time is).
  const db = postgres ? createDatabase(postgres, { schema }) : undefined;
  // The latency the limits are stated at (as in the batch benchmark): one call slot per member
  // state for background checks makes HOUR / latency calls per hour at most.
  const callLatencyMs = options.callLatencyMs ?? 150;
  const dir = mkdtempSync(join(tmpdir(), 'openvat-bench-monitors-'));
  const calls = new Map<string, number>();
  const client: RegistryClient = {
    source: 'vies',
    countries: EU_PREFIXES,
    async lookup(request) {
      calls.set(request.vat.country, (calls.get(request.vat.country) ?? 0) + 1);
      return {
        kind: 'answer',
        source: 'vies',
        valid: true,
        name: `Company ${request.vat.national}`,
        address: 'Street 1',
        consultationNumber: null,
        checkedAt: new Date(),
      };
    },
  };
  // Outside the default quiet window (DE 21:00–00:30 UTC), so every first check is due at once.
  const clock = createManualClock('2026-11-23T06:00:00.000Z');
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`,
    LOG_LEVEL: 'silent',
    OPENVAT_STATUS_POLL_MS: '0',
    OPENVAT_MONITORS_BUSINESS: String(count),
  });
  const container = await createContainer(config, {
    clock,
    ...(db ? { db } : {}),
    registries: {
      clientForPrefix: (p) => (EU_PREFIXES.includes(p as never) ? client : null),
      viesStatus: { checkStatus: async () => null },
    },
  });
  try {
    const created = await container.keys.createKey({
      plan: 'business',
      mode: 'live',
      defaultRequesterVat: null,
    });
    const found = await container.keys.authenticate(created.key);
    if (found.kind === 'refused') throw new Error(`no key: ${found.message}`);
    const { principal } = found;
    const numbers = euNumbers(Math.ceil(count / 27), { offset: 100_000 }).slice(0, count);

    let started = performance.now();
    for (let i = 0; i < numbers.length; i += 10_000) {
      const result = await container.monitors.createMany(
        principal,
        numbers.slice(i, i + 10_000).map((vat_number) => ({ vat_number, interval: 'daily' as const })),
      );
      if (result.summary.created !== Math.min(10_000, numbers.length - i)) throw new Error('bulk failed');
    }
    const createMs = performance.now() - started;

    // The first checks (due at once after an import): paced one call per member state at a time.
    started = performance.now();
    let cpu = process.cpuUsage();
    const first = await container.monitorScheduler.drain();
    const firstCpu = process.cpuUsage(cpu);
    const firstMs = performance.now() - started;
    if (first !== count) throw new Error(`first checks: ${first} of ${count}`);

    // A nothing-due poll, as the scheduler makes once a second when idle.
    const idleRuns = 200;
    started = performance.now();
    for (let i = 0; i < idleRuns; i++) await container.monitors.claimDue(32);
    const idlePollMs = (performance.now() - started) / idleRuns;

    // Re-checks come at least half a day after the first checks: the 24 hours from 12 h to 36 h
    // after them hold one check of every monitor. Measured an hour at a time.
    clock.advance(12 * HOUR);
    if ((await container.monitorScheduler.drain()) !== 0) throw new Error('re-checks before half a day');
    const hours: Array<{
      hour: number;
      checks: number;
      cpuMs: number;
      wallMs: number;
      maxCallsPerCountry: number;
    }> = [];
    for (let h = 1; h <= 24; h++) {
      clock.advance(HOUR);
      calls.clear();
      cpu = process.cpuUsage();
      started = performance.now();
      const checks = await container.monitorScheduler.drain();
      const used = process.cpuUsage(cpu);
      hours.push({
        hour: new Date(clock.millis()).getUTCHours(),
        checks,
        cpuMs: Math.round((used.user + used.system) / 1000),
        wallMs: Math.round(performance.now() - started),
        maxCallsPerCountry: Math.max(0, ...calls.values()),
      });
    }
    const day = hours.reduce((n, h) => n + h.checks, 0);
    const cpuPerHour = hours.map((h) => h.cpuMs).sort((a, b) => a - b);
    const perHourCapacity = Math.floor(HOUR / callLatencyMs) * config.monitors.perCountry;
    const maxCalls = Math.max(...hours.map((h) => h.maxCallsPerCountry));
    const result = {
      command: `npm run bench -- ${name}`,
      date: today(),
      node: process.version,
      monitors: count,
      interval: 'daily',
      database: postgres
        ? 'postgresql (local server, its own CPU not counted), one instance'
        : 'sqlite (file, WAL), one instance',
      quietWindows: config.monitors.quietWindows,
      createMs: Math.round(createMs),
      firstChecks: {
        checks: first,
        wallMs: Math.round(firstMs),
        cpuMs: Math.round((firstCpu.user + firstCpu.system) / 1000),
      },
      idlePollMs: Math.round(idlePollMs * 1000) / 1000,
      day: {
        checks: day,
        checksPerHour: {
          min: Math.min(...hours.map((h) => h.checks)),
          max: Math.max(...hours.map((h) => h.checks)),
        },
        wallMsPerHour: {
          median: hours.map((h) => h.wallMs).sort((a, b) => a - b)[12],
          max: Math.max(...hours.map((h) => h.wallMs)),
        },
        cpuMsPerHour: {
          median: cpuPerHour[12],
          max: cpuPerHour[cpuPerHour.length - 1],
          mean: Math.round(cpuPerHour.reduce((a, b) => a + b, 0) / 24),
        },
        maxCallsPerCountryHour: maxCalls,
        callCapacityPerCountryHour: perHourCapacity,
      },
      hours,
    };
    writeResult(name, result);
    const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;
    updatePerformanceTable(
      name,
      `| Monitoring, 100,000 numbers daily over 27 countries, one instance, ${postgres ? 'PostgreSQL' : 'SQLite'} (${result.date}, \`${result.command}\`) | scheduler CPU per hour: median ${result.day.cpuMsPerHour.median} ms, max ${result.day.cpuMsPerHour.max} ms${postgres ? ` (the service; PostgreSQL's not counted), busy ${result.day.wallMsPerHour.median} ms` : ''} (${result.day.checksPerHour.min.toLocaleString('en')}–${result.day.checksPerHour.max.toLocaleString('en')} checks/h) | registry calls per country and hour: at most ${maxCalls.toLocaleString('en')} of ${perHourCapacity.toLocaleString('en')} (1 slot, 150 ms per call) | ${pct(maxCalls, perHourCapacity)} of the limit |`,
    );
    return result;
  } finally {
    await container.close();
    rmSync(dir, { recursive: true, force: true });
    if (postgres) {
      const admin = createDatabase(postgres);
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(admin.kysely);
      await admin.close();
    }
  }
}
