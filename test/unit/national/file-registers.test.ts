import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { lvAnswer, lvRows } from '../../../src/registries/lv-vid.js';
import {
  createMemoryFileIndex,
  NationalFileRefused,
  type NationalFileRow,
} from '../../../src/registries/national-file.js';
import { verifiedPlainText, verifiedZipText } from '../../../src/registries/national-file-text.js';
import {
  createSiFursClient,
  parseSiDejLine,
  parseSiFoLine,
  parseSiPoLine,
  siAnswer,
  siRows,
} from '../../../src/registries/si-furs.js';
import { lyingZipBomb, zipArchive } from '../../../src/simulators/national-files.js';

const FIXTURES = new URL('../../fixtures/registries/', import.meta.url);
const lines = (path: string) =>
  readFileSync(new URL(path, FIXTURES), 'utf8')
    .split('\r\n')
    .filter((line) => line !== '');
const COPY = { dataDate: '2026-09-24', checkedAt: new Date('2026-09-24T05:00:00Z') };
const LIMITS = { maxUncompressedBytes: 1024 * 1024, maxRatio: 200 };

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

async function* from<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

describe('FURS file lines', () => {
  it('PO: the VAT mark, the scope letter, the date of identification, a group member of 268 characters', () => {
    const [vat, limited, group, none] = lines('si-furs/po-lines.txt').map(parseSiPoLine);
    assert.deepEqual(vat, {
      number: '11100001',
      part: 'PO',
      vat: true,
      status: 'PO *',
      name: 'VZOREC NEPREMIČNINE, POSREDOVANJE IN SVETOVANJE V PROMETU Z NEPREMIČNINAMI, D.O.O.',
      address: 'HACQUETOVA ULICA 9, 1000 LJUBLJANA',
      street: 'HACQUETOVA ULICA 9',
      postcode: '1000',
      city: 'LJUBLJANA',
      from: '2013-04-23',
      to: null,
      identifiers: {
        taxNumber: '11100001',
        registrationNumber: '6311881000',
        activity: '68.310',
        taxOffice: '08',
      },
    });
    assert.equal(limited?.status, 'PO O *');
    assert.equal(limited?.identifiers.scope, 'O');
    assert.equal(
      limited?.street,
      'CLAUS-VON STAUFFENBERG-STRAßE 11-15, 68163 MANNHEIM',
      'a foreign address stays whole',
    );
    assert.equal(limited?.postcode, null);
    assert.equal(group?.identifiers.groupNumber, '11100095');
    assert.equal(group?.city, 'NOVA GORICA');
    assert.equal(none?.vat, false);
    assert.equal(none?.status, 'PO');
    assert.equal(none?.from, null);
  });

  it('FO and both DEJ layouts', () => {
    const [fo] = lines('si-furs/fo-lines.txt').map(parseSiFoLine);
    assert.equal(fo?.number, '11100044');
    assert.equal(fo?.vat, true);
    assert.equal(fo?.name, 'ŠPELA VZORČNA');
    assert.equal(fo?.from, '2013-03-13');
    assert.equal(fo?.identifiers.taxOffice, '08');
    const [wide, narrow] = lines('si-furs/dej-lines.txt').map(parseSiDejLine);
    assert.equal(wide?.vat, null);
    assert.equal(wide?.name, 'IZOBRAŽEVANJE NA PODROČJU ŠPORTA, MATEJ PRIMEREK S.P.');
    assert.deepEqual(
      [wide?.street, wide?.postcode, wide?.city],
      ['KRAIGHERJEVA ULICA 5', '6230', 'POSTOJNA'],
    );
    assert.equal(narrow?.name, 'POSLOVNO SVETOVANJE, NUŠA ZGLEDNA S.P.');
    assert.equal(narrow?.city, 'KOPER - CAPODISTRIA');
  });

  it('a line of another layout is not read, and a file of them is refused', async () => {
    const po = lines('si-furs/po-lines.txt')[0] ?? '';
    assert.equal(parseSiPoLine(po.slice(0, 200)), null);
    assert.equal(parseSiDejLine(po), null);
    assert.equal(parseSiFoLine(`X${po}`), null);
    const good = Array.from({ length: 200 }, () => lines('si-furs/po-lines.txt')[0] ?? '');
    // One line in 201 that fits no layout (a header, say) is skipped; four in 204 refuse the file.
    assert.equal((await collect(siRows('PO', from([...good, 'GLAVA'.padEnd(259)])))).length, 200);
    const junk = ['X', 'Y', 'Z', 'W'].map((c) => c.repeat(259));
    await assert.rejects(collect(siRows('PO', from([...good, ...junk]))), NationalFileRefused);
  });

  it('the answer: an identified row is registered; a PO row without *, a DEJ row alone, or no row is not', () => {
    const [vat, , , none] = lines('si-furs/po-lines.txt').map(parseSiPoLine) as NationalFileRow[];
    const [fo] = lines('si-furs/fo-lines.txt').map(parseSiFoLine) as NationalFileRow[];
    const [dej] = lines('si-furs/dej-lines.txt').map(parseSiDejLine) as NationalFileRow[];
    const registered = siAnswer('11100001', [vat as NationalFileRow], COPY);
    assert.equal(registered.valid, true);
    assert.equal(registered.dataDate, '2026-09-24');
    assert.deepEqual(registered.registrations, [{ from: '2013-04-23', to: null, kind: 'PO *' }]);
    assert.equal(siAnswer('11100036', [none as NationalFileRow], COPY).valid, false);
    assert.equal(siAnswer('11100052', [dej as NationalFileRow], COPY).valid, false);
    const soleTrader = siAnswer(
      '11100079',
      [dej as NationalFileRow, { ...(fo as NationalFileRow), number: '11100079' }],
      COPY,
    );
    assert.equal(soleTrader.valid, true);
    assert.equal(soleTrader.registerStatus, 'FO P');
    const unknown = siAnswer('11100087', [], COPY);
    assert.equal(unknown.valid, false);
    assert.equal(unknown.registerStatus, null);
  });
});

