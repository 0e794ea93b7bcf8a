import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { detectDelimiter, formatCsvRow, parseCsv, readInput } from '../../src/cli/csv.js';
import { createDatabase } from '../../src/db/database.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';

describe('the CSV reader of validate-file', () => {
  it('parses quoted fields with delimiters, quotes and line breaks, a BOM and CRLF', () => {
    const text =
      '\ufeffname,vat\r\n"Smith, ""Jr."" & Co",DE100000008\r\n"two\r\nlines",DE300000002\r\nplain,\r\n';
    assert.deepEqual(parseCsv(text), [
      ['name', 'vat'],
      ['Smith, "Jr." & Co', 'DE100000008'],
      ['two\r\nlines', 'DE300000002'],
      ['plain', ''],
    ]);
    assert.deepEqual(parseCsv('a,b\n1,2'), [
      ['a', 'b'],
      ['1', '2'],
    ]);
    assert.deepEqual(parseCsv('"a"'), [['a']]);
  });

  it('writes fields that need it quoted, and reads them back unchanged', () => {
    const fields = ['Smith, "Jr."', 'two\nlines', 'plain', ''];
    assert.equal(formatCsvRow(fields), '"Smith, ""Jr.""","two\nlines",plain,\n');
    assert.deepEqual(parseCsv(formatCsvRow(fields)), [fields]);
  });

  it('detects the delimiter, the header and the VAT column', () => {
    assert.equal(detectDelimiter('name;vat_id;city\n'), ';');
    assert.equal(detectDelimiter('"a;b",vat\n'), ',');
    const csv = readInput('customer,country,VAT Number\nA,DE,DE100000008\n');
    assert.equal(csv.column, 2);
    assert.equal(csv.hasHeader, true);
    assert.equal(readInput('id,vat_id\n1,DE100000008\n').column, 1);
    assert.equal(readInput('name,ust\nA,DE100000008\n').column, 0);
    assert.equal(readInput('name,ust\nA,DE100000008\n', 'UST').column, 1);
    assert.throws(() => readInput('name,ust\n', 'vat'), /no column "vat"/);
    const list = readInput('DE100000008\nDE300000002\n\n');
    assert.equal(list.hasHeader, false);
    assert.deepEqual(list.rows, [['DE100000008'], ['DE300000002']]);
  });
});

