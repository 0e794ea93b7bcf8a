#!/usr/bin/env node
// The `prepare` script: builds dist/ (the service and the TypeScript client) after `npm ci` and
// `npm install`, and before `npm pack` / `npm publish`.
//
// Not under `npx openvat` (`npm exec`): npm runs the command from its own cache, where it installs
// this checkout as a link, and runs the linked package's `prepare` in the checkout. That rebuilt
// dist/ on every first call (about 30 s) under a service that may be running from it, with nothing
// changed; `npm run build` is the explicit rebuild.
import { spawnSync } from 'node:child_process';

if (process.env.npm_command === 'exec') process.exit(0);
const { status } = spawnSync('npm', ['run', 'build'], {
  stdio: 'inherit',
  shell: process.platform === 'win32',
});
process.exit(status ?? 1);
