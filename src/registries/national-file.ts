/**
 * The registers published as files (SI FURS, LV VID): the rows a file holds, the local index they
 * are kept in (a port: an in-memory one here, the database-backed one beside the other tables), and
 * the client that answers from it with the file's date.
 *
 * A file's copy is made of parts (FURS publishes three files, VID one); each part is replaced whole
 * by a sync, and a lookup reads every part of its register. The answer rule, the same for both:
 * - no copy of a part yet, or the oldest part's file date more than `maxAgeDays` days before today
 *   (in the register's time zone), answers unavailable: a copy that old no longer says who is
 *   registered today, and a number missing from it is not "not registered";
 * - otherwise the register's own rule over the rows found answers, and a number on none of the
 *   files is `valid: false`: each file lists every payer of its kind, the deregistered ones included
 *   (LV) or every person in the tax register with their VAT mark (SI);
 * - a failing index (a database error) is unavailability, never a throw.
 */
import { nationalAnswer, zoneDate } from './national-common.js';
import type { NationalId } from './national-ids.js';
import {
  type NationalAnswer,
  type NationalLimits,
  type NationalLookup,
  type NationalRegistryClient,
  type NationalResult,
  type NationalSource,
  nationalUnavailable,
} from './national-port.js';

/** One row of a register's file, as the local index keeps it. */
export interface NationalFileRow {
  /** The key looked up: SI the 8-digit tax number, LV `LV` + 11 digits. */
  number: string;
  /** The file it came from: SI `PO`, `FO`, `DEJ`; LV `VAT`. */
  part: string;
  /** The file's own VAT mark: SI `*` (PO) or a row of FO, LV `Aktivs`; `null` where the file has none (SI DEJ). */
  vat: boolean | null;
  /** The register's own words for the row's status (`PO *`, `PO O *`, `FO P`, `DEJ`, `ir`, `nav`). */
  status: string;
  name: string | null;
  /** The address as the file writes it (`HACQUETOVA ULICA 9, 1000 LJUBLJANA`), and its parts where they split. */
  address: string | null;
  street: string | null;
  postcode: string | null;
  city: string | null;
  /** The registration's first and last day (`YYYY-MM-DD`) where the file gives them. */
  from: string | null;
  to: string | null;
  /** The file's other identifiers of the payer (SI `registrationNumber`, `taxOffice`, `activity`, `scope`). */
  identifiers: Record<string, string>;
}

/** What a sync records about one part's copy. */
export interface NationalFilePartMeta {
  part: string;
  /** The file's date (`YYYY-MM-DD`): the date it was written, else its `Last-Modified`, else the download's. */
  dataDate: string;
  /** The validators the server sent, for the next conditional request. */
  etag: string | null;
  lastModified: string | null;
  /** When the copy was downloaded. */
  fetchedAt: Date;
  /** How the file's text was decoded (`utf-8`, `windows-1250`, `windows-1257`). */
  encoding: string;
}

export interface NationalFilePartStatus extends NationalFilePartMeta {
  rows: number;
  /** When the server last confirmed the copy current: the download, or a later `304 Not Modified`. */
  checkedAt: Date;
}

/**
 * The local index of the files' rows. `replace` consumes `rows` into a new copy of the part and
 * swaps it in only when the iterable ends without an error: a file found wrong halfway (truncated,
 * an unexpected layout, too few rows) leaves the previous copy answering.
 */
export interface NationalFileIndex {
  replace(
    source: NationalSource,
    part: string,
    rows: AsyncIterable<NationalFileRow>,
    meta: NationalFilePartMeta,
  ): Promise<{ rows: number }>;
  /** The server answered `304 Not Modified`: the copy is current as of `checkedAt`. */
  confirm(source: NationalSource, part: string, checkedAt: Date): Promise<void>;
  /** The rows of every part for one number. */
  lookup(source: NationalSource, number: string): Promise<NationalFileRow[]>;
  parts(source: NationalSource): Promise<NationalFilePartStatus[]>;
}

