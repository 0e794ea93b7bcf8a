import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LV_VID_NUMBERS } from '../../src/simulators/lv-vid.js';
import {
  createSimulatorServer,
  type SimulatorServer,
  type SimulatorUrls,
} from '../../src/simulators/server.js';
import { SI_FURS_NUMBERS } from '../../src/simulators/si-furs.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';
import { createTestDatabase, databaseTargets, databaseUrl } from '../helpers/db.js';
import { postgresName } from '../helpers/resources.js';

/**
 * `openvat registers sync|status` as a user runs them, against the simulators' SI and LV files, on
 * a SQLite file and on PostgreSQL: the copy is in the database, so two service instances on it
 * answer from the one copy the CLI synced, a restart keeps it, and a broken download (cut short, an
 * HTML page, a dropped connection) leaves the good copy answering.
 */
const first = (table: Readonly<Record<string, string>>, outcome: string) => {
  const found = Object.entries(table).find(([, value]) => value === outcome)?.[0];
  assert.ok(found, `a documented number answering ${outcome}`);
  return found;
};
const SI = `SI${first(SI_FURS_NUMBERS, 'po_vat')}`;
const LV = `LV${first(LV_VID_NUMBERS, 'active')}`;

const [sqliteTarget, postgresTarget] = await databaseTargets();
const targets = [
  { name: 'a SQLite file', skip: sqliteTarget?.skip ?? false, postgres: false },
  { name: 'PostgreSQL', skip: postgresTarget?.skip ?? false, postgres: true },
];

