import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runInNewContext } from 'node:vm';
import { gunzip, gzip } from 'node:zlib';

/** Scalar's page script, as served: gzip-compressed, with its entity tag. */
export interface ScalarScript {
  /** The script compressed with gzip (about a quarter of its size). */
  gzipped: Buffer;
  /** A strong entity tag of the script's content. */
  etag: string;
  /** The script itself, for a client that does not accept gzip (made on each call, not kept). */
  plain(): Promise<Buffer>;
}

const MARK = 'var standalone_default = ';

/**
 * Reads Scalar's single page script out of its Fastify plugin's bundle, where it is one string
 * literal (the plugin is not loaded: loading it kept about 16 MB of its bundle in memory from the
 * start for a page most instances never serve).
 */
async function readScript(): Promise<string> {
  const bundle = await readFile(fileURLToPath(import.meta.resolve('@scalar/fastify-api-reference')), 'utf8');
  const start = bundle.indexOf(MARK);
  const end = bundle.indexOf(';\n', start);
  const literal = start < 0 || end < 0 ? '' : bundle.slice(start + MARK.length, end);
  if (!literal.startsWith('"') || !literal.endsWith('"'))
    throw new Error('the Scalar bundle has no page script where it is expected');
  // A string literal of the bundle, evaluated in a context of its own.
  const script: unknown = runInNewContext(literal);
  if (typeof script !== 'string') throw new Error('the Scalar page script is not a string');
  return script;
}

let made: Promise<ScalarScript> | undefined;

/** The page script, read and compressed on first use and kept compressed (about 1 MB). */
export function scalarScript(): Promise<ScalarScript> {
  made ??= (async () => {
    const script = Buffer.from(await readScript(), 'utf8');
    const gzipped = await promisify(gzip)(script, { level: 9 });
    const etag = `"${createHash('sha256').update(script).digest('base64url').slice(0, 27)}"`;
    return { gzipped, etag, plain: () => promisify(gunzip)(gzipped) };
  })().catch((error: unknown) => {
    made = undefined;
    throw error;
  });
  return made;
}
