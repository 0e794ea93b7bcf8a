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
