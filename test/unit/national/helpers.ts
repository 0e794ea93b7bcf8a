import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { HttpResponse } from '../../../src/registries/http.js';
import type {
  NationalAnswer,
  NationalResult,
  NationalUnavailable,
} from '../../../src/registries/national-port.js';

const FIXTURES = new URL('../../fixtures/registries/', import.meta.url);
export const fixture = (path: string) => readFileSync(new URL(path, FIXTURES), 'utf8');
/** When the answers arrived: 12:00 in Warsaw and Prague (summer time). */
export const RECEIVED = new Date('2026-09-24T10:00:00Z');

export function http(status: number, body: string, headers: Record<string, string> = {}): HttpResponse {
  return { ok: true, status, body, headers: new Headers(headers) };
}

export function answer(result: NationalResult | undefined): NationalAnswer {
  assert.equal(result?.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as NationalAnswer;
}

export function unavailable(result: NationalResult | undefined): NationalUnavailable {
  assert.equal(result?.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as NationalUnavailable;
}
