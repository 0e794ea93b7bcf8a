/**
 * What the simulators of the registers' published files share: a minimal ZIP writer (one stored
 * entry, deflated, with its DOS date, as FURS's archives are), fixed-width and CSV line builders, and
 * the serving of a file the way a static file server does it (ETag and Last-Modified, 304 for a
 * conditional request that matches), with the failures a file download meets: an HTML page with 200,
 * a file cut short (as served, or by a connection that drops), a redirect, and, for archives, a ZIP
 * bomb (an entry declaring 4 GB, or one inflating far past the size it declares).
 *
 * File controls (besides the shared ones): `html: true`, `truncated: "bytes" | "lines"`,
 * `cutConnection: true`, `zipBomb: "declared" | "lying"`, `redirect: true`, `conditional: false`
 * (ignore validators), `dataDate: "YYYY-MM-DD"` (the file's date, default the simulator's today),
 * `omit: [numbers]` (left out of the files).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { crc32, deflateRawSync } from 'node:zlib';
import { send } from './controls.js';

export interface FileControls {
  html: boolean;
  truncated: false | 'bytes' | 'lines';
  cutConnection: boolean;
  zipBomb: false | 'declared' | 'lying';
  redirect: boolean;
  conditional: boolean;
  dataDate: string | null;
  omit: string[];
}

export function defaultFileControls(): FileControls {
  return {
    html: false,
    truncated: false,
    cutConnection: false,
    zipBomb: false,
    redirect: false,
    conditional: true,
    dataDate: null,
    omit: [],
  };
}

/** Applies the file controls of a command (after `reset` has been handled); unknown keys are ignored. */
export function applyFileControls(controls: FileControls, command: Record<string, unknown>): FileControls {
  const next = command.reset === true ? defaultFileControls() : { ...controls };
  if (typeof command.html === 'boolean') next.html = command.html;
  if (command.truncated === false || command.truncated === 'bytes' || command.truncated === 'lines') {
    next.truncated = command.truncated;
  }
  if (typeof command.cutConnection === 'boolean') next.cutConnection = command.cutConnection;
  if (command.zipBomb === false || command.zipBomb === 'declared' || command.zipBomb === 'lying') {
    next.zipBomb = command.zipBomb;
  }
  if (typeof command.redirect === 'boolean') next.redirect = command.redirect;
  if (typeof command.conditional === 'boolean') next.conditional = command.conditional;
  if (
    command.dataDate === null ||
    (typeof command.dataDate === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(command.dataDate))
  ) {
    next.dataDate = command.dataDate;
  }
  if (Array.isArray(command.omit)) next.omit = command.omit.filter((n): n is string => typeof n === 'string');
  return next;
}

// ---------------------------------------------------------------------------------------------
// Lines

/** A fixed-width line of `length` spaces with each field written at its column (cut to its width). */
export function fixedWidth(length: number, fields: [from: number, to: number, text: string][]): string {
  const chars = Array.from({ length }, () => ' ');
  for (const [from, to, text] of fields) {
    const cut = [...text].slice(0, to - from);
    cut.forEach((char, i) => {
      chars[from + i] = char;
    });
  }
  return chars.join('');
}

/** A CSV field, quoted when it holds a comma, a quote or a line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

// ---------------------------------------------------------------------------------------------
// ZIP

export interface ZipEntryOptions {
  /** The uncompressed size the headers declare instead of the real one (a bomb's lie). */
  declaredSize?: number;
}

const dosTime = (at: Date) =>
  (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | (at.getUTCSeconds() >> 1);
const dosDate = (at: Date) =>
  ((at.getUTCFullYear() - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate();

/** A ZIP archive of one deflated entry, written at the wall time `written` (its UTC fields). */
export function zipArchive(
  name: string,
  content: Buffer,
  written: Date,
  options: ZipEntryOptions = {},
): Buffer {
  const data = deflateRawSync(content);
  const fileName = Buffer.from(name, 'utf8');
  const size = options.declaredSize ?? content.length;
  const crc = crc32(content) >>> 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0, 6);
  local.writeUInt16LE(8, 8);
  local.writeUInt16LE(dosTime(written), 10);
  local.writeUInt16LE(dosDate(written), 12);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(size >>> 0, 22);
  local.writeUInt16LE(fileName.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0, 8);
  central.writeUInt16LE(8, 10);
  central.writeUInt16LE(dosTime(written), 12);
  central.writeUInt16LE(dosDate(written), 14);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(size >>> 0, 24);
  central.writeUInt16LE(fileName.length, 28);
  central.writeUInt32LE(0, 42);
  const centralOffset = local.length + fileName.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return Buffer.concat([local, fileName, data, central, fileName, end]);
}

const lyingBombs = new Map<string, Buffer>();

/** A bomb of the `lying` kind: 16 MiB of spaces that declare 4,096 bytes (made once, about 16 kB). */
export function lyingZipBomb(name: string, written: Date): Buffer {
  let bomb = lyingBombs.get(name);
  if (!bomb) {
    bomb = zipArchive(name, Buffer.alloc(16 * 1024 * 1024, 0x20), written, { declaredSize: 4096 });
    lyingBombs.set(name, bomb);
  }
  return bomb;
}

// ---------------------------------------------------------------------------------------------
// Serving

export interface ServedFile {
  body: Buffer;
  contentType: string;
  /** When the file was written: `Last-Modified`. */
  modified: Date;
}

const PORTAL_ERROR_HTML =
  '<!DOCTYPE html>\n<html lang="en"><head><title>Page not available</title></head>\n' +
  '<body><h1>The page is temporarily not available</h1><p>Please try again later.</p></body></html>\n';

/** Serves a file as a static file server does, or fails the way the controls say. */
export function serveFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: ServedFile,
  controls: FileControls,
) {
  if (controls.html) return send(res, 200, 'text/html; charset=utf-8', PORTAL_ERROR_HTML);
  // A file cut short on the server is another file: its own ETag and length.
  let body = file.body;
  if (controls.truncated === 'bytes') body = body.subarray(0, Math.floor(body.length / 2));
  if (controls.truncated === 'lines') {
    const text = body.toString('utf8');
    const cut = text.indexOf('\n', Math.floor(text.length / 2));
    body = Buffer.from(cut < 0 ? text : text.slice(0, cut + 1), 'utf8');
  }
  const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 20)}"`;
  const lastModified = file.modified.toUTCString();
  const headers = { etag, 'last-modified': lastModified, 'accept-ranges': 'bytes' };
  if (controls.conditional && notModified(req, etag, file.modified)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': file.contentType, 'content-length': body.length, ...headers });
  if (controls.cutConnection) {
    res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
    return;
  }
  res.end(body);
}

function notModified(req: IncomingMessage, etag: string, modified: Date): boolean {
  const match = req.headers['if-none-match'];
  if (typeof match === 'string') return match.split(/\s*,\s*/).includes(etag) || match.trim() === '*';
  const since = req.headers['if-modified-since'];
  if (typeof since !== 'string') return false;
  const at = Date.parse(since);
  return !Number.isNaN(at) && Math.floor(modified.getTime() / 1000) <= Math.floor(at / 1000);
}
