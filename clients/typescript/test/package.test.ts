import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_PATH, clientTypes } from '../../../scripts/client-types.js';

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
