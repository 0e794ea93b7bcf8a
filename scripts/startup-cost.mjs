#!/usr/bin/env node
// CPU time of the service's start in this process, by phase, on src/ as a test process loads it:
// loading the modules, createContainer, buildApp and app.ready(), on an in-memory SQLite database.
// A test process and a server pay these (the built bundle loads its modules faster:
// scripts/build.mjs).
//
//   npx tsx scripts/startup-cost.mjs
const cpu = () => Math.round(process.cpuUsage().user / 1000);
const start = cpu();
const { loadConfig } = await import('../src/config.ts');
const { createContainer } = await import('../src/container.ts');
const { buildApp } = await import('../src/app.ts');
const loaded = cpu();
const container = await createContainer(
  loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    LOG_LEVEL: 'silent',
    OPENVAT_TEDB_URL: 'off',
    OPENVAT_NATIONAL_FALLBACKS: 'none',
  }),
);
const contained = cpu();
const app = await buildApp(container);
const built = cpu();
await app.ready();
const ready = cpu();
console.log(
  `CPU ms: modules ${loaded - start}, createContainer ${contained - loaded}, buildApp ${built - contained}, ready ${ready - built}, total ${ready}`,
);
await app.close();
await container.close();
