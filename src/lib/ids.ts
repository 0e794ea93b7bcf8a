import { v7 as uuidv7 } from 'uuid';

/** Port for identifiers, so tests can make them predictable. */
export interface IdGenerator {
  /** A time-ordered UUID v7 (RFC 9562). */
  uuid(): string;
}

export function createIdGenerator(): IdGenerator {
  return { uuid: () => uuidv7() };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
