#!/usr/bin/env node
// Runs every *.test.ts under test/ and clients/typescript/test/ with the built-in node:test runner (TypeScript through tsx).
// Node 20 has no glob support in `node --test`, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = ['test', 'clients/typescript/test']
  .flatMap(find)
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