describe('VID file rows', () => {
  it('reads the recorded columns, ir/nav and DD.MM.YYYY dates, a quoted name with a comma', async () => {
    const { text, encoding } = verifiedPlainText(
      readFileSync(new URL('lv-vid/pvn-maksataji-rows.csv', FIXTURES)),
      'windows-1257',
    );
    assert.equal(encoding, 'utf-8');
    const rows = await collect(lvRows(text));
    assert.equal(rows.length, 4);
    assert.deepEqual(rows[0], {
      number: 'LV40003000002',
      part: 'VAT',
      vat: true,
      status: 'ir',
      name: 'SIA "Piemērs Tirdzniecība"',
      address: null,
      street: null,
      postcode: null,
      city: null,
      from: '2004-05-01',
      to: null,
      identifiers: { vatNumber: 'LV40003000002', construction: 'nav', section139_2: 'nav' },
    });
    assert.equal(rows[1]?.name, 'SIA Paraugs, Rīga');
    assert.equal(rows[1]?.to, '2019-12-31');
  });

  it('the answer: an ir row is registered, only nav rows or none are not', async () => {
    const { text } = verifiedPlainText(
      readFileSync(new URL('lv-vid/pvn-maksataji-rows.csv', FIXTURES)),
      'windows-1257',
    );
    const rows = await collect(lvRows(text));
    const reregistered = lvAnswer(
      'LV40003000021',
      rows.filter((r) => r.number === 'LV40003000021'),
      COPY,
    );
    assert.equal(reregistered.valid, true);
    assert.equal(reregistered.national, '40003000021');
    assert.equal(reregistered.registrations.length, 2);
    assert.equal(
      lvAnswer(
        'LV40003000017',
        rows.filter((r) => r.number === 'LV40003000017'),
        COPY,
      ).valid,
      false,
    );
    assert.equal(lvAnswer('LV40003000036', [], COPY).registerStatus, null);
  });

  it('a wrong header, a short last row or unfit rows refuse the file', async () => {
    await assert.rejects(collect(lvRows('Numurs,Nosaukums\r\nLV40003000002,SIA\r\n')), NationalFileRefused);
    const header = 'Numurs,Nosaukums,Aktivs,Registrets,Buvniecibas_pazime,PVN139_2_pazime,Izslegts';
    await assert.rejects(
      collect(lvRows(`${header}\r\nLV40003000002,SIA,ir,01.05.2004,nav`)),
      NationalFileRefused,
    );
    const unfit = Array.from({ length: 10 }, (_, i) => `LV4000300000${i},SIA,maybe,01.05.2004,nav,nav,`);
    await assert.rejects(collect(lvRows([header, ...unfit].join('\r\n'))), /do not fit/);
  });

  it('text that is not UTF-8 is read in the legacy code page', () => {
    // "Rīga" in Windows-1257: ī is 0xEE.
    const legacy = Buffer.from([0x52, 0xee, 0x67, 0x61]);
    assert.deepEqual(verifiedPlainText(legacy, 'windows-1257'), { encoding: 'windows-1257', text: 'Rīga' });
    assert.throws(
      () => verifiedPlainText(Buffer.from('<!DOCTYPE html><html></html>'), 'windows-1257'),
      NationalFileRefused,
    );
  });
});

