import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLvVidClient, LV_VID_FILES } from '../../../src/registries/lv-vid.js';
import { createMemoryFileIndex, type NationalFileIndex } from '../../../src/registries/national-file.js';
import { createFileDownloader } from '../../../src/registries/national-file-download.js';
import {
  type NationalFileSyncResult,
  syncNationalFiles,
} from '../../../src/registries/national-file-sync.js';
import type { NationalResult } from '../../../src/registries/national-port.js';
import { createSiFursClient, SI_FURS_FILES } from '../../../src/registries/si-furs.js';
import { simulatedCompany } from '../../../src/simulators/controls.js';
import { createLvVidSimulator, LV_VID_NUMBERS, lvFillerNumbers } from '../../../src/simulators/lv-vid.js';
import type { SimulatorServer } from '../../../src/simulators/server.js';
import { createSiFursSimulator, SI_FURS_NUMBERS, siFillerNumbers } from '../../../src/simulators/si-furs.js';
import { asAnswer, asUnavailable, startNational } from './national-helpers.js';

const NOW = new Date('2026-09-24T10:00:00Z');
const now = () => NOW;
const download = createFileDownloader();

const outcomes = <T extends string>(table: Readonly<Record<string, T>>, outcome: T) =>
  Object.entries(table).find(([, value]) => value === outcome)?.[0] ?? '';

function partsOf(result: NationalFileSyncResult) {
  return Object.fromEntries(result.parts.map((part) => [part.part, part.outcome]));
}

