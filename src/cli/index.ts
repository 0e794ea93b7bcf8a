#!/usr/bin/env node
import { enableCompileCache } from './compile-cache.js';

// Before any other module of openvat or its packages is loaded: each is then compiled from the
// cache (the commands in ./program.ts). Not for the service (`serve`, the default command): there
// the cache was measured to cost more than it saves for the idle service's memory (4–10 MB more
// resident on Node 24, for about a second less start-up); `NODE_COMPILE_CACHE=DIR` turns it on
// for the service too (Node's own setting).
const command = process.argv[2];
if (command !== undefined && command !== 'serve') enableCompileCache();
await import('./program.js');
