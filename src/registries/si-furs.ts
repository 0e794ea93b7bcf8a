/**
 * Slovenian Financial Administration (FURS) lists of taxpayers, published daily as ZIP archives of
 * one fixed-width text file each under `{base}` (`https://fu.gov.si/fileadmin/prenosi/`):
 * - `DURS_zavezanci_PO.zip` (`DURS_zavezanci_PO.txt`): every legal person in the tax register.
 *   Column 2 (`*`) marks a person identified for VAT; a letter in column 1 marks, in FURS's words,
 *   the scope of that identification (a limited one; the letters' meanings are not in the sources
 *   found, so the letter is kept as `identifiers.scope`); column 5 is the date of identification.
 *   `[0]` scope, `[2]` `*`, `[4,12)` tax number, `[13,23)` registration number, `[24,34)` date
 *   `DD.MM.YYYY`, `[35,41)` SKD activity, `[42,142)` name, `[143,257)` address, `[257,259)` tax
 *   office; 259 characters (268 with a VAT group's second number at `[260,268)`).
 * - `DURS_zavezanci_FO.zip`: every natural person identified for VAT: `[0,2)` scope letter, `[2,10)`
 *   tax number, `[11,72)` name, `[72,184)` address, `[184,194)` date of identification, the tax
 *   office in the last two characters; 197 characters.
 * - `DURS_zavezanci_DEJ.zip`: natural persons carrying on an activity (s.p.), without a VAT mark:
 *   `[0,8)` tax number, `[9,19)` registration number, `[20,26)` SKD, the name and the address, the
 *   tax office in the last two characters. Two layouts are known: 424 characters (name `[27,264)`,
 *   address `[308,422)`, the files of October 2026) and 244 (name `[27,128)`, address `[129,242)`).
 *
 * The text is UTF-8 with CRLF line ends, widths in characters (a file that is not valid UTF-8 is
 * read as Windows-1250, the code page of Slovenian text before it). Addresses read `STREET 9, 1000
 * TOWN` (PO, FO) or `STREET 5 , 6230 TOWN` (DEJ); a foreign one stays whole.
 *
 * The rule: a PO row with `*` or an FO row is a VAT identification (`valid: true`); a PO row without
 * `*`, or a DEJ row without an FO row, is a person in the tax register not identified for VAT
 * (`valid: false`), as is a number on none of the three files (every legal person and every
 * VAT-identified natural person is on them). A line that fits no layout is counted; more than 1 %
 * of them means the layout changed, and the file is refused (the copy held keeps answering until it
 * is too old).
 *
 * Sources: FURS's page of the lists (fu.gov.si/e_storitve/seznami_davcnih_zavezancev: the columns 1,
 * 2 and 5, refreshed daily); the layouts as public parsers read them, the October 2026 analysis of
 * every line with verbatim rows in its tests (index ids 71019120621, 71504244415), the widths of PO,
 * DEJ and FO and sample rows of each (index id 42726773496), the FO columns (index ids 29038555237,
 * 5101882857), the 244-character DEJ (index id 265955377); BEterna/wiki (the three files, imported as
 * Slovenian taxable persons).
 */
import { dottedDay, squashedText } from './national-common.js';
import {
  createFileRegisterClient,
  fileAnswer,
  type NationalFileCopy,
  type NationalFileIndex,
  NationalFileRefused,
  type NationalFileRow,
} from './national-file.js';
import type { NationalFileContent, NationalFilePartSpec, NationalFileSpec } from './national-file-sync.js';
import { verifiedZipText } from './national-file-text.js';
import { siTaxNumber } from './national-ids.js';
import type { NationalLimits, NationalRegistryClient } from './national-port.js';

const SOURCE = 'si_furs';
export const SI_TIME_ZONE = 'Europe/Ljubljana';
export type SiPart = 'PO' | 'FO' | 'DEJ';
export const SI_PARTS: readonly SiPart[] = ['PO', 'FO', 'DEJ'];