describe('FURS files: download, read, index and answer', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let index: NationalFileIndex;
  const sync = (timeoutMs = 5_000) =>
    syncNationalFiles({
      spec: SI_FURS_FILES,
      baseUrl: base,
      index,
      download,
      timeoutMs,
      minRows: { PO: 20, FO: 1, DEJ: 1 },
      now,
    });
  const ask = (national: string): Promise<NationalResult> =>
    createSiFursClient({ index, now }).lookup({ vat: { country: 'SI', national } });
  const si = (outcome: (typeof SI_FURS_NUMBERS)[string]) => outcomes(SI_FURS_NUMBERS, outcome);

  before(async () => {
    ({ sim, base, close } = await startNational('si', createSiFursSimulator({ now })));
  });
  after(() => close());
  beforeEach(() => {
    sim.control({ si: { reset: true } });
    index = createMemoryFileIndex();
  });

  it('syncs the three files and answers each documented case from them, with the files’ date', async () => {
    const result = await sync();
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(partsOf(result), { PO: 'replaced', FO: 'replaced', DEJ: 'replaced' });
    const expected: Record<string, boolean> = {
      po_vat: true,
      po_vat_limited: true,
      po_vat_group: true,
      po_no_vat: false,
      fo_vat: true,
      dej_only: false,
      dej_and_fo: true,
      not_listed: false,
    };
    for (const [outcome, valid] of Object.entries(expected)) {
      const answer = asAnswer(await ask(si(outcome as never)));
      assert.equal(answer.valid, valid, outcome);
      assert.equal(answer.dataDate, '2026-09-24');
      assert.equal(answer.source, 'si_furs');
    }
    assert.equal(asAnswer(await ask(si('po_vat_limited'))).identifiers.scope, 'O');
    assert.equal(asAnswer(await ask(si('dej_only'))).name?.endsWith('S.P.'), true);
    for (const digits of siFillerNumbers(50).slice(0, 10)) {
      assert.equal(asAnswer(await ask(digits)).valid, simulatedCompany('SI', digits).registered, digits);
    }
  });

  it('asks again with the validators: an unchanged file costs a 304 and keeps the copy', async () => {
    await sync();
    const again = await sync();
    assert.deepEqual(partsOf(again), { PO: 'unchanged', FO: 'unchanged', DEJ: 'unchanged' });
    sim.control({ si: { conditional: false } });
    assert.deepEqual(partsOf(await sync()), { PO: 'replaced', FO: 'replaced', DEJ: 'replaced' });
  });

  it('a hostile, cut or failed file never replaces the copy, and never turns into valid: false', async () => {
    await sync();
    const failures: Record<string, unknown>[] = [
      { html: true },
      { truncated: 'bytes' },
      { cutConnection: true, conditional: false },
      { zipBomb: 'declared' },
      { zipBomb: 'lying' },
      { serviceDown: true },
      { down: ['SI'] },
      { errorRate: { SI: { rate: 1, code: 'HTTP_500' } } },
      { omit: siFillerNumbers(50).slice(0, 10) },
    ];
    for (const failure of failures) {
      sim.control({ si: { reset: true, ...failure } });
      const result = await sync();
      assert.equal(result.ok, false, JSON.stringify(failure));
      assert.equal(result.parts[0]?.outcome, 'failed', JSON.stringify(failure));
      assert.equal(asAnswer(await ask(si('po_vat'))).valid, true, JSON.stringify(failure));
      assert.equal(asAnswer(await ask(si('fo_vat'))).valid, true, JSON.stringify(failure));
    }
    sim.control({ si: { reset: true, hang: true } });
    const hung = await sync(200);
    assert.equal(hung.parts[0]?.outcome === 'failed' && hung.parts[0].reason, 'timeout');
    assert.equal(asAnswer(await ask(si('po_vat'))).valid, true);
  });

  it('without a whole copy, or with one too old, it answers unavailable', async () => {
    sim.control({ si: { truncated: 'bytes' } });
    assert.equal((await sync()).ok, false);
    for (const outcome of ['po_vat', 'not_listed'] as const) {
      assert.equal(asUnavailable(await ask(si(outcome))).upstreamCode, 'INDEX_EMPTY');
    }
    sim.control({ si: { reset: true, dataDate: '2026-09-20' } });
    assert.equal((await sync()).ok, true);
    assert.equal(asUnavailable(await ask(si('not_listed'))).upstreamCode, 'INDEX_STALE');
    // A file dated before the copy held is refused.
    sim.control({ si: { reset: true, dataDate: '2026-09-23' } });
    assert.equal((await sync()).ok, true);
    sim.control({ si: { reset: true, dataDate: '2026-09-22' } });
    const older = await sync();
    assert.match(older.parts[0]?.outcome === 'failed' ? older.parts[0].message : '', /before the copy held/);
  });

  it('a number removed from the file is answered as not registered once the new file is in', async () => {
    await sync();
    assert.equal(asAnswer(await ask(si('po_vat'))).valid, true);
    sim.control({ si: { reset: true, omit: [si('po_vat')] } });
    assert.equal((await sync()).ok, true);
    const gone = asAnswer(await ask(si('po_vat')));
    assert.equal(gone.valid, false);
    assert.equal(gone.registerStatus, null);
  });
});

