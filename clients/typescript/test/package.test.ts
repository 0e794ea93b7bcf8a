import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_PATH, clientTypes } from '../../../scripts/client-types.js';
import { freePort } from './ports.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));

function tsc(project: string): { status: number | null; output: string } {
  const result = spawnSync(
    process.execPath,
    [`${ROOT}node_modules/typescript/bin/tsc`, '--noEmit', '-p', project],
    {
      encoding: 'utf8',
    },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('@openvat/client package', () => {
  it('its committed types are what the running service describes (npm run generate:client)', async () => {
    const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    const current = await clientTypes();
    assert.ok(
      committed === current,
      'clients/typescript/src/openapi.ts differs from GET /openapi.json: run `npm run generate:client`',
    );
  });

  it('its source imports no Node module and type-checks with the DOM and ES2022 libraries only', () => {
    for (const file of readdirSync(`${PACKAGE}src`)) {
      const text = readFileSync(`${PACKAGE}src/${file}`, 'utf8');
      assert.doesNotMatch(text, /from ['"](node:|fs|path|http|https|crypto|buffer|stream|url)['"/]/, file);
      assert.doesNotMatch(text, /\b(Buffer|require)\s*[.(]/, file);
    }
    const tsconfig = JSON.parse(readFileSync(`${PACKAGE}tsconfig.json`, 'utf8'));
    assert.deepEqual(tsconfig.compilerOptions.types, []);
    const result = tsc(`${PACKAGE}tsconfig.json`);
    assert.equal(result.status, 0, result.output);
  });

  it('the example receivers type-check against the package', () => {
    const result = tsc(`${PACKAGE}examples/tsconfig.json`);
    assert.equal(result.status, 0, result.output);
  });

  it('is ready to publish: exports, types and files name what the build writes', () => {
    const pkg = JSON.parse(readFileSync(`${PACKAGE}package.json`, 'utf8'));
    assert.equal(pkg.name, '@openvat/client');
    assert.equal(pkg.exports['.'].types, './dist/index.d.ts');
    assert.equal(pkg.exports['.'].default, './dist/index.js');
    assert.ok(pkg.files.includes('dist') && pkg.files.includes('README.md'));
    // The README shows the Node receiver exactly as examples/node-http.ts, which the webhook tests run.
    const readme = readFileSync(`${PACKAGE}README.md`, 'utf8');
    assert.ok(readme.includes(`\`\`\`ts\n${readFileSync(`${PACKAGE}examples/node-http.ts`, 'utf8')}\`\`\``));
  });
});

describe('docs/batch.md', () => {
  it('lists the per-item error codes the API describes, and no other', () => {
    const types = readFileSync(`${PACKAGE}src/openapi.ts`, 'utf8');
    const start = types.indexOf('"/v1/validate/batch": {');
    const enumLine = /code: ((?:"[a-z_]+"(?: \| )?)+);/.exec(types.slice(start))?.[1];
    assert.ok(enumLine, 'the item error code enum of POST /v1/validate/batch');
    const codes = [...enumLine.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]).sort();
    const doc = readFileSync(`${ROOT}docs/batch.md`, 'utf8');
    const sentence = /"error": \{"code", "message"\}\}([^.]*)\./.exec(doc)?.[1];
    assert.ok(sentence, 'the sentence on item errors');
    const listed = [...new Set([...sentence.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]))].sort();
    assert.deepEqual(listed, codes);
  });
});

describe('the examples', () => {
  for (const file of ['node-http.ts', 'fastify.ts']) {
    it(`${file} starts with the command of its "Run" line, run where that line says`, async () => {
      const first = readFileSync(`${PACKAGE}examples/${file}`, 'utf8').split('\n')[0] ?? '';
      const command = /Run from the repository root \(after npm ci\): (.+)$/.exec(first)?.[1];
      assert.ok(command, `the first line of ${file} says how to run it: ${first}`);
      const port = await freePort();
      const child = spawn('sh', ['-c', command], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let output = '';
      child.stdout?.on('data', (chunk) => {
        output += chunk;
      });
      child.stderr?.on('data', (chunk) => {
        output += chunk;
      });
      try {
        const deadline = Date.now() + 20_000;
        while (!output.includes('listening on') && child.exitCode === null && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.match(output, new RegExp(`listening on http://127.0.0.1:${port}`), output);
      } finally {
        if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
      }
    });
  }
});