describe('openvat validate-file', () => {
  let dir: string;
  let databaseUrl: string;
  let testKey: string;
  const csv = [
    'customer,"VAT number",note',
    '"Müller, Hans","DE 100 000 008","said ""hi"""',
    'Two Lines Ltd,DE300000002,"first line',
    'second line"',
    'Broken,DE123,',
    'Down,DE400000000,x',
    'Austria,ATU13585627,y',
    'Empty,,z',
    'Again,de100000008,',
  ].join('\r\n');
  const inputRows = parseCsv(csv).slice(1);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-validate-file-'));
    databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
    const t = await buildTestApp({ DATABASE_URL: databaseUrl });
    try {
      testKey = (await t.key('business', 'test')).key;
    } finally {
      await t.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function cli(...args: string[]) {
    return spawnSync(process.execPath, [...builtCli, 'validate-file', ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
  }

  function checkOutput(path: string) {
    const rows = parseCsv(readFileSync(path, 'utf8'));
    assert.deepEqual(rows[0], [
      'customer',
      'VAT number',
      'note',
      'vat_valid',
      'vat_normalised',
      'vat_company_name',
      'vat_company_address',
      'vat_error',
      'vat_checked_at',
    ]);
    const body = rows.slice(1);
    assert.equal(body.length, inputRows.length, 'every input row exactly once');
    body.forEach((row, i) => {
      assert.deepEqual(row.slice(0, 3), inputRows[i], `row ${i + 1} in order`);
    });
    const byName = new Map(body.map((r) => [r[0], r.slice(3)]));
    assert.deepEqual(byName.get('Müller, Hans')?.slice(0, 2), ['true', 'DE100000008']);
    assert.ok(byName.get('Müller, Hans')?.[2]);
    assert.deepEqual(byName.get('Two Lines Ltd')?.slice(0, 2), ['false', 'DE300000002']);
    assert.equal(byName.get('Broken')?.[4], 'invalid_format');
    assert.equal(byName.get('Down')?.[4], 'registry_unavailable');
    assert.equal(byName.get('Austria')?.[0], 'true');
    assert.equal(byName.get('Empty')?.[4], 'invalid_format');
    assert.match(byName.get('Again')?.[5] ?? '', /^\d{4}-\d\d-\d\dT/);
  }

  it('validates in-process, and a second run resumes where the first stopped', () => {
    const input = join(dir, 'customers.csv');
    writeFileSync(input, csv);
    const first = cli(input, '--key', testKey, '--limit', '3');
    // Exit status 1: a row failed (Broken, invalid_format).
    assert.equal(first.status, 1, first.stderr);
    assert.match(first.stderr, /3 rows validated, 0 already in .*; 3 rows in it \(stopped before the end/);
    assert.match(first.stderr, /Failed: 1 \(malformed 1\)\n$/);
    const partial = parseCsv(readFileSync(`${input}.results.csv`, 'utf8'));
    assert.equal(partial.length, 4);
    // An interrupted write leaves half a row behind; the next run drops it and redoes that row.
    writeFileSync(`${input}.results.csv`, `${readFileSync(`${input}.results.csv`, 'utf8')}Down,DE4000`);
    const second = cli(input, '--key', testKey);
    assert.equal(second.status, 1, second.stderr);
    assert.match(second.stderr, /4 rows validated, 3 already in .*; 7 rows in it\./);
    checkOutput(`${input}.results.csv`);
    // The row that failed with registry_unavailable is asked again; the others are kept.
    const third = cli(input, '--key', testKey);
    assert.equal(third.status, 1, third.stderr);
    assert.match(third.stderr, /1 row validated \(1 retried after registry_unavailable\), 6 already in/);
    checkOutput(`${input}.results.csv`);
    assert.ok(!existsSync(`${input}.results.csv.partial`));
  });

  it('validates a plain list without a header, with the first active key', () => {
    const input = join(dir, 'list.txt');
    writeFileSync(input, 'DE100000008\nDE300000002\n');
    const res = cli(input, '--out', join(dir, 'list.csv'));
    assert.equal(res.status, 0, res.stderr);
    const rows = parseCsv(readFileSync(join(dir, 'list.csv'), 'utf8'));
    assert.deepEqual(rows[0]?.slice(0, 2), ['vat_number', 'vat_valid']);
    assert.deepEqual(
      rows.slice(1).map((r) => r.slice(0, 2)),
      [
        ['DE100000008', 'true'],
        ['DE300000002', 'false'],
      ],
    );
  });

  it('records each chunk as a synchronous batch call is recorded: its audit record with the results', async () => {
    const db = createDatabase(databaseUrl);
    const audits = () =>
      db.kysely.selectFrom('audits').selectAll().where('endpoint', '=', 'validate_batch').execute();
    try {
      const before = new Set((await audits()).map((a) => a.request_id));
      const input = join(dir, 'audited.txt');
      writeFileSync(input, 'DE100000008\nDE300000002\nATU13585627\n');
      const res = cli(input, '--key', testKey, '--out', join(dir, 'audited.csv'), '--chunk', '2');
      assert.equal(res.status, 0, res.stderr);
      const added = (await audits()).filter((a) => !before.has(a.request_id));
      assert.equal(added.length, 2, 'one audit record per chunk of 2');
      const recorded = added.map(
        (a) => JSON.parse(a.response) as { data: { results: Array<{ data?: { vat_number: string } }> } },
      );
      assert.deepEqual(recorded.flatMap((r) => r.data.results.map((item) => item.data?.vat_number)).sort(), [
        'ATU13585627',
        'DE100000008',
        'DE300000002',
      ]);
      for (const a of added) assert.equal(a.status_code, 200);
    } finally {
      await db.close();
    }
  });

  it('pads a short row to the header; a row with more fields than the header is refused, naming its line, exit status 2', () => {
    const short = join(dir, 'short.csv');
    writeFileSync(short, 'name,vat\nShort\nFull,DE100000008\n');
    const res = cli(short, '--key', testKey);
    assert.equal(res.status, 1, res.stderr);
    const rows = parseCsv(readFileSync(`${short}.results.csv`, 'utf8'));
    assert.deepEqual(rows[1]?.slice(0, 2), ['Short', '']);
    assert.equal(rows[1]?.[6], 'invalid_format');
    assert.equal(rows[1]?.length, 8);
    assert.deepEqual(rows[2]?.slice(0, 4), ['Full', 'DE100000008', 'true', 'DE100000008']);
    assert.equal(rows[2]?.length, 8);

    const long = join(dir, 'long.csv');
    writeFileSync(long, 'name,vat\nA,DE100000008\nLong,DE100000008,extra 1,extra 2\n');
    const refused = cli(long, '--key', testKey);
    assert.equal(refused.status, 2, refused.stderr);
    assert.equal(
      refused.stderr,
      `openvat: ${long}, line 3: 4 fields, but the first row has 2; a row may not have more fields than the header (quote a field that holds the delimiter)\n`,
    );
    assert.equal(existsSync(`${long}.results.csv`), false, 'nothing written');
  });

  it('refuses a row over 1 MiB (one huge field) naming its line, exit status 2, without reading the rest', () => {
    const input = join(dir, 'huge-field.csv');
    // A field a little over the bound, then more rows that are never reached.
    writeFileSync(input, `name,vat\nA,DE100000008\n"${'x'.repeat(1_100_000)}",DE100000008\nB,DE100000008\n`);
    const res = cli(input, '--key', testKey);
    assert.equal(res.status, 2, res.stderr);
    assert.equal(
      res.stderr,
      `openvat: ${input}, line 3: a row longer than 1,048,576 bytes, the most a row may hold (an unclosed quote, or not a CSV file?)\n`,
    );
    assert.equal(existsSync(`${input}.results.csv`), false, 'nothing written');
  });

  it('reports malformed CSV with its line number and exit status 2', () => {
    const input = join(dir, 'malformed.csv');
    writeFileSync(
      input,
      'name,vat\nA,DE100000008\n"Unterminated,DE300000002\nC,DE100000008\nD,DE100000008\n',
    );
    const res = cli(input, '--key', testKey);
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, /malformed\.csv is not valid CSV \(line \d+\): Quote Not Closed/);
    assert.doesNotMatch(res.stderr, /Failed by country: UN/);
    assert.equal(
      existsSync(`${input}.results.csv`),
      false,
      'no output file for an input that cannot be read',
    );
  });

  it("reads the whole input before writing: a malformed file leaves an earlier run's output untouched", () => {
    const input = join(dir, 'badquote.csv');
    writeFileSync(input, 'name,vat\n"unterminated,DE100000008\nx,DE100000008\n');
    const fresh = cli(input, '--key', testKey);
    assert.equal(fresh.status, 2, fresh.stderr);
    assert.match(fresh.stderr, /badquote\.csv is not valid CSV \(line 3\)/);
    assert.equal(existsSync(`${input}.results.csv`), false);
    const out = join(dir, 'badquote-earlier.csv');
    const earlier =
      'name,vat,vat_valid,vat_normalised,vat_company_name,vat_company_address,vat_error,vat_checked_at\n';
    writeFileSync(out, earlier);
    const resumed = cli(input, '--key', testKey, '--out', out);
    assert.equal(resumed.status, 2, resumed.stderr);
    assert.equal(readFileSync(out, 'utf8'), earlier);
    assert.equal(existsSync(`${out}.partial`), false);
  });

  it('creates no output when the database or the key cannot be used', () => {
    const input = join(dir, 'nodb.csv');
    writeFileSync(input, 'DE100000008\n');
    const res = spawnSync(process.execPath, [...builtCli, 'validate-file', input, '--key', testKey], {
      env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'none.sqlite')}`, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, /no database at/);
    const badKey = cli(input, '--key', 'svc_test_nope');
    assert.equal(badKey.status, 2, badKey.stderr);
    assert.equal(existsSync(`${input}.results.csv`), false);
  });

  it('says plainly when --out is the input file or cannot be written', () => {
    const input = join(dir, 'same.csv');
    const text = 'name,vat\nA,DE100000008\n';
    writeFileSync(input, text);
    const same = cli(input, '--key', testKey, '--out', input);
    assert.equal(same.status, 2, same.stderr);
    assert.match(same.stderr, /^openvat: --out .*same\.csv is the input file; choose another file/);
    assert.equal(readFileSync(input, 'utf8'), text, 'the input is untouched');
    const missing = join(dir, 'no', 'such', 'dir', 'out.csv');
    const noDir = cli(input, '--key', testKey, '--out', missing);
    assert.equal(noDir.status, 2, noDir.stderr);
    assert.equal(
      noDir.stderr,
      `openvat: cannot write ${missing}: the directory ${join(dir, 'no', 'such', 'dir')} does not exist\n`,
    );
    assert.doesNotMatch(noDir.stderr, /ENOENT/);
  });

  it('neutralises registry text that a spreadsheet would run as a formula', async () => {
    // A service whose registry answers with names and addresses that start like formulas.
    const hostile = ['=HYPERLINK("http://x","a")', '+1', '-2+3', '@SUM(A1)', '\tTab', '\rCR', 'Plain GmbH'];
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        const numbers = (JSON.parse(body) as { vat_numbers: string[] }).vat_numbers;
        const results = numbers.map((n, i) => ({
          ok: true,
          data: {
            valid: true,
            vat_number: n,
            company: { name: hostile[i % hostile.length], address: hostile[(i + 1) % hostile.length] },
            verified_at: '2026-11-26T00:00:00.000Z',
          },
        }));
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: { results }, meta: {} }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    try {
      const input = join(dir, 'hostile.csv');
      writeFileSync(input, `vat\n${hostile.map((_, i) => `DE10000000${i}`).join('\n')}\n`);
      const { spawn } = await import('node:child_process');
      const child = spawn(
        process.execPath,
        [
          ...[...builtCli, 'validate-file', input],
          ...['--url', `http://127.0.0.1:${port}`, '--key', testKey, '--sync'],
        ],
        { env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } },
      );
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.equal(code, 0, stderr);
      const rows = parseCsv(readFileSync(`${input}.results.csv`, 'utf8')).slice(1);
      assert.deepEqual(
        rows.map((r) => r[3]),
        ['\'=HYPERLINK("http://x","a")', "'+1", "'-2+3", "'@SUM(A1)", "'\tTab", "'\rCR", 'Plain GmbH'],
      );
      assert.deepEqual(
        rows.map((r) => r[4]),
        ["'+1", "'-2+3", "'@SUM(A1)", "'\tTab", "'\rCR", 'Plain GmbH', '\'=HYPERLINK("http://x","a")'],
      );
      // Our own columns are as they were: the number, true/false, the time.
      assert.deepEqual(rows[0]?.slice(0, 3), ['DE100000000', 'true', 'DE100000000']);
      assert.equal(rows[0]?.[6], '2026-11-26T00:00:00.000Z');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('says clearly that a file does not exist', () => {
    const res = cli(join(dir, 'nope.csv'), '--key', testKey);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /^openvat: .*nope\.csv: no such file\n$/);
    assert.doesNotMatch(res.stderr, /ENOENT/);
  });

  it('counts a malformed number as malformed, not under the country its letters spell', () => {
    const input = join(dir, 'malformed-numbers.csv');
    // `not-a-number` starts with NO, Norway's prefix; DE400000000 is a registry that does not answer.
    writeFileSync(input, 'vat\nnot-a-number\nDE400000000\nDE100000008\n');
    const res = cli(input, '--key', testKey);
    assert.equal(res.status, 1, res.stderr);
    assert.match(res.stderr, /Failed: 2 \(malformed 1; by country: DE 1\)\n$/);
    assert.doesNotMatch(res.stderr, /NO 1/);
    const rows = parseCsv(readFileSync(`${input}.results.csv`, 'utf8'));
    assert.deepEqual(
      rows.slice(1).map((r) => r[5]),
      ['invalid_format', 'registry_unavailable', ''],
    );
  });

  it('says clearly that the service cannot be reached, and leaves no results file behind', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((r) => server.close(() => r()));
    const input = join(dir, 'unreachable.csv');
    writeFileSync(input, 'DE100000008\n');
    const res = cli(input, '--url', `http://127.0.0.1:${port}`, '--key', testKey, '--sync');
    assert.equal(res.status, 2, res.stderr);
    assert.match(
      res.stderr,
      new RegExp(
        `^openvat: cannot reach http://127\\.0\\.0\\.1:${port} \\(connection refused\\); .*; nothing was written to .*unreachable\\.csv\\.results\\.csv\n$`,
      ),
    );
    assert.doesNotMatch(res.stderr, /fetch failed/);
    assert.equal(existsSync(`${input}.results.csv`), false, 'no file of a header alone');
    // An earlier run's results stay as they were.
    writeFileSync(
      `${input}.results.csv`,
      'vat_number,vat_valid,vat_normalised,vat_company_name,vat_company_address,vat_error,vat_checked_at\n' +
        'DE100000008,,,,,registry_unavailable,\n',
    );
    const before = readFileSync(`${input}.results.csv`, 'utf8');
    const again = cli(input, '--url', `http://127.0.0.1:${port}`, '--key', testKey, '--sync');
    assert.equal(again.status, 2, again.stderr);
    assert.match(again.stderr, /; .*unreachable\.csv\.results\.csv is as it was\n$/);
    assert.equal(readFileSync(`${input}.results.csv`, 'utf8'), before);
    assert.equal(existsSync(`${input}.results.csv.partial`), false);
  });

  describe('through a running service', () => {
    let t: TestApp;
    let url: string;
    let key: string;

    before(async () => {
      t = await buildTestApp();
      key = (await t.key('pro', 'test')).key;
      url = await t.app.listen({ host: '127.0.0.1', port: 0 });
      t.container.start();
    });
    after(() => t.close());

    for (const mode of ['batch jobs', 'the synchronous API'] as const) {
      it(`with ${mode}`, async () => {
        const input = join(dir, `remote-${mode.length}.csv`);
        writeFileSync(input, csv);
        const extra = mode === 'batch jobs' ? ['--chunk', '4', '--poll-ms', '20'] : ['--sync'];
        const { spawn } = await import('node:child_process');
        const child = spawn(
          process.execPath,
          [...builtCli, 'validate-file', input, '--url', url, '--key', key, ...extra],
          { env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } },
        );
        let stderr = '';
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        const code = await new Promise((resolve) => child.once('exit', resolve));
        assert.equal(code, 1, stderr);
        assert.match(stderr, /7 rows validated, 0 already in .*Failed: 3 \(malformed 2; by country: DE 1\)/);
        checkOutput(`${input}.results.csv`);
      });
    }

    it('fails clearly for a key without batch', async () => {
      const starter = (await t.key('starter', 'test')).key;
      const input = join(dir, 'starter.csv');
      writeFileSync(input, csv);
      const { spawn } = await import('node:child_process');
      const child = spawn(
        process.execPath,
        [...builtCli, 'validate-file', input, '--url', url, '--key', starter, '--sync'],
        { env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } },
      );
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.equal(code, 2);
      assert.match(stderr, /plan_required/);
    });
  });
});