describe('VID file: download, read, index and answer', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let index: NationalFileIndex;
  const sync = (timeoutMs = 5_000) =>
    syncNationalFiles({
      spec: LV_VID_FILES,
      baseUrl: base,
      index,
      download,
      timeoutMs,
      minRows: { VAT: 50 },
      now,
    });
  const ask = (national: string) =>
    createLvVidClient({ index, now }).lookup({ vat: { country: 'LV', national } });
  const lv = (outcome: (typeof LV_VID_NUMBERS)[string]) => outcomes(LV_VID_NUMBERS, outcome);

  before(async () => {
    ({ sim, base, close } = await startNational('lv', createLvVidSimulator({ now })));
  });
  after(() => close());
  beforeEach(() => {
    sim.control({ lv: { reset: true } });
    index = createMemoryFileIndex();
  });

  it('syncs the file (through a redirect) and answers active, excluded, re-registered and unknown numbers', async () => {
    sim.control({ lv: { redirect: true } });
    const result = await sync();
    assert.equal(result.ok, true, JSON.stringify(result));
    const active = asAnswer(await ask(lv('active')));
    assert.equal(active.valid, true);
    assert.equal(active.registerStatus, 'ir');
    assert.equal(active.address, null);
    assert.equal(active.dataDate, '2026-09-24');
    assert.match(active.name ?? '', /^SIA /);
    const excluded = asAnswer(await ask(lv('excluded')));
    assert.equal(excluded.valid, false);
    assert.deepEqual(excluded.registrations, [{ from: '2004-05-01', to: '2019-12-31', kind: null }]);
    assert.equal(asAnswer(await ask(lv('reregistered'))).valid, true);
    assert.equal(asAnswer(await ask(`LV${lv('not_listed')}`)).valid, false);
    for (const digits of lvFillerNumbers(50).slice(0, 10)) {
      assert.equal(asAnswer(await ask(digits)).valid, simulatedCompany('LV', digits).registered, digits);
    }
    assert.deepEqual(partsOf(await sync()), { VAT: 'unchanged' });
  });

  it('a page, a cut file or a failed download never replaces the copy, and never turns into valid: false', async () => {
    await sync();
    for (const failure of [
      { html: true },
      { truncated: 'bytes' },
      { truncated: 'lines' },
      { cutConnection: true, conditional: false },
      { serviceDown: true },
      { errorRate: { LV: { rate: 1, code: 'HTML_503' } } },
    ]) {
      sim.control({ lv: { reset: true, ...failure } });
      assert.equal((await sync()).ok, false, JSON.stringify(failure));
      assert.equal(asAnswer(await ask(lv('active'))).valid, true, JSON.stringify(failure));
    }
    sim.control({ lv: { reset: true, hang: true } });
    assert.equal((await sync(200)).ok, false);
    index = createMemoryFileIndex();
    sim.control({ lv: { reset: true, truncated: 'lines' } });
    await sync();
    assert.equal(asUnavailable(await ask(lv('not_listed'))).upstreamCode, 'INDEX_EMPTY');
  });
});

describe('the file downloader', () => {
  it('holds a download to its size, follows only http(s) redirects, and trusts a 304 only when it asked', async () => {
    const { startFixtureServer } = await import('./helpers.js');
    const server = await startFixtureServer((request) => {
      if (request.url === '/big') return { status: 200, body: 'x'.repeat(2048) };
      if (request.url === '/ftp')
        return { status: 302, body: '', headers: { location: 'ftp://example.invalid/f' } };
      if (request.url === '/loop') return { status: 302, body: '', headers: { location: '/loop' } };
      if (request.url === '/same') return { status: 304, body: '' };
      return { status: 404, body: '<html>Not Found</html>' };
    });
    try {
      const get = (path: string, extra = {}) =>
        download({ url: `${server.url}${path}`, maxBytes: 1024, timeoutMs: 2_000, ...extra });
      assert.match((await get('/big')).kind === 'failed' ? 'failed' : 'file', /failed/);
      assert.equal((await get('/big', { maxBytes: 4096 })).kind, 'file');
      const ftp = await get('/ftp');
      assert.equal(ftp.kind === 'failed' && ftp.reason, 'bad_response');
      const loop = await get('/loop');
      assert.match(loop.kind === 'failed' ? loop.message : '', /redirects/);
      assert.equal((await get('/same')).kind, 'failed', 'a 304 to a request without validators');
      assert.equal((await get('/same', { etag: '"a"' })).kind, 'not_modified');
      const missing = await get('/missing');
      assert.equal(missing.kind === 'failed' && missing.reason, 'bad_response');
      assert.equal(
        server.requests.find((r) => r.url === '/same' && r.headers['if-none-match'])?.headers[
          'if-none-match'
        ],
        '"a"',
      );
    } finally {
      await server.close();
    }
  });
});
