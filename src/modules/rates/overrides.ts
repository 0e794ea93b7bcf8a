/**
 * An operator's local corrections (`OPENVAT_RATES_OVERRIDES`): a JSON file of periods per country,
 * layered over the curated dataset and what the sync learnt. Checked whole at start: an unknown
 * country or a malformed period stops the start with a message naming its line in the file.
 *
 * ```json
 * {
 *   "fi": [
 *     { "from": "2027-01-01", "standard_rate": 24, "reduced_rates": [10, 13.5],
 *       "super_reduced_rate": null, "parking_rate": null, "note": "announced 2026-11-30" }
 *   ]
 * }
 * ```
 */
import { readFileSync } from 'node:fs';
import { getNodeValue, type Node, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import type { RatesDataset } from './dataset.js';
import type { AppliedChange } from './layers.js';

export class RatesOverridesError extends Error {
  override name = 'RatesOverridesError';
}

const FIELDS = new Set([
  'from',
  'standard_rate',
  'reduced_rates',
  'super_reduced_rate',
  'parking_rate',
  'note',
]);

function isDay(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const at = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === value;
}

const isRate = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value < 100;

/** What is wrong with one period, or null. */
function periodProblem(period: Record<string, unknown>): string | null {
  for (const key of Object.keys(period)) if (!FIELDS.has(key)) return `unknown field "${key}"`;
  if (!isDay(period.from)) return '"from" must be a day, YYYY-MM-DD';
  const standard = period.standard_rate;
  if (!isRate(standard)) return '"standard_rate" must be a percentage from 0 to below 100';
  const reduced = period.reduced_rates ?? [];
  if (!Array.isArray(reduced) || !reduced.every(isRate))
    return '"reduced_rates" must be a list of percentages';
  const above = reduced.find((r) => r >= standard);
  if (above !== undefined) return `reduced rate ${above}% is not below the standard rate of ${standard}%`;
  for (const field of ['super_reduced_rate', 'parking_rate'] as const) {
    const value = period[field] ?? null;
    if (value !== null && !(isRate(value) && value < standard))
      return `"${field}" must be null or a percentage below the standard rate`;
  }
  if (period.note !== undefined && typeof period.note !== 'string') return '"note" must be text';
  return null;
}

/** Parses and checks an overrides file's text; `name` is how messages name the file. */
export function parseRatesOverrides(text: string, name: string, curated: RatesDataset): AppliedChange[] {
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
  const fail = (offset: number, message: string): never => {
    throw new RatesOverridesError(`${name} line ${lineOf(offset)}: ${message}`);
  };
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  const first = errors[0];
  if (first) fail(first.offset, `not JSON (${printParseErrorCode(first.error)})`);
  if (root?.type !== 'object')
    return fail(root?.offset ?? 0, 'expected an object of countries, e.g. {"fi": [ … ]}');
  const known = new Set(curated.countries.map((c) => c.country_code));
  const changes: AppliedChange[] = [];
  for (const property of root.children ?? []) {
    const [keyNode, valueNode] = property.children as [Node, Node | undefined];
    const code = String(keyNode.value);
    if (!known.has(code))
      fail(keyNode.offset, `unknown country "${code}" (lower-case codes of the rates dataset, e.g. "fi")`);
    if (valueNode?.type !== 'array')
      fail(valueNode?.offset ?? keyNode.offset, `"${code}" must be a list of periods`);
    const seen = new Set<string>();
    for (const periodNode of (valueNode as Node).children ?? []) {
      if (periodNode.type !== 'object') fail(periodNode.offset, 'a period must be an object');
      const period = getNodeValue(periodNode) as Record<string, unknown>;
      const problem = periodProblem(period);
      if (problem) fail(periodNode.offset, `${code}: ${problem}`);
      const from = period.from as string;
      if (seen.has(from)) fail(periodNode.offset, `${code}: a second period from ${from}`);
      seen.add(from);
      changes.push({
        country: code,
        from,
        rates: {
          standard_rate: period.standard_rate as number,
          reduced_rates: [...new Set(period.reduced_rates as number[] | undefined)].sort((a, b) => a - b),
          super_reduced_rate: (period.super_reduced_rate as number | null | undefined) ?? null,
          parking_rate: (period.parking_rate as number | null | undefined) ?? null,
        },
        learntOn: curated.data_version,
      });
    }
  }
  return changes;
}

/** Reads and checks the overrides file at `path`. */
export function loadRatesOverrides(path: string, curated: RatesDataset): AppliedChange[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RatesOverridesError(
      `OPENVAT_RATES_OVERRIDES: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return parseRatesOverrides(text, `OPENVAT_RATES_OVERRIDES ${path}`, curated);
}
