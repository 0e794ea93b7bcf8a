/**
 * Latvian State Revenue Service (VID) register of VAT payers, the open-data file `pvn-maksataji`
 * on data.gov.lv, re-published daily: `{base}/resource/610910e9-e086-4c5b-a7ea-0a896a697672/download/
 * pdb_pvnmaksataji_odata.csv` (base: the dataset, `https://data.gov.lv/dati/dataset/
 * 9a5eae1c-2438-48cf-854b-6a2c170f918f`; CKAN's `datastore_search` on the same resource id answers
 * from a copy of the same file, which is why the file is read). No key; VID publishes its open data
 * without restrictions on reuse.
 *
 * A comma-separated UTF-8 file with a byte-order mark and the header `Numurs, Nosaukums, Aktivs,
 * Registrets, Buvniecibas_pazime, PVN139_2_pazime, Izslegts` (older copies have no
 * `PVN139_2_pazime`): the VAT number (`LV` + 11 digits), the payer's name, `ir`/`nav` (whether the
 * registration is active), the dates of registration and exclusion (`DD.MM.YYYY`), and two marks
 * (construction sector; § 139(2) of the VAT Act). The file holds every payer ever registered, the
 * excluded ones with `nav` (283,684 rows against some 84,700 active payers, 2026), so a number it
 * does not hold was never a VAT payer: that is `valid: false`, as is a number whose rows are all
 * `nav`. The file has no address: the answer's address is `null` (the company register's
 * `register.csv` would give one; it is not joined).
 *
 * A file that is not valid UTF-8 is read as Windows-1257 (the Baltic code page; one public importer
 * reads it as ISO-8859-1). A row that does not fit (another column count, a number that is not `LV` +
 * 11 digits, an `Aktivs` other than `ir`/`nav`) is counted; more than 1 % of them refuses the file.
 *
 * Sources: the resource URL and the columns as public importers read them (index ids 52722317638,
 * 52647573314, 55906256709, 44365295994, 70886194328), the byte-order mark and UTF-8 (index id
 * 71153370174), the daily re-upload at about 05:00 and the row counts (index ids 59668746722,
 * 59697531612), `Aktivs` `ir`/`nav` (index ids 61447152485, 57388829055); vid.gov.lv's open-data page
 * (CSV, daily, no reuse restrictions).
 */
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { dottedDay, isoDay, squashedText } from './national-common.js';
import {
  createFileRegisterClient,
  fileAnswer,
  type NationalFileCopy,
  type NationalFileIndex,
  NationalFileRefused,
  type NationalFileRow,
} from './national-file.js';
import type { NationalFileBytes, NationalFileSpec } from './national-file-sync.js';
import { verifiedPlainText } from './national-file-text.js';
import { lvVatNumber } from './national-ids.js';
import type { NationalLimits, NationalRegistryClient } from './national-port.js';

const SOURCE = 'lv_vid';
export const LV_TIME_ZONE = 'Europe/Riga';
export const LV_VID_RESOURCE = '610910e9-e086-4c5b-a7ea-0a896a697672';
export const LV_VID_PATH = `/resource/${LV_VID_RESOURCE}/download/pdb_pvnmaksataji_odata.csv`;
export const LV_COLUMNS = ['Numurs', 'Nosaukums', 'Aktivs', 'Registrets', 'Izslegts'] as const;

export const LV_VID_LIMITS: NationalLimits = Object.freeze({
  concurrency: null,
  rates: [],
  daily: null,
  numbersPerRequest: 1,
  maintenance: null,
  published: true,
  source: 'answered from the local copy of the file VID publishes daily',
});

/** Rows of a whole file (283,684 in 2026; the file only grows). */
export const LV_MIN_ROWS = 200_000;
const MAX_UNREAD_SHARE = 0.01;
const MAX_RECORD_BYTES = 64 * 1024;

/** A date as the file writes it (`DD.MM.YYYY`, or ISO with a time), else `null`. */
export function lvDate(value: string | undefined): string | null {
  if (!value) return null;
  return dottedDay(value) ?? isoDay(value.trim().slice(0, 10));
}

