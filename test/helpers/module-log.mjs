// `NODE_OPTIONS="--import ./test/helpers/module-log.mjs"` with OPENVAT_MODULE_LOG=FILE: every module
// a process loads through the ES module loader (`import`, `import()`) is appended to FILE as its URL,
// one a line, when it is loaded. Tests read it to show what a command does not load.
import { register } from 'node:module';

register('./module-log-hooks.mjs', import.meta.url);
