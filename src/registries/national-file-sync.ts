/**
 * The sync of a register's files into the local index, one part at a time: a conditional download,
 * the part's reader (which checks the file before any row leaves it), and the swap. A part whose
 * download or reading fails keeps its previous copy, and so does a file that reads but looks wrong:
 * fewer rows than a whole file has, noticeably fewer than the copy held (a file cut at a line
 * boundary reads as a smaller valid file), or dated before it. The outcome of each part is a value.
 */
import { zoneDate } from './national-common.js';
import { type NationalFileIndex, NationalFileRefused, type NationalFileRow } from './national-file.js';
import type { FileDownloader } from './national-file-download.js';
import type { NationalSource } from './national-port.js';
import type { UnavailableReason } from './port.js';

/** A downloaded file handed to a part's reader. */
export interface NationalFileBytes {
  bytes: Buffer;
  contentType: string | null;
}

export interface NationalFileContent {
  /** The rows, produced as they are read; the iterable throws when the file turns out wrong. */
  rows: AsyncIterable<NationalFileRow>;
  /** The date the file itself carries (an archive entry's), else `null`. */
  dataDate: string | null;
  encoding: string;
}

export interface NationalFilePartSpec {
  part: string;
  /** The file's path under the register's base (`/DURS_zavezanci_PO.zip`). */
  path: string;
  /** Downloads larger than this are refused. */
  maxBytes: number;
  /** A whole file has at least this many rows. */
  minRows: number;
  /** Checks the file and reads its rows; throws `NationalFileRefused` for a file that is not one. */
  read(file: NationalFileBytes): Promise<NationalFileContent>;
}

export interface NationalFileSpec {
  source: NationalSource;
  timeZone: string;
  parts: readonly NationalFilePartSpec[];
}

export type NationalFilePartSync =
  | { part: string; outcome: 'replaced'; rows: number; dataDate: string }
  | { part: string; outcome: 'unchanged'; dataDate: string }
  | { part: string; outcome: 'failed'; reason: UnavailableReason | 'refused'; message: string };

export interface NationalFileSyncResult {
  source: NationalSource;
  /** Every part replaced or confirmed unchanged. */
  ok: boolean;
  parts: NationalFilePartSync[];
}

export interface NationalFileSyncOptions {
  spec: NationalFileSpec;
  /** The folder or dataset base the files are published under (`SI_FURS_URL`, `LV_VID_URL`). */
  baseUrl: string;
  index: NationalFileIndex;
  download: FileDownloader;
  /** The deadline of each file's download. */
  timeoutMs: number;
  /** A new file with fewer rows than this share of the copy held is refused (default 0.98). */
  minShareOfHeld?: number;
  /** Per part, instead of the spec's minimum rows (a small test or simulator file). */
  minRows?: Partial<Record<string, number>>;
  signal?: AbortSignal;
  now?: () => Date;
}

const joinPath = (base: string, path: string) => base.replace(/\/+$/, '') + path;

export async function syncNationalFiles(options: NationalFileSyncOptions): Promise<NationalFileSyncResult> {
  const { spec, index } = options;
  const now = options.now ?? (() => new Date());
  const held = await index.parts(spec.source);
  const results: NationalFilePartSync[] = [];
  for (const part of spec.parts) {
    const copy = held.find((status) => status.part === part.part);
    results.push(await syncPart(options, part, copy ?? null, now));
  }
  return {
    source: spec.source,
    ok: results.every((result) => result.outcome !== 'failed'),
    parts: results,
  };
}

type HeldCopy = Awaited<ReturnType<NationalFileIndex['parts']>>[number];

async function syncPart(
  options: NationalFileSyncOptions,
  part: NationalFilePartSpec,
  copy: HeldCopy | null,
  now: () => Date,
): Promise<NationalFilePartSync> {
  const { spec, index } = options;
  const download = await options.download({
    url: joinPath(options.baseUrl, part.path),
    etag: copy?.etag ?? null,
    lastModified: copy?.lastModified ?? null,
    maxBytes: part.maxBytes,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (download.kind === 'failed') {
    return { part: part.part, outcome: 'failed', reason: download.reason, message: download.message };
  }
  if (download.kind === 'not_modified' && copy) {
    await index.confirm(spec.source, part.part, now());
    return { part: part.part, outcome: 'unchanged', dataDate: copy.dataDate };
  }
  if (download.kind === 'not_modified') {
    return {
      part: part.part,
      outcome: 'failed',
      reason: 'bad_response',
      message: 'answered 304 without a copy',
    };
  }
  const fetchedAt = now();
  try {
    const content = await part.read({ bytes: download.bytes, contentType: download.contentType });
    const dataDate = fileDate(content.dataDate, download.lastModified, fetchedAt, spec.timeZone);
    if (copy && dataDate < copy.dataDate) {
      throw new NationalFileRefused(`the file is dated ${dataDate}, before the copy held (${copy.dataDate})`);
    }
    const minimum = options.minRows?.[part.part] ?? part.minRows;
    const share = options.minShareOfHeld ?? 0.98;
    const rows = checkedCount(content.rows, minimum, copy ? Math.ceil(copy.rows * share) : 0, copy?.rows);
    const replaced = await index.replace(spec.source, part.part, rows, {
      part: part.part,
      dataDate,
      etag: download.etag,
      lastModified: download.lastModified,
      fetchedAt,
      encoding: content.encoding,
    });
    return { part: part.part, outcome: 'replaced', rows: replaced.rows, dataDate };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const reason = error instanceof NationalFileRefused ? 'refused' : 'bad_response';
    return { part: part.part, outcome: 'failed', reason, message: `${part.path}: ${message}` };
  }
}

/**
 * The rows passed through, and at their end the count checked: at least `minimum`, and at least
 * `floor` when a copy is held (which then stays: the error ends `replace` before its swap).
 */
async function* checkedCount(
  rows: AsyncIterable<NationalFileRow>,
  minimum: number,
  floor: number,
  held: number | undefined,
): AsyncIterable<NationalFileRow> {
  let count = 0;
  for await (const row of rows) {
    count++;
    yield row;
  }
  if (count < minimum) {
    throw new NationalFileRefused(`${count} rows, fewer than the ${minimum} of a whole file`);
  }
  if (count < floor) {
    throw new NationalFileRefused(`${count} rows where the copy held has ${held}: the file looks cut short`);
  }
}

/** The file's date: its own, else `Last-Modified`, else the download's; never after the download's day. */
function fileDate(own: string | null, lastModified: string | null, fetchedAt: Date, timeZone: string) {
  const today = zoneDate(timeZone, fetchedAt);
  const modified = lastModified ? Date.parse(lastModified) : Number.NaN;
  const date = own ?? (Number.isNaN(modified) ? today : zoneDate(timeZone, modified));
  return date > today ? today : date;
}