for (const target of targets) {
  describe(`openvat registers sync|status on ${target.name}`, { skip: target.skip }, () => {
    let dir: string;
    let url: string;
    let sim: SimulatorServer;
    let urls: SimulatorUrls;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'openvat-registers-'));
      if (target.postgres) {
        const admin = process.env.TEST_DATABASE_URL as string;
        const name = postgresName('registers');
        await createTestDatabase(admin, name);
        url = databaseUrl(admin, name);
      } else {
        url = `sqlite:${join(dir, 'db.sqlite')}`;
      }
      sim = createSimulatorServer();
      ({ urls } = await sim.listen(0, '127.0.0.1'));
      sim.control({ vies: { down: ['SI', 'LV'] } });
      const migrated = await cli('migrate');
      assert.equal(migrated.status, 0, migrated.stderr);
    });
    after(async () => {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const settings = () => ({
      DATABASE_URL: url,
      SI_FURS_URL: urls.SI_FURS_URL,
      LV_VID_URL: urls.LV_VID_URL,
      OPENVAT_NATIONAL_FALLBACKS: 'si,lv',
      OPENVAT_REGISTERS_MIN_ROWS: '1',
    });

    /** The CLI as a child process (asynchronously: the simulator answers from this process). */
    function cli(...args: string[]) {
      return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [...builtCli, ...args],
          { env: { ...process.env, LOG_LEVEL: 'silent', ...settings() }, timeout: 60_000 },
          (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    }

    /** A service instance on the database; its own sync schedule is off (the CLI syncs). */
    const instance = () =>
      buildTestApp({
        ...urls,
        ...settings(),
        OPENVAT_REGISTERS_SYNC_MS: '0',
        OPENVAT_STATUS_POLL_MS: '0',
        OPENVAT_REGISTRY_BACKOFF_MS: '1',
        OPENVAT_REGISTRY_DEADLINE_MS: '0',
        OPENVAT_METRICS_TOKEN: 'metrics-token-for-the-registers-tests',
      });
    const validate = async (t: TestApp, vat: string) => {
      const key = await t.key('business', 'live');
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/validate?vat_number=${vat}`,
        headers: key.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const statusJson = async () => {
      const printed = await cli('registers', 'status', '--json');
      return { status: printed.status, copies: JSON.parse(printed.stdout) as CopyView[] };
    };

    interface CopyView {
      source: string;
      state: string;
      data_date: string | null;
      parts: { part: string; data_date: string; rows: number; fetched_at: string; checked_at: string }[];
      last_sync_at: string | null;
      last_sync_success_at: string | null;
      last_sync_error: string | null;
      next_sync_at: string | null;
    }
    /** The copy itself: what answers, without how the last run ended. */
    const held = (copy: CopyView | undefined) =>
      copy && { source: copy.source, state: copy.state, data_date: copy.data_date, parts: copy.parts };

    let synced: CopyView[] = [];

    it('status before any sync: every file missing, a non-zero exit', async () => {
      const printed = await cli('registers', 'status');
      assert.equal(printed.status, 1, printed.stderr);
      assert.match(printed.stdout, /^si_furs\tmissing\tno data$/m);
      assert.match(printed.stdout, /^ {2}PO\tnot synced yet$/m);
      assert.match(printed.stdout, /^lv_vid\tmissing\tno data$/m);
      assert.match(printed.stdout, /^ {2}last sync: none yet$/m);
    });

    it('sync downloads every file and indexes it; status prints the date and the rows', async () => {
      const run = await cli('registers', 'sync');
      assert.equal(run.status, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      assert.deepEqual(
        lines.map((line) => line.split('\t').slice(0, 3).join(' ')),
        ['si_furs PO replaced', 'si_furs FO replaced', 'si_furs DEJ replaced', 'lv_vid VAT replaced'],
      );
      const { status, copies } = await statusJson();
      assert.equal(status, 0);
      assert.deepEqual(
        copies.map((copy) => [copy.source, copy.state, copy.parts.map((part) => part.part)]),
        [
          ['si_furs', 'current', ['DEJ', 'FO', 'PO']],
          ['lv_vid', 'current', ['VAT']],
        ],
      );
      for (const copy of copies) {
        for (const part of copy.parts) {
          const line = lines.find((l) => l.startsWith(`${copy.source}\t${part.part}\t`)) ?? '';
          assert.match(line, new RegExp(`\\t${part.rows} rows?, file of ${part.data_date}$`));
          assert.ok(part.rows > 0);
        }
      }

      // An unchanged file costs a 304 and keeps the copy, confirmed current now.
      const again = await cli('registers', 'sync', 'lv');
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /^lv_vid\tVAT\tunchanged\tfile of \d{4}-\d{2}-\d{2} \(304 Not Modified\)$/m);
      assert.doesNotMatch(again.stdout, /si_furs/);
      synced = (await statusJson()).copies;
      assert.deepEqual(synced[0], copies[0]);
      for (const copy of synced) {
        assert.equal(copy.last_sync_error, null);
        assert.equal(copy.last_sync_success_at, copy.last_sync_at);
        assert.ok(Date.parse(copy.last_sync_at ?? '') > 0);
      }
      const printed = await cli('registers', 'status', 'si');
      assert.match(printed.stdout, /^ {2}last sync \S+: every file synced; next \S+$/m);
      const [vat] = synced[1]?.parts ?? [];
      const [held] = copies[1]?.parts ?? [];
      assert.deepEqual({ ...vat, checked_at: null }, { ...held, checked_at: null });
      assert.ok((vat?.checked_at ?? '') > (held?.checked_at ?? ''), 'confirmed by the 304');
    });

    it('two instances on the database answer from the one copy, with its date, on /v1/status and /metrics', async () => {
      const a = await instance();
      const b = await instance();
      try {
        for (const t of [a, b]) {
          for (const [vat, source] of [
            [SI, 'si_furs'],
            [LV, 'lv_vid'],
          ] as const) {
            const body = await validate(t, vat);
            assert.equal(body.data.valid, true, JSON.stringify(body));
            assert.equal(body.meta.source, source);
            assert.equal(body.meta.source_status, 'fallback');
            const copy = synced.find((c) => c.source === source);
            assert.equal(body.meta.fallback.data_date, copy?.data_date);
          }
          const status = (await t.app.inject({ method: 'GET', url: '/v1/status' })).json();
          const si = status.data.national_registers.find((r: { source: string }) => r.source === 'si_furs');
          assert.equal(si.breaker, 'closed');
          assert.ok(Date.parse(si.last_answer_at) > 0, 'its last answer');
          assert.equal(si.data_date, synced[0]?.data_date);
          const { source: _s, data_date: _d, ...files } = synced[0] as CopyView;
          // The instance's own schedule is off (OPENVAT_REGISTERS_SYNC_MS=0): no next run.
          assert.deepEqual(si.files, { ...files, next_sync_at: null });
          const metrics = (
            await t.app.inject({
              method: 'GET',
              url: '/metrics',
              headers: { authorization: 'Bearer metrics-token-for-the-registers-tests' },
            })
          ).body;
          const po = synced[0]?.parts.find((part) => part.part === 'PO');
          assert.match(
            metrics,
            new RegExp(
              `^openvat_national_register_file_rows\\{register="si_furs",part="PO"\\} ${po?.rows}$`,
              'm',
            ),
          );
          assert.match(
            metrics,
            /^openvat_national_register_breaker_state\{register="lv_vid",country="LV",state="closed"\} 1$/m,
          );
          assert.match(
            metrics,
            /^openvat_registry_calls_total\{registry="si_furs",country="SI",outcome="valid"\} 1$/m,
          );
          assert.match(
            metrics,
            /^openvat_national_register_data_date_timestamp_seconds\{register="lv_vid"\} \d+$/m,
          );
        }
      } finally {
        await a.close();
        await b.close();
      }
    });

    for (const broken of [
      { name: 'cut short', si: { truncated: 'bytes' }, lv: { truncated: 'lines' } },
      { name: 'an HTML page', si: { html: true }, lv: { html: true } },
      { name: 'a dropped connection', si: { cutConnection: true }, lv: { cutConnection: true } },
    ]) {
      it(`a download that is ${broken.name} keeps the good copy answering`, async () => {
        sim.control({ si: { reset: true, conditional: false, ...broken.si } });
        sim.control({ lv: { reset: true, conditional: false, ...broken.lv } });
        try {
          const run = await cli('registers', 'sync');
          assert.equal(run.status, 1, run.stdout);
          const lines = run.stdout.trim().split('\n');
          assert.equal(lines.length, 4, run.stdout);
          for (const line of lines) assert.match(line, /\tfailed\t.*; the copy held keeps answering$/);
          const { status, copies } = await statusJson();
          assert.equal(status, 0);
          assert.deepEqual(
            copies.map(held),
            synced.map(held),
            'the copy, its dates, rows and download times, unchanged',
          );
          for (const [i, copy] of copies.entries()) {
            assert.match(copy.last_sync_error ?? '', /^[A-Z]+: /, 'the failed files, and why');
            assert.equal(copy.last_sync_success_at, synced[i]?.last_sync_success_at);
          }
          const printed = await cli('registers', 'status', 'lv');
          assert.match(printed.stdout, /^ {2}last sync \S+: failed \(VAT: .+\); next \S+$/m);
          const t = await instance();
          try {
            assert.equal((await validate(t, SI)).data.valid, true);
            assert.equal((await validate(t, LV)).data.valid, true);
          } finally {
            await t.close();
          }
        } finally {
          sim.control({ si: { reset: true } });
          sim.control({ lv: { reset: true } });
        }
      });
    }

    it('a sync by one instance is what every instance answers from, after a restart too', async () => {
      const a = await instance();
      try {
        // The register drops the number from its files: the next sync swaps the new copy in.
        sim.control({ si: { reset: true, conditional: false, omit: [SI.slice(2)] } });
        const results = await a.container.national.syncFiles(['si_furs']);
        assert.ok(
          results.every((result) => result.ok),
          JSON.stringify(results),
        );
      } finally {
        await a.close();
        sim.control({ si: { reset: true } });
      }
      const b = await instance();
      try {
        const body = await validate(b, SI);
        assert.equal(body.data.valid, false, JSON.stringify(body));
        assert.equal(body.meta.source, 'si_furs');
        assert.equal((await validate(b, LV)).data.valid, true);
      } finally {
        await b.close();
      }
      const { copies } = await statusJson();
      const po = copies[0]?.parts.find((part) => part.part === 'PO');
      const before = synced[0]?.parts.find((part) => part.part === 'PO');
      assert.equal(po?.rows, (before?.rows ?? 0) - 1);
      assert.deepEqual(held(copies[1]), held(synced[1]), 'the LV copy untouched');
    });

    it('one instance syncs a register at a time: the CLI reports another run under way, the schedule waits for the next', async () => {
      const a = await instance();
      try {
        // A slow download holds A's run; the CLI meanwhile finds the register's run taken.
        sim.control({ lv: { reset: true, conditional: false, latencyMs: 3_000 } });
        const running = a.container.national.syncFiles(['lv_vid']);
        const syncs = () => a.container.db.kysely.selectFrom('national_file_syncs').selectAll().execute();
        while (!(await syncs()).some((row) => row.id === 'lv_vid' && row.claimed_by !== null)) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const busy = await cli('registers', 'sync', 'lv');
        assert.equal(busy.status, 1, busy.stdout);
        assert.equal(
          busy.stdout,
          'lv_vid\t*\tbusy\tanother instance is syncing it now; try again in a minute\n',
        );
        const [ran] = await running;
        assert.equal(ran?.ok, true, JSON.stringify(ran));
        // Synced just now: the scheduled run of another instance finds nothing due.
        const b = await instance();
        try {
          assert.deepEqual(await b.container.national.syncDue(), []);
        } finally {
          await b.close();
        }
      } finally {
        sim.control({ lv: { reset: true } });
        await a.close();
      }
    });
  });
}