/** The files are answered from the local copy: no request limit applies to a lookup. */
export const SI_FURS_LIMITS: NationalLimits = Object.freeze({
  concurrency: null,
  rates: [],
  daily: null,
  numbersPerRequest: 1,
  maintenance: null,
  published: true,
  source: 'answered from the local copy of the files FURS publishes daily',
});

/** Lines of a whole file (October 2026: PO 145,360, DEJ 139,150; FO not counted in the sources). */
export const SI_MIN_ROWS: Readonly<Record<SiPart, number>> = Object.freeze({
  PO: 100_000,
  FO: 1_000,
  DEJ: 100_000,
});

const MB = 1024 * 1024;
const ZIP_LIMITS = { maxUncompressedBytes: 512 * MB, maxRatio: 200 };
/** More than this share of lines fitting no layout: the layout changed. */
const MAX_UNREAD_SHARE = 0.01;

const field = (line: string, from: number, to?: number) => squashedText(line.slice(from, to));

/** `HACQUETOVA ULICA 9, 1000 LJUBLJANA` into street, postcode and town; a foreign address stays whole. */
export function siAddress(
  raw: string | null,
): Pick<NationalFileRow, 'address' | 'street' | 'postcode' | 'city'> {
  if (!raw) return { address: null, street: null, postcode: null, city: null };
  const match = /^(.*?)\s*,\s*(\d{4})\s+(.+)$/.exec(raw);
  if (!match) return { address: raw, street: raw, postcode: null, city: null };
  return {
    address: raw,
    street: match[1]?.trim() || null,
    postcode: match[2] ?? null,
    city: match[3] ?? null,
  };
}

function identifiersOf(entries: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(entries)) if (value) out[key] = value;
  return out;
}

/** One line of `DURS_zavezanci_PO.txt`, or `null` when it fits no layout. */
export function parseSiPoLine(line: string): NationalFileRow | null {
  const number = line.slice(4, 12);
  if (line.length < 259 || !/^\d{8}$/.test(number) || line[3] !== ' ' || line[12] !== ' ') return null;
  const mark = line[2];
  if (mark !== '*' && mark !== ' ') return null;
  const scope = field(line, 0, 2);
  const name = field(line, 42, 142);
  if (!name) return null;
  const vat = mark === '*';
  const date = dottedDay(line.slice(24, 34));
  return {
    number,
    part: 'PO',
    vat,
    status: ['PO', scope, vat ? '*' : null].filter(Boolean).join(' '),
    name,
    ...siAddress(field(line, 143, 257)),
    from: vat ? date : null,
    to: null,
    identifiers: identifiersOf({
      taxNumber: number,
      registrationNumber: field(line, 13, 23),
      activity: field(line, 35, 41),
      taxOffice: field(line, 257, 259),
      scope,
      groupNumber: line.length >= 268 ? field(line, 260, 268) : null,
    }),
  };
}

/** One line of `DURS_zavezanci_FO.txt`, or `null`. */
export function parseSiFoLine(line: string): NationalFileRow | null {
  const number = line.slice(2, 10);
  if (line.length < 196 || !/^\d{8}$/.test(number) || line[10] !== ' ') return null;
  const name = field(line, 11, 72);
  const date = line.slice(184, 194);
  if (!name || (date.trim() !== '' && dottedDay(date) === null)) return null;
  const scope = field(line, 0, 2);
  return {
    number,
    part: 'FO',
    vat: true,
    status: ['FO', scope].filter(Boolean).join(' '),
    name,
    ...siAddress(field(line, 72, 184)),
    from: dottedDay(date),
    to: null,
    identifiers: identifiersOf({ taxNumber: number, taxOffice: field(line, line.length - 2), scope }),
  };
}

/** The DEJ layouts by line length: where the name and the address are. */
const DEJ_LAYOUTS = [
  { length: 424, name: [27, 264], address: [308, 422] },
  { length: 244, name: [27, 128], address: [129, 242] },
] as const;

