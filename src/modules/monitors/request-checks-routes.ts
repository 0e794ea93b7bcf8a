// Route code: the checks of a monitor request that routes.ts makes before calling the service.
import { errors } from '../../http/api-error.js';
import { METADATA_MAX_BYTES } from './schemas.js';

/** A query's ISO 8601 date or time as a UTC timestamp; a 400 naming the parameter when it is none. */
export function isoTime(value: string, name: string): string {
  const at = Date.parse(value);
  if (Number.isNaN(at) || !/^\d{4}-\d{2}-\d{2}/.test(value))
    throw errors.invalidRequest(`${name} must be an ISO 8601 date or time, e.g. 2026-11-01T00:00:00Z.`);
  return new Date(at).toISOString();
}

/** Why a monitor's metadata is too big to store, naming its field; null when it fits (or is absent). */
export function checkMetadata(metadata: Record<string, unknown> | undefined, field: string): string | null {
  if (metadata === undefined) return null;
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  return bytes > METADATA_MAX_BYTES
    ? `${field} is ${bytes.toLocaleString('en')} bytes as JSON; at most ${METADATA_MAX_BYTES.toLocaleString('en')}.`
    : null;
}

/** The refusal of `"peppol": true` by a key whose scopes leave Peppol out. */
export const PEPPOL_SCOPE =
  'A monitor with "peppol": true needs the scope "peppol", which this API key does not have.';
