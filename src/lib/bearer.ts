/**
 * The token of an `Authorization: Bearer <token>` header, or null. The scheme's name is
 * case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` are `Bearer`.
 */
export function bearerToken(header: string | undefined): string | null {
  return header === undefined ? null : (BEARER_RE.exec(header)?.[1] ?? null);
}

const BEARER_RE = /^Bearer ([^\s]+)$/i;
