/**
 * Reading the registers' files as text, safely: a ZIP archive's one expected entry through yauzl
 * (its central directory, sizes and compression checked before anything is inflated, the inflated
 * size held to what the entry declares, so a ZIP bomb is refused), verified in a first pass (CRC-32,
 * whether the text is UTF-8) before a second pass yields its lines; and a plain file's bytes decoded
 * by the same rule. Text that is not valid UTF-8 is read in the register's legacy code page
 * (Windows-1250 for FURS, Windows-1257 for VID).
 */
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { looksLikeHtml } from './http.js';
import { NationalFileRefused } from './national-file.js';

export interface ZipEntryLimits {
  /** An entry inflating to more than this is refused. */
  maxUncompressedBytes: number;
  /** An entry declaring more than this many bytes per compressed byte is refused. */
  maxRatio: number;
}

export interface VerifiedText {
  encoding: string;
  /** The date the archive entry was written (`YYYY-MM-DD`), `null` when it carries none. */
  writtenOn: string | null;
  /** The text's lines without their line ends; empty lines are skipped. */
  lines(): AsyncIterable<string>;
}

const MAX_ENTRIES = 16;

/** The named entry of a ZIP archive, verified whole before its lines are read. */
export async function verifiedZipText(
  bytes: Buffer,
  name: string,
  legacyEncoding: string,
  limits: ZipEntryLimits,
): Promise<VerifiedText> {
  if (bytes.length < 22 || bytes.readUInt32LE(0) !== 0x04034b50) {
    throw new NationalFileRefused(`not a ZIP archive but ${describeStart(bytes)}`);
  }
  const zip = await open(bytes);
  try {
    const entry = await findEntry(zip, name);
    checkEntry(entry, limits);
    const pass = await firstPass(zip, entry);
    if (pass.crc !== entry.crc32) throw new NationalFileRefused(`${name} fails its CRC-32 check`);
    const encoding = pass.utf8 ? 'utf-8' : legacyEncoding;
    return {
      encoding,
      writtenOn: entryDate(entry),
      lines: () =>
        linesOf(
          () => zip.openReadStreamPromise(entry),
          encoding,
          () => zip.close(),
        ),
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}

/** A plain text file's bytes, decoded as UTF-8 or the legacy code page (a byte-order mark is kept). */
export function verifiedPlainText(bytes: Buffer, legacyEncoding: string): { encoding: string; text: string } {
  if (bytes.length === 0) throw new NationalFileRefused('an empty file');
  if (looksLikeHtml(bytes.subarray(0, 512).toString('latin1'))) {
    throw new NationalFileRefused('an HTML page instead of the file');
  }
  const encoding = isUtf8(bytes) ? 'utf-8' : legacyEncoding;
  return { encoding, text: new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes) };
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function describeStart(bytes: Buffer): string {
  const start = bytes.subarray(0, 512).toString('latin1');
  if (bytes.length === 0) return 'an empty body';
  return looksLikeHtml(start) ? 'an HTML page' : `${bytes.length} bytes of something else`;
}

async function open(bytes: Buffer): Promise<yauzl.ZipFile> {
  try {
    return await yauzl.fromBufferPromise(bytes, {
      lazyEntries: true,
      validateEntrySizes: true,
      strictFileNames: true,
    });
  } catch (error) {
    throw new NationalFileRefused(`not a readable ZIP archive (${messageOf(error)})`);
  }
}

async function findEntry(zip: yauzl.ZipFile, name: string): Promise<yauzl.Entry> {
  if (zip.entryCount > MAX_ENTRIES) {
    throw new NationalFileRefused(`the archive has ${zip.entryCount} entries, not the one expected`);
  }
  let found: yauzl.Entry | null = null;
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.toLowerCase() === name.toLowerCase()) found = entry;
    }
  } catch (error) {
    throw new NationalFileRefused(`the archive's directory cannot be read (${messageOf(error)})`);
  }
  if (!found) throw new NationalFileRefused(`the archive has no ${name}`);
  return found;
}

function checkEntry(entry: yauzl.Entry, limits: ZipEntryLimits): void {
  if (entry.isEncrypted()) throw new NationalFileRefused(`${entry.fileName} is encrypted`);
  if (!entry.canDecodeFileData()) {
    throw new NationalFileRefused(`${entry.fileName} uses compression method ${entry.compressionMethod}`);
  }
  if (entry.uncompressedSize > limits.maxUncompressedBytes) {
    throw new NationalFileRefused(
      `${entry.fileName} declares ${entry.uncompressedSize} bytes, more than ${limits.maxUncompressedBytes}`,
    );
  }
  if (entry.uncompressedSize > Math.max(1, entry.compressedSize) * limits.maxRatio) {
    throw new NationalFileRefused(
      `${entry.fileName} declares ${entry.uncompressedSize} bytes from ${entry.compressedSize}: a ratio no text file has`,
    );
  }
}

/** Inflates the entry once: its CRC-32 and whether it is UTF-8 (yauzl holds it to its declared size). */
async function firstPass(zip: yauzl.ZipFile, entry: yauzl.Entry) {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let crc = 0;
  let utf8 = true;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      if (utf8) {
        try {
          decoder.decode(chunk, { stream: true });
        } catch {
          utf8 = false;
        }
      }
    }
  } catch (error) {
    throw new NationalFileRefused(`${entry.fileName} cannot be inflated (${messageOf(error)})`);
  }
  if (utf8) {
    try {
      decoder.decode();
    } catch {
      utf8 = false;
    }
  }
  return { crc: crc >>> 0, utf8 };
}

/** The DOS date the entry was written, as written (no time zone is applied), or `null`. */
function entryDate(entry: yauzl.Entry): string | null {
  const date = entry.getLastModDate({ timezone: 'UTC', forceDosFormat: true });
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 2000) return null;
  return date.toISOString().slice(0, 10);
}

async function* linesOf(
  openStream: () => Promise<Readable>,
  encoding: string,
  done: () => void,
): AsyncIterable<string> {
  const decoder = new TextDecoder(encoding);
  let rest = '';
  try {
    const stream = await openStream();
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const text = rest + decoder.decode(chunk, { stream: true });
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
        if (trimmed.trim() !== '') yield trimmed;
      }
    }
    const last = rest + decoder.decode();
    if (last.trim() !== '') yield last.endsWith('\r') ? last.slice(0, -1) : last;
  } finally {
    done();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