/** The in-memory index: each part a map from number to rows, swapped whole. */
export function createMemoryFileIndex(): NationalFileIndex {
  const copies = new Map<string, { rows: Map<string, NationalFileRow[]>; status: NationalFilePartStatus }>();
  const keyOf = (source: NationalSource, part: string) => `${source}\u0000${part}`;

  async function replace(
    source: NationalSource,
    part: string,
    rows: AsyncIterable<NationalFileRow>,
    meta: NationalFilePartMeta,
  ) {
    const staged = new Map<string, NationalFileRow[]>();
    let count = 0;
    for await (const row of rows) {
      if (row.part !== part) throw new Error(`a row of part ${row.part} was given for part ${part}`);
      const list = staged.get(row.number);
      if (list) list.push(row);
      else staged.set(row.number, [row]);
      count++;
    }
    copies.set(keyOf(source, part), {
      rows: staged,
      status: { ...meta, part, rows: count, checkedAt: meta.fetchedAt },
    });
    return { rows: count };
  }

  async function confirm(source: NationalSource, part: string, checkedAt: Date) {
    const copy = copies.get(keyOf(source, part));
    if (copy) copy.status = { ...copy.status, checkedAt };
  }

  async function lookup(source: NationalSource, number: string) {
    const found: NationalFileRow[] = [];
    for (const [key, copy] of copies) {
      if (key.startsWith(`${source}\u0000`)) found.push(...(copy.rows.get(number) ?? []));
    }
    return found;
  }

  async function parts(source: NationalSource) {
    return [...copies.entries()]
      .filter(([key]) => key.startsWith(`${source}\u0000`))
      .map(([, copy]) => ({ ...copy.status }));
  }

  return { replace, confirm, lookup, parts };
}

/** The copy a lookup was answered from: its oldest file date and last confirmation. */
export interface NationalFileCopy {
  dataDate: string;
  checkedAt: Date;
}

export interface NationalFileClientOptions {
  source: NationalSource;
  country: string;
  index: NationalFileIndex;
  /** Every part a complete copy has (SI `PO`, `FO`, `DEJ`; LV `VAT`). */
  parts: readonly string[];
  /** The key a VAT number's national part is looked up by. */
  key(national: string): NationalId<string>;
  /** The register's rule over the rows found for `number` (none: not on any file). */
  answer(number: string, rows: NationalFileRow[], copy: NationalFileCopy): NationalAnswer;
  /** A copy whose oldest file is more days old than this answers unavailable. */
  maxAgeDays: number;
  timeZone: string;
  limits: NationalLimits;
  now?: () => Date;
}

const DAY_MS = 86_400_000;

/** Days from `from` to `to`, both `YYYY-MM-DD`. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** A client answering from the local copy of a register's files. */
export function createFileRegisterClient(options: NationalFileClientOptions): NationalRegistryClient {
  const now = options.now ?? (() => new Date());
  const { source } = options;

  async function lookup(request: NationalLookup): Promise<NationalResult> {
    const key = options.key(request.vat.national);
    if (!key.ok) return nationalUnavailable(source, 'rejected', key.message);
    try {
      const copy = await currentCopy();
      if (copy.kind === 'unavailable') return copy;
      const rows = await options.index.lookup(source, key.id);
      return options.answer(key.id, rows, copy);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return nationalUnavailable(source, 'down', `the local copy of ${source} could not be read: ${detail}`);
    }
  }

  async function currentCopy() {
    const parts = await options.index.parts(source);
    const missing = options.parts.filter((part) => !parts.some((status) => status.part === part));
    if (missing.length > 0) {
      return nationalUnavailable(
        source,
        'down',
        `no copy of ${source} ${missing.join(', ')} yet: the files are synced by openvat registers sync`,
        { upstreamCode: 'INDEX_EMPTY', retryable: false },
      );
    }
    const current = parts.filter((status) => options.parts.includes(status.part));
    const dataDate = current.map((status) => status.dataDate).sort()[0] ?? '';
    const today = zoneDate(options.timeZone, now());
    const age = daysBetween(dataDate, today);
    if (!(age <= options.maxAgeDays)) {
      return nationalUnavailable(
        source,
        'down',
        `the local copy of ${source} is from ${dataDate}, ${age} days before ${today}; answers need a copy at most ${options.maxAgeDays} days old`,
        { upstreamCode: 'INDEX_STALE', retryable: false },
      );
    }
    const checkedAt = new Date(Math.min(...current.map((status) => status.checkedAt.getTime())));
    return { kind: 'copy' as const, dataDate, checkedAt };
  }

  return { source, country: options.country, limits: options.limits, lookup };
}

/** The answer fields every file register shares. */
export function fileAnswer(
  source: NationalSource,
  country: string,
  national: string,
  copy: NationalFileCopy,
  fields: Partial<Omit<NationalAnswer, 'kind' | 'registrationScope' | 'source' | 'country' | 'national'>> & {
    valid: boolean;
  },
): NationalAnswer {
  return nationalAnswer({
    ...fields,
    source,
    country,
    national,
    dataDate: copy.dataDate,
    checkedAt: copy.checkedAt,
  });
}

/** A file the sync refuses (not the expected kind of file, a broken archive, too few rows). */
export class NationalFileRefused extends Error {
  override readonly name = 'NationalFileRefused';
}