/** One record of the file (by the header's columns), or `null` when it does not fit. */
export function lvRow(record: Record<string, string | undefined>): NationalFileRow | null {
  const number = (record.Numurs ?? '').trim().replace(/^"|"$/g, '').toUpperCase();
  const active = (record.Aktivs ?? '').trim().toLowerCase();
  if (!/^LV\d{11}$/.test(number) || (active !== 'ir' && active !== 'nav')) return null;
  const identifiers: Record<string, string> = { vatNumber: number };
  const construction = squashedText(record.Buvniecibas_pazime);
  if (construction) identifiers.construction = construction;
  const section139 = squashedText(record.PVN139_2_pazime);
  if (section139) identifiers.section139_2 = section139;
  return {
    number,
    part: 'VAT',
    vat: active === 'ir',
    status: active,
    name: squashedText(record.Nosaukums),
    address: null,
    street: null,
    postcode: null,
    city: null,
    from: lvDate(record.Registrets),
    to: lvDate(record.Izslegts),
    identifiers,
  };
}

/** The rows of the file's text; throws `NationalFileRefused` for a wrong header or too many unfit rows. */
export async function* lvRows(text: string): AsyncIterable<NationalFileRow> {
  const firstLine = text.replace(/^\ufeff/, '').split(/\r?\n/, 1)[0] ?? '';
  const delimiter = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  const parser = Readable.from([text]).pipe(
    parse({
      delimiter,
      bom: true,
      columns: (header: string[]) => {
        const names = header.map((name) => name.trim());
        const missing = LV_COLUMNS.filter((column) => !names.includes(column));
        if (missing.length > 0) throw new NationalFileRefused(`the header lacks ${missing.join(', ')}`);
        return names;
      },
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: MAX_RECORD_BYTES,
    }),
  );
  let read = 0;
  let unread = 0;
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      const row = lvRow(record);
      if (row) {
        read++;
        yield row;
      } else unread++;
    }
  } catch (error) {
    if (error instanceof NationalFileRefused) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new NationalFileRefused(`the file is not the expected CSV (${detail})`);
  }
  if (unread > (read + unread) * MAX_UNREAD_SHARE) {
    throw new NationalFileRefused(`${unread} of ${read + unread} rows do not fit the register's columns`);
  }
}

export const LV_VID_FILES: NationalFileSpec = Object.freeze({
  source: SOURCE,
  timeZone: LV_TIME_ZONE,
  parts: [
    {
      part: 'VAT',
      path: LV_VID_PATH,
      maxBytes: 128 * 1024 * 1024,
      minRows: LV_MIN_ROWS,
      async read(file: NationalFileBytes) {
        const { text, encoding } = verifiedPlainText(file.bytes, 'windows-1257');
        return { rows: lvRows(text), dataDate: null, encoding };
      },
    },
  ],
});

/** VID's rule over the rows found for a VAT number (see the header). */
export function lvAnswer(number: string, rows: NationalFileRow[], copy: NationalFileCopy) {
  const national = number.slice(2);
  const active = rows.find((row) => row.vat === true);
  const latest = [...rows].sort((a, b) => (b.from ?? '').localeCompare(a.from ?? ''))[0];
  const row = active ?? latest;
  return fileAnswer(SOURCE, 'LV', national, copy, {
    valid: active !== undefined,
    registerStatus: row?.status ?? null,
    name: row?.name ?? null,
    identifiers: row?.identifiers ?? { vatNumber: number },
    registrations: rows.map((entry) => ({ from: entry.from, to: entry.to, kind: null })),
  });
}

export interface LvVidClientOptions {
  index: NationalFileIndex;
  /** Copies older than this many days answer unavailable (default 3). */
  maxAgeDays?: number;
  now?: () => Date;
}

/** VID answered from the local copy of its file. */
export function createLvVidClient(options: LvVidClientOptions): NationalRegistryClient {
  return createFileRegisterClient({
    source: SOURCE,
    country: 'LV',
    index: options.index,
    parts: ['VAT'],
    key: lvVatNumber,
    answer: lvAnswer,
    maxAgeDays: options.maxAgeDays ?? 3,
    timeZone: LV_TIME_ZONE,
    limits: LV_VID_LIMITS,
    ...(options.now ? { now: options.now } : {}),
  });
}
