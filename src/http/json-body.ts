import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { unstorableText } from '../lib/json-text.js';
import { errors } from './api-error.js';
import { jsonErrorMessage } from './server-limits.js';

/**
 * The one body parser: JSON as UTF-8. Anything else is refused instead of being silently mangled,
 * and no route takes text: a text/plain body is refused as an unsupported Content-Type, as every
 * other type is, instead of reaching a route's validation as a string.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer;
    const refused = refusedEncoding(request.headers, buffer);
    if (refused) {
      done(errors.invalidRequest(refused), undefined);
      return;
    }
    // An empty body is no body (clients that send this header on every request, a DELETE among
    // them); a route that needs a body refuses it when it validates the body.
    if (buffer.length === 0) {
      done(null, undefined);
      return;
    }
    const text = buffer.toString('utf8');
    parseJson(request, text, (error, value) => {
      if (error) {
        done(errors.invalidRequest(jsonErrorMessage(text)), undefined);
        return;
      }
      const unstorable = unstorableText(text, value);
      if (unstorable) {
        done(errors.invalidRequest(UNSTORABLE[unstorable]), undefined);
        return;
      }
      done(null, value);
    });
  });
}

const UNSTORABLE = {
  nul: 'Text in the request body may not contain the NUL character (\\u0000).',
  lone_surrogate:
    'Text in the request body must be valid Unicode: it holds a lone surrogate (a \\ud800–\\udfff escape without its pair).',
} as const;

/** Why a body cannot be read as UTF-8 JSON as sent (charset, compression, bytes); `null` when it can. */
function refusedEncoding(
  headers: { 'content-type'?: string | undefined; 'content-encoding'?: string | undefined },
  buffer: Buffer,
): string | null {
  const charset = /charset=([^;\s]+)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    return `Unsupported charset "${charset}": send JSON as UTF-8.`;
  }
  if (buffer.length === 0) return null;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    return `Content-Encoding "${encoding}" is not supported: send the JSON body uncompressed.`;
  }
  if (!isUtf8(buffer)) return 'The request body is not valid UTF-8.';
  return null;
}
