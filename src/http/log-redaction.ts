import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose value is a credential, by name (case-insensitive, `-` or `_` or nothing
 * between the words). Their value is replaced, the name kept, so a log still shows what was sent.
 */
const SENSITIVE_PARAM =
  /^(api[-_]?key|apikey|key|token|access[-_]?token|refresh[-_]?token|id[-_]?token|auth|authorization|bearer|secret|client[-_]?secret|password|passwd|pwd|signature|sig|session|session[-_]?id|code)$/i;

/** Credentials recognisable by their shape wherever they appear (an API key pasted into a path, a webhook secret). */
const CREDENTIAL_SHAPE = /(svc_(?:live|test)_|whsec_)[A-Za-z0-9+/=_-]+/g;

export const REDACTED = '[REDACTED]';

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/** A URL (path and query) safe to log: credential parameters and credential-shaped text replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  let out = url;
  if (q !== -1) {
    const query = url
      .slice(q + 1)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        const name = eq === -1 ? pair : pair.slice(0, eq);
        return eq !== -1 && SENSITIVE_PARAM.test(decodedName(name)) ? `${name}=${REDACTED}` : pair;
      })
      .join('&');
    out = `${url.slice(0, q)}?${query}`;
  }
  return out.replace(CREDENTIAL_SHAPE, `$1${REDACTED}`);
}

/**
 * The request as logged: method, redacted URL, host and client address. No headers are logged, so
 * `Authorization` and cookies never are.
 */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
