#!/usr/bin/env node
import { enableCompileCache } from './compile-cache.js';

// Before any other module of openvat or its packages is loaded: each is then compiled from the
// cache (the commands in ./program.ts, and the service they start).
enableCompileCache();
await import('./program.js');
