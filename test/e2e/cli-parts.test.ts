import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

const exec = promisify(execFile);
// The built CLI, as an operator runs it (`npm run build` makes it).
const CLI = 'dist/cli/index.js';

/** The parts a run made, read from its "part built" debug lines (stdout and stderr alike). */
function partsBuilt(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; part?: string })
    .filter((entry) => entry.msg === 'part built' && typeof entry.part === 'string')
    .map((entry) => entry.part as string);
}

async function cli(args: string[], env: Record<string, string>) {
  const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', OPENVAT_TEDB_URL: 'off', ...env },
  });
  return { stdout, stderr };
}

/** Parts only a running service needs: queued work, its workers and the rates sync. */
const SERVICE_ONLY = [
  'webhooks',
  'webhook-worker',
  'batch',
  'batch-worker',
  'monitors',
  'monitor-scheduler',
  'rates-updates',
  'evidence',
] as const;

describe('the CLI makes only the container parts a command uses', () => {
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  before(async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    dir = mkdtempSync(join(tmpdir(), 'openvat-parts-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'parts.db')}` };
    await cli(['migrate'], env);
    const created = await cli(['keys', 'create', '--plan', 'business', '--mode', 'test', '--json'], env);
    key = (JSON.parse(created.stdout) as { key: string }).key;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keys list makes the keys and administration parts and nothing of the running service', async () => {
    const run = await cli(['keys', 'list', '--json'], { ...env, LOG_LEVEL: 'debug' });
    const listed = JSON.parse(
      run.stdout.split('\n').find((line) => line.startsWith('[')) ?? '[]',
    ) as unknown[];
    assert.equal(listed.length, 1, run.stdout);
    const parts = partsBuilt(`${run.stdout}\n${run.stderr}`);
    assert.deepEqual(parts.sort(), ['administration', 'keys']);
  });

  it('accounts list makes the same two parts', async () => {
    const run = await cli(['accounts', 'list'], { ...env, LOG_LEVEL: 'debug' });
    assert.match(run.stdout, /Default|account|01/);
    assert.deepEqual(partsBuilt(`${run.stdout}\n${run.stderr}`).sort(), ['administration', 'keys']);
  });

  it('validate-file validates through validation and the outbox, without workers, monitors or the rates sync', async () => {
    const input = join(dir, 'numbers.csv');
    writeFileSync(input, 'vat\nDE100000008\nDE300000002\n');
    const run = await cli(['validate-file', input, '--key', key], { ...env, LOG_LEVEL: 'debug' });
    const results = readFileSync(`${input}.results.csv`, 'utf8');
    assert.match(results, /^DE100000008,true,/m);
    assert.match(results, /^DE300000002,false,/m);
    const parts = partsBuilt(`${run.stdout}\n${run.stderr}`);
    for (const needed of ['keys', 'validation', 'outbox']) assert.ok(parts.includes(needed), parts.join(' '));
    for (const part of SERVICE_ONLY.filter((p) => p !== 'batch'))
      assert.ok(!parts.includes(part), `${part} was made: ${parts.join(' ')}`);
  });
});