describe('openvat validate-file in-process, on a database of several accounts', () => {
  let dir: string;
  let databaseUrl: string;
  let keys: { id: string; key: string }[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-validate-file-accounts-'));
    databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
    const t = await buildTestApp({ DATABASE_URL: databaseUrl });
    try {
      keys = [await t.key('business', 'test'), await t.key('business', 'test')];
    } finally {
      await t.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [...builtCli, 'validate-file', ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });

  async function auditsByKey(): Promise<Record<string, number>> {
    const db = createDatabase(databaseUrl);
    try {
      const rows = await db.kysely.selectFrom('audits').select('key_id').execute();
      const out: Record<string, number> = {};
      for (const row of rows) out[row.key_id] = (out[row.key_id] ?? 0) + 1;
      return out;
    } finally {
      await db.close();
    }
  }

  it('does not pick one of them without --key: nothing is recorded under a key nobody named', async () => {
    const input = join(dir, 'list.txt');
    writeFileSync(input, 'DE100000008\n');
    const res = cli(input, '--out', join(dir, 'unnamed.csv'));
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, /^openvat: .*several accounts.*--key/);
    assert.deepEqual(await auditsByKey(), {});
    const named = cli(input, '--key', keys[1]?.key as string, '--out', join(dir, 'named.csv'));
    assert.equal(named.status, 0, named.stderr);
    assert.deepEqual(await auditsByKey(), { [keys[1]?.id as string]: 1 });
  });
});
