/** The field checks of the rates dataset's loader: each throws an Error naming the bad field. */
import { isDate } from '../../lib/dates.js';

export type Json = Record<string, unknown>;

export function fail(path: string, message: string): never {
  throw new Error(`rates dataset: ${path}: ${message}`);
}

export function asObject(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  return value as Json;
}

export function checkKeys(
  obj: Json,
  path: string,
  required: readonly string[],
  optional: readonly string[] = [],
): void {
  for (const key of required) {
    if (!Object.hasOwn(obj, key)) fail(path, `missing field "${key}"`);
  }
  for (const key of Object.keys(obj)) {
    if (!required.includes(key) && !optional.includes(key)) fail(path, `unknown field "${key}"`);
  }
}

export function str(obj: Json, key: string, path: string): string {
  const v = obj[key];
  if (typeof v !== 'string' || v.trim() === '') fail(`${path}.${key}`, 'must be a non-empty string');
  return v;
}

export function date(obj: Json, key: string, path: string): string {
  const v = obj[key];
  if (!isDate(v)) fail(`${path}.${key}`, 'must be a valid date YYYY-MM-DD');
  return v;
}

export function currencyCode(obj: Json, key: string, path: string): string {
  const v = str(obj, key, path);
  if (!/^[A-Z]{3}$/.test(v)) fail(`${path}.${key}`, 'must be an ISO 4217 code (3 uppercase letters)');
  return v;
}

export function rate(value: unknown, path: string, allowNull: boolean): number | null {
  if (value === null && allowNull) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    fail(path, allowNull ? 'must be a number or null' : 'must be a number');
  }
  if (value <= 0 || value > 100) fail(path, 'must be a percentage above 0 and at most 100');
  return value;
}

export function amount(value: unknown, path: string): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    fail(path, 'must be a non-negative number or null');
  }
  return value;
}