describe('ZIP entries', () => {
  const written = new Date('2026-09-24T07:12:00Z');
  const text = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');

  it('reads the named entry with its date, after checking its CRC', async () => {
    const zip = zipArchive('DURS_zavezanci_PO.txt', text(lines('si-furs/po-lines.txt')), written);
    const entry = await verifiedZipText(zip, 'DURS_zavezanci_PO.txt', 'windows-1250', LIMITS);
    assert.equal(entry.encoding, 'utf-8');
    assert.equal(entry.writtenOn, '2026-09-24');
    assert.equal((await collect(entry.lines())).length, 4);
    // The central directory's CRC-32 of the entry, off by one bit.
    const corrupt = Buffer.from(zip);
    const central = corrupt.readUInt32LE(corrupt.length - 22 + 16);
    corrupt.writeUInt32LE((corrupt.readUInt32LE(central + 16) ^ 1) >>> 0, central + 16);
    await assert.rejects(verifiedZipText(corrupt, 'DURS_zavezanci_PO.txt', 'windows-1250', LIMITS), /CRC-32/);
  });

  it('Windows-1250 text is decoded as such', async () => {
    // "ŠČŽ" in Windows-1250.
    const zip = zipArchive('DURS_zavezanci_FO.txt', Buffer.from([0x8a, 0xc8, 0x8e, 0x0d, 0x0a]), written);
    const entry = await verifiedZipText(zip, 'DURS_zavezanci_FO.txt', 'windows-1250', LIMITS);
    assert.equal(entry.encoding, 'windows-1250');
    assert.deepEqual(await collect(entry.lines()), ['ŠČŽ']);
  });

  it('refuses an HTML page, a truncated archive, another entry and both kinds of ZIP bomb', async () => {
    const zip = zipArchive('DURS_zavezanci_PO.txt', text(lines('si-furs/po-lines.txt')), written);
    const refusals = [
      Buffer.from('<!DOCTYPE html><html><body>Vzdrževanje</body></html>'),
      Buffer.alloc(0),
      zip.subarray(0, Math.floor(zip.length / 2)),
      zipArchive('OTHER.txt', Buffer.from('x'), written),
      zipArchive('DURS_zavezanci_PO.txt', Buffer.from('x'.repeat(100)), written, {
        declaredSize: 0xfffffffe,
      }),
      lyingZipBomb('DURS_zavezanci_PO.txt', written),
    ];
    for (const bytes of refusals) {
      await assert.rejects(
        verifiedZipText(bytes, 'DURS_zavezanci_PO.txt', 'windows-1250', LIMITS),
        NationalFileRefused,
        `${bytes.length} bytes`,
      );
    }
  });
});

describe('the file index and its client', () => {
  const row = (number: string, part: string): NationalFileRow => ({
    number,
    part,
    vat: true,
    status: `${part} *`,
    name: 'X',
    address: null,
    street: null,
    postcode: null,
    city: null,
    from: null,
    to: null,
    identifiers: {},
  });
  const meta = (part: string, dataDate: string) => ({
    part,
    dataDate,
    etag: null,
    lastModified: null,
    fetchedAt: new Date(`${dataDate}T06:00:00Z`),
    encoding: 'utf-8',
  });

  it('a replace that fails halfway leaves the copy held', async () => {
    const index = createMemoryFileIndex();
    await index.replace('si_furs', 'PO', from([row('11100001', 'PO')]), meta('PO', '2026-09-23'));
    async function* broken() {
      yield row('11100010', 'PO');
      throw new NationalFileRefused('cut');
    }
    await assert.rejects(index.replace('si_furs', 'PO', broken(), meta('PO', '2026-09-24')));
    assert.equal((await index.lookup('si_furs', '11100001')).length, 1);
    assert.equal((await index.lookup('si_furs', '11100010')).length, 0);
    assert.equal((await index.parts('si_furs'))[0]?.dataDate, '2026-09-23');
  });

  it('answers only from a whole copy at most maxAgeDays old; a failing index is unavailable', async () => {
    const index = createMemoryFileIndex();
    let now = new Date('2026-09-24T10:00:00Z');
    const client = createSiFursClient({ index, now: () => now });
    const ask = (national: string) => client.lookup({ vat: { country: 'SI', national } });
    const empty = await ask('11100087');
    assert.equal(empty.kind === 'unavailable' && empty.upstreamCode, 'INDEX_EMPTY');
    await index.replace('si_furs', 'PO', from([row('11100001', 'PO')]), meta('PO', '2026-09-24'));
    await index.replace('si_furs', 'FO', from([]), meta('FO', '2026-09-24'));
    assert.equal((await ask('11100087')).kind, 'unavailable', 'DEJ missing: no answer');
    await index.replace('si_furs', 'DEJ', from([]), meta('DEJ', '2026-09-22'));
    const answer = await ask('11100087');
    assert.equal(answer.kind === 'answer' && answer.valid, false);
    assert.equal(
      answer.kind === 'answer' && answer.dataDate,
      '2026-09-22',
      'the oldest part dates the answer',
    );
    assert.equal((await ask('11100001')).kind === 'answer', true);
    now = new Date('2026-09-26T10:00:00Z');
    const stale = await ask('11100087');
    assert.equal(stale.kind === 'unavailable' && stale.upstreamCode, 'INDEX_STALE');
    assert.equal((await ask('11100002')).kind === 'unavailable' && 'rejected', 'rejected');
    const failing = createSiFursClient({
      index: { ...index, parts: async () => Promise.reject(new Error('database is locked')) },
      now: () => now,
    });
    const down = await failing.lookup({ vat: { country: 'SI', national: '11100001' } });
    assert.equal(down.kind === 'unavailable' && down.reason, 'down');
  });
});
