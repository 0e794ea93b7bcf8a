import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { createDatabase } from '../../src/db/database.js';
import { buildTestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';

describe('openvat monitors import|export|list', () => {
  let dir: string;
  let databaseUrl: string;
  let key: string;
  let starterKey: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-monitors-'));
    databaseUrl = `sqlite:${join(dir, 'db.sqlite')}`;
    const t = await buildTestApp({ DATABASE_URL: databaseUrl });
    key = (await t.key('pro', 'test')).key;
    starterKey = (await t.key('starter', 'test')).key;
    await t.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function cli(...args: string[]) {
    return spawnSync(process.execPath, [...builtCli, 'monitors', ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
  }

  it('imports a CSV (bad rows reported), lists and exports a re-importable CSV', () => {
    const file = join(dir, 'customers.csv');
    writeFileSync(
      file,
      '\ufeffvat_number;reference;interval;metadata\nDE100000008;C-1;;"{""crm"":""a1""}"\n"DE 300 000 002";C-2;weekly;\nDE1;C-3;;\nDE100000008;C-1b;;\nDE910000000;C-4;hourly;\n',
    );
    const imported = cli('import', file, '--key', key, '--interval', 'monthly');
    assert.equal(imported.status, 1, imported.stderr);
    assert.match(imported.stdout, /2 monitors created, 1 already monitored, 2 rows refused/);
    assert.match(imported.stderr, /line 6: interval "hourly"/);
    // Refusals of both kinds name the file's line (DE1 is on line 4).
    assert.match(imported.stderr, /line 4 \(DE1\): invalid_format/);

    const listed = cli('list', '--key', key);
    assert.equal(listed.status, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0] ?? '', /^DE100000008\tunknown\t-\t-\tC-1$/);

    const out = join(dir, 'export.csv');
    const exported = cli('export', '--key', key, '--out', out);
    assert.equal(exported.status, 0, exported.stderr);
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    assert.equal(rows.length, 2);
    assert.deepEqual(
      rows.map((r) => [r.vat_number, r.interval, r.reference, r.metadata]),
      [
        ['DE100000008', 'monthly', 'C-1', '{"crm":"a1"}'],
        ['DE300000002', 'weekly', 'C-2', ''],
      ],
    );
    const again = cli('import', out, '--key', key);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /0 monitors created, 2 already monitored, 0 rows refused/);
  });

  it('a file that cannot be read is named, with exit status 2', () => {
    const missing = cli('import', join(dir, 'nonexistent.csv'), '--key', key);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^openvat: .*nonexistent\.csv: no such file\n$/);
    const directory = cli('import', dir, '--key', key);
    assert.equal(directory.status, 2);
    assert.match(directory.stderr, /is a directory, not a CSV file/);
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'vat_number,reference\nDE100000008,"unclosed\nDE300000002,x\n');
    const malformed = cli('import', bad, '--key', key);
    assert.equal(malformed.status, 2);
    assert.match(malformed.stderr, /^openvat: .*bad\.csv is not valid CSV \(line \d+\)/);
  });

  it('reads a file as validate-file does: a file one accepts, the other accepts too', () => {
    // Semicolons, a header naming the VAT column in words, a comma and a stray quote in unquoted fields.
    const file = join(dir, 'customers-semicolon.csv');
    writeFileSync(
      file,
      'Customer;VAT Number;City\nMüller, Hans;DE 100 000 008;Köln\nSmith "Jr" Co;ATU13585627;Wien\n',
    );
    const validated = spawnSync(
      process.execPath,
      [...builtCli, 'validate-file', file, '--key', key, '--out', join(dir, 'v.csv')],
      { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, encoding: 'utf8' },
    );
    assert.equal(validated.status, 0, validated.stderr);
    const imported = cli('import', file, '--key', key);
    assert.equal(imported.status, 0, imported.stderr);
    // Both rows taken (DE100000008 may be monitored already by an earlier test).
    const counts = /^(\d) monitors? created, (\d) already monitored, 0 rows refused$/m.exec(imported.stdout);
    assert.equal(Number(counts?.[1]) + Number(counts?.[2]), 2, imported.stdout);
  });

  it('refuses, as validate-file does, a row with more fields than the header and a row over 1 MiB, naming the line', () => {
    const long = join(dir, 'long-row.csv');
    writeFileSync(long, 'vat_number,reference\nDE100000008,a\nDE300000002,b,extra\n');
    const refused = cli('import', long, '--key', key);
    assert.equal(refused.status, 2, refused.stderr);
    assert.equal(
      refused.stderr,
      `openvat: ${long}, line 3: 3 fields, but the first row has 2; a row may not have more fields than the header (quote a field that holds the delimiter)\n`,
    );
    const huge = join(dir, 'huge-row.csv');
    writeFileSync(huge, `vat_number,reference\nDE100000008,"${'x'.repeat(1_100_000)}"\n`);
    const tooLong = cli('import', huge, '--key', key);
    assert.equal(tooLong.status, 2, tooLong.stderr);
    assert.equal(
      tooLong.stderr,
      `openvat: ${huge}, line 2: a row longer than 1,048,576 bytes, the most a row may hold (an unclosed quote, or not a CSV file?)\n`,
    );
    assert.equal(tooLong.stdout, '', 'nothing imported');
  });

  it('counts in the singular for one; export neutralises registry text a spreadsheet would run', async () => {
    const file = join(dir, 'one.csv');
    writeFileSync(file, 'vat_number\nDE400000000\n');
    const one = cli('import', file, '--key', key);
    assert.equal(one.status, 0, one.stderr);
    assert.match(one.stdout, /^1 monitor created, 0 already monitored, 0 rows refused$/m);
    const db = createDatabase(databaseUrl);
    try {
      await db.kysely
        .updateTable('monitors')
        .set({ name: '=HYPERLINK("http://x")', address: '@SUM(1)' })
        .where('vat_number', '=', 'DE400000000')
        .execute();
    } finally {
      await db.close();
    }
    const out = join(dir, 'hostile-export.csv');
    const exported = cli('export', '--key', key, '--out', out);
    assert.equal(exported.status, 0, exported.stderr);
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    const row = rows.find((r) => r.vat_number === 'DE400000000');
    assert.equal(row?.company_name, `'=HYPERLINK("http://x")`);
    assert.equal(row?.company_address, "'@SUM(1)");
  });

  it('export --out names a directory that does not exist, without writing anything', () => {
    const missing = join(dir, 'nope', 'out.csv');
    const res = cli('export', '--key', key, '--out', missing);
    assert.equal(res.status, 2, res.stderr);
    assert.equal(
      res.stderr,
      `openvat: cannot write ${missing}: the directory ${join(dir, 'nope')} does not exist\n`,
    );
  });

  it('refuses a key whose plan has no monitoring', () => {
    const res = cli('list', '--key', starterKey);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /Pro or Business plan/);
  });
});