/** One line of `DURS_zavezanci_DEJ.txt`, or `null`. */
export function parseSiDejLine(line: string): NationalFileRow | null {
  const number = line.slice(0, 8);
  const layout = DEJ_LAYOUTS.find((candidate) => candidate.length === line.length);
  if (!layout || !/^\d{8}$/.test(number) || line[8] !== ' ') return null;
  const name = field(line, layout.name[0], layout.name[1]);
  if (!name) return null;
  return {
    number,
    part: 'DEJ',
    vat: null,
    status: 'DEJ',
    name,
    ...siAddress(field(line, layout.address[0], layout.address[1])),
    from: null,
    to: null,
    identifiers: identifiersOf({
      taxNumber: number,
      registrationNumber: field(line, 9, 19),
      activity: field(line, 20, 26),
      taxOffice: field(line, line.length - 2),
    }),
  };
}

const PARSERS: Record<SiPart, (line: string) => NationalFileRow | null> = {
  PO: parseSiPoLine,
  FO: parseSiFoLine,
  DEJ: parseSiDejLine,
};

/** The rows of a file's lines; throws `NationalFileRefused` at the end when too many fit no layout. */
export async function* siRows(part: SiPart, lines: AsyncIterable<string>): AsyncIterable<NationalFileRow> {
  let read = 0;
  let unread = 0;
  for await (const line of lines) {
    const row = PARSERS[part](line);
    if (row) {
      read++;
      yield row;
    } else unread++;
  }
  if (unread > (read + unread) * MAX_UNREAD_SHARE) {
    throw new NationalFileRefused(`${unread} of ${read + unread} lines fit no known ${part} layout`);
  }
}

function partSpec(part: SiPart): NationalFilePartSpec {
  const name = `DURS_zavezanci_${part}`;
  return {
    part,
    path: `/${name}.zip`,
    maxBytes: 128 * MB,
    minRows: SI_MIN_ROWS[part],
    async read(file): Promise<NationalFileContent> {
      const text = await verifiedZipText(file.bytes, `${name}.txt`, 'windows-1250', ZIP_LIMITS);
      return { rows: siRows(part, text.lines()), dataDate: text.writtenOn, encoding: text.encoding };
    },
  };
}

export const SI_FURS_FILES: NationalFileSpec = Object.freeze({
  source: SOURCE,
  timeZone: SI_TIME_ZONE,
  parts: SI_PARTS.map(partSpec),
});

const PREFERENCE: Record<string, number> = { PO: 0, FO: 1, DEJ: 2 };

/** FURS's rule over the rows found for a tax number (see the header). */
export function siAnswer(number: string, rows: NationalFileRow[], copy: NationalFileCopy) {
  const sorted = [...rows].sort((a, b) => (PREFERENCE[a.part] ?? 9) - (PREFERENCE[b.part] ?? 9));
  const identified = sorted.find((row) => row.vat === true);
  const row = identified ?? sorted[0];
  if (!row)
    return fileAnswer(SOURCE, 'SI', number, copy, { valid: false, identifiers: { taxNumber: number } });
  return fileAnswer(SOURCE, 'SI', number, copy, {
    valid: identified !== undefined,
    registerStatus: row.status,
    name: row.name,
    address: row.address
      ? { text: row.address, street: row.street, postcode: row.postcode, city: row.city, country: null }
      : null,
    identifiers: row.identifiers,
    registrations: identified ? [{ from: identified.from, to: null, kind: identified.status }] : [],
  });
}

export interface SiFursClientOptions {
  index: NationalFileIndex;
  /** Copies older than this many days answer unavailable (default 3). */
  maxAgeDays?: number;
  now?: () => Date;
}

/** FURS answered from the local copy of its three files. */
export function createSiFursClient(options: SiFursClientOptions): NationalRegistryClient {
  return createFileRegisterClient({
    source: SOURCE,
    country: 'SI',
    index: options.index,
    parts: SI_PARTS,
    key: siTaxNumber,
    answer: siAnswer,
    maxAgeDays: options.maxAgeDays ?? 3,
    timeZone: SI_TIME_ZONE,
    limits: SI_FURS_LIMITS,
    ...(options.now ? { now: options.now } : {}),
  });
}
