#!/usr/bin/env node
// `npm run build` (after `npm ci`, through `prepare`): the service and its CLI as one bundle in
// dist/cli/, made by esbuild from src/cli/index.ts. Type-checking is `npm run typecheck`'s part.
//
// Why a bundle and not tsc's one file per module: Node resolves, reads and links every ES module on
// its own, and openvat's own 420 modules with Kysely's 262 and TypeBox's 200 (those `openvat keys
// list` loaded) cost more than the work itself. Measured on this 2-core machine, Node 20.20, five
// alternated runs each (2026-12-03): `openvat keys list` 1.13 s → 0.45 s, `openvat --version`
// 0.22 s → 0.16 s; an idle `openvat serve` 124 MB → 105 MB resident after 25 s. The `import()`s
// that load a command or a part on first use stay where they are: each is a chunk of its own.
//
// Left outside the bundle, loaded from node_modules as before: packages with native addons, and
// packages that read their own files at run time (fonts, scripts, workers) or are loaded by a
// path computed at run time (`createRequire`, `import.meta.resolve`).
//
// dist/cli/chunks.json lists, for each file of the bundle, the packages and openvat's own folders
// it holds: what a loaded file stands for (test/e2e/cli-modules.test.ts reads it).
import { rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'cli');

/** Loaded from node_modules at run time (see above). */
const OUTSIDE = [
  'better-sqlite3', // native addon
  'pg', // loaded with createRequire when DATABASE_URL is PostgreSQL; pg-native optional
  'ioredis',
  'pino', // its transports run files of its own in worker threads
  'pdfkit', // reads its font metrics from its own folder
  'jsonc-parser', // a UMD build that requires its parts by computed paths
  '@scalar/fastify-api-reference', // its page script is read from its folder
  '@scalar/client-side-rendering',
];

const packageOf = (specifier) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

/** Node's own modules and the packages in OUTSIDE stay imports; everything else is bundled. */
const outside = {
  name: 'outside',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || OUTSIDE.includes(packageOf(args.path))) {
        return { path: args.path, external: true };
      }
      return undefined;
    });
  },
};

rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
const { metafile } = await build({
  absWorkingDir: ROOT,
  entryPoints: [join(ROOT, 'src', 'cli', 'index.ts')],
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // NODE_OPTIONS=--enable-source-maps shows src/ files and lines in stack traces.
  sourcemap: 'linked',
  metafile: true,
  plugins: [outside],
  // The bundled CommonJS packages call `require` for Node's modules and the packages left outside.
  banner: {
    js: "import { createRequire as __openvatRequire } from 'node:module';\nconst require = __openvatRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

/** What one input file of the bundle stands for: its package, or openvat's own folder. */
function ownerOf(input) {
  const inPackage = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (inPackage) return inPackage[1];
  const own = input.match(/^src\/(.+)\/[^/]+$/);
  return own ? `openvat:${own[1]}` : `openvat:${basename(input)}`;
}

const chunks = {};
for (const [file, output] of Object.entries(metafile.outputs)) {
  if (file.endsWith('.map')) continue;
  chunks[basename(file)] = [...new Set(Object.keys(output.inputs).map(ownerOf))].sort();
}
writeFileSync(join(OUT, 'chunks.json'), `${JSON.stringify(chunks, null, 1)}\n`);
