/**
 * When a change the sync learnt waits for an operator instead of being applied: the bound and the
 * rules, in one place (docs/rates.md, "Held changes").
 *
 * A change is measured against the baseline: the rates openvat shipped (the curated dataset) with
 * what operators released (held changes they accepted) and their overrides over them, never against
 * what earlier syncs applied on their own. A feed cannot creep past the bound in steps, and a feed
 * that returns to the baseline is never held for being far from a poisoned rate.
 *
 * 1. History: a change whose first day is before the sync's own day in the country (its time zone)
 *    would change `?date=` answers and decisions for sales already made. Rates that are the
 *    baseline's again are the exception: they apply from the sync's day (`firstDay`), and the days
 *    past stay as they were served.
 * 2. The bound: any rate (standard, each reduced rate, super-reduced, parking) that would move by more
 *    than `MOVE_BOUND.points` points, or by more than `MOVE_BOUND.share` of the baseline's rate.
 * 3. Bands: a rate band that would appear or vanish (another number of reduced rates, a super-reduced
 *    or parking rate where the baseline has none, or none where it has one).
 *
 * The rules of TEDB's rows themselves (no standard rate, a reduced rate above it, a country without
 * rows) are the sync's, in `tedb-rules.ts`.
 */
import { type PeriodRates, sameRates } from './layers.js';
import type { RateChangeRow } from './repository.js';

/** How far a rate may move from the baseline without an operator: both limits apply. */
export const MOVE_BOUND = {
  /** Percentage points. */
  points: 5,
  /** A share of the baseline's rate (0.5: half of it; 7% may move to 3.5% or 10.5% at most). */
  share: 0.5,
} as const;

/** Whether a change is an operator's release: a held change accepted by an operator. */
export function isRelease(row: Pick<RateChangeRow, 'status' | 'decided_at'>): boolean {
  return row.status === 'applied' && row.decided_at !== null;
}

/**
 * The first day of a change to `rates`, dated by TEDB from `claimed`: that day, or the sync's `today`
 * in the country when it is earlier and the rates are the baseline's of today (rule 1's exception).
 */
export function firstDay(change: {
  claimed: string;
  today: string;
  rates: PeriodRates;
  baselineToday: PeriodRates | null;
}): string {
  const { claimed, today, rates, baselineToday } = change;
  return claimed < today && baselineToday && sameRates(baselineToday, rates) ? today : claimed;
}

/** Why a move of one rate from `from` to `to` leaves the bound; null when it stays within. */
export function beyondBound(from: number, to: number): string | null {
  const move = Math.abs(to - from);
  if (move > MOVE_BOUND.points) return `by more than ${MOVE_BOUND.points} points`;
  if (move > from * MOVE_BOUND.share) return `by more than ${MOVE_BOUND.share * 100}% of the rate`;
  return null;
}

const pct = (rate: number | null) => (rate === null ? 'none' : `${rate}%`);
const pcts = (rates: readonly number[]) => (rates.length === 0 ? 'none' : rates.map(pct).join('/'));

/** The bands that would appear or vanish, as `reduced 7% → none`; empty when every band stays. */
export function bandChanges(baseline: PeriodRates, rates: PeriodRates): string[] {
  const changes: string[] = [];
  if (baseline.reduced_rates.length !== rates.reduced_rates.length)
    changes.push(`reduced ${pcts(baseline.reduced_rates)} → ${pcts(rates.reduced_rates)}`);
  for (const [name, field] of [
    ['super-reduced', 'super_reduced_rate'],
    ['parking', 'parking_rate'],
  ] as const) {
    if ((baseline[field] === null) !== (rates[field] === null))
      changes.push(`${name} ${pct(baseline[field])} → ${pct(rates[field])}`);
  }
  return changes;
}

/** The rates that would move beyond the bound, as `the standard rate … (19% → 26%)`. */
export function movesBeyondBound(baseline: PeriodRates, rates: PeriodRates): string[] {
  const pairs: [string, number | null, number | null][] = [
    ['the standard rate', baseline.standard_rate, rates.standard_rate],
    ['the super-reduced rate', baseline.super_reduced_rate, rates.super_reduced_rate],
    ['the parking rate', baseline.parking_rate, rates.parking_rate],
  ];
  // Reduced rates are compared in order when there are as many (another number is a band change).
  if (baseline.reduced_rates.length === rates.reduced_rates.length)
    baseline.reduced_rates.forEach((rate, i) => {
      pairs.push(['a reduced rate', rate, rates.reduced_rates[i] ?? null]);
    });
  const moves: string[] = [];
  for (const [name, from, to] of pairs) {
    if (from === null || to === null) continue;
    const beyond = beyondBound(from, to);
    if (beyond) moves.push(`${name} would move ${beyond} (${pct(from)} → ${pct(to)})`);
  }
  return moves;
}

/**
 * Why a change must wait for an operator (rules 1–3), each reason a sentence; empty when it may be
 * applied. `country` is the upper-case code the reasons name; `today` the sync's day in the country;
 * `baseline` the baseline's rates on the change's first day (null when it has none that day).
 */
export function holdReasons(change: {
  country: string;
  from: string;
  rates: PeriodRates;
  today: string;
  baseline: PeriodRates | null;
}): string[] {
  const { country, from, rates, today, baseline } = change;
  const reasons: string[] = [];
  if (from < today)
    reasons.push(
      `it would change ${country}'s rates from ${from}, before the sync's day (${today}): days already past are changed only by an operator`,
    );
  if (!baseline) {
    reasons.push(`no rates were shipped or released for ${country} on ${from} to measure it against`);
    return reasons;
  }
  const bands = bandChanges(baseline, rates);
  const beyond = [
    ...(bands.length > 0 ? [`a rate band would appear or vanish (${bands.join(', ')})`] : []),
    ...movesBeyondBound(baseline, rates),
  ];
  if (beyond.length > 0)
    reasons.push(`for ${country}, ${beyond.join(', ')}, against the rates last shipped or released`);
  return reasons;
}
