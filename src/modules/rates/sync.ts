/**
 * The rates sync: asks TEDB for the member states' rates from today through a year ahead, and keeps
 * what differs from what openvat would serve as effective-dated changes (`rate_changes`), layered over
 * the curated dataset. A change that breaks a rule of `hold-rules.ts` (it would change a day already
 * past, move a rate beyond the bound or add or drop a band, measured against the rates shipped or
 * released by an operator) is held for an operator instead of applied. A sync that cannot read a whole
 * answer (a fault, something that is not XML, a member state without rows, a timeout) changes nothing
 * and says why. An operator's release is never superseded or withdrawn by a sync.
 */

import type { Clock } from '../../lib/clock.js';
import { isoDate } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { TedbClient, TedbRateRow } from '../../registries/tedb.js';
import { type CountryRates, type RatesDataset, ratesOn } from './dataset.js';
import { firstDay, holdReasons, isRelease } from './hold-rules.js';
import {
  type AppliedChange,
  changesOfRows,
  type LayeredDataset,
  layerChanges,
  type PeriodRates,
  ratesOf,
  sameRates,
} from './layers.js';
import type { RateChangeRow, RatesRepository } from './repository.js';
import { isCountryRate, ratesFromTedbRows } from './tedb-rules.js';
import { dayInZone, timeZoneOf } from './time-zones.js';

export type SyncOutcome =
  | {
      kind: 'synced';
      /** Changes applied, held, and earlier ones withdrawn or superseded by this sync. */
      applied: number;
      held: number;
      retired: number;
    }
  | { kind: 'failed'; message: string };

export interface RatesSyncDeps {
  client: TedbClient;
  repository: RatesRepository;
  clock: Clock;
  ids: IdGenerator;
  /** The rates openvat serves now (curated + applied changes + overrides). */
  current(): LayeredDataset;
  /** The shipped dataset and an operator's overrides: with the releases, the baseline of the rules. */
  curated: RatesDataset;
  overrides?: readonly AppliedChange[];
  /** The member states TEDB is asked about, lower case as in the dataset (`gr` for Greece). */
  countries: readonly string[];
  /** Days ahead to ask for (announced changes); 365 by default. */
  horizonDays?: number;
}

type Retirement = { id: string; status: 'superseded' | 'withdrawn'; at: string };

/** What one situation of TEDB means for a country: nothing new, or a change from a day on. */
type Proposal =
  | { kind: 'same'; from: string }
  | { kind: 'change'; from: string; rates: PeriodRates | null; reasons: string[] };

function addDays(day: string, days: number): string {
  return isoDate(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));
}

export function createRatesSync(deps: RatesSyncDeps) {
  const { client, repository, clock, ids } = deps;
  const horizon = deps.horizonDays ?? 365;
  const asked = deps.countries.map((c) => c.toUpperCase());
  const overrides = deps.overrides ?? [];

  /**
   * The answer's rows by country, or why the answer is not whole. A member state answered when the
   * answer has rows for it: TEDB's `additionalInformation` is empty for a plain query. Rows of a
   * state not asked about are left out.
   */
  async function situation(query: { situationOn: string } | { from: string; to: string }) {
    const outcome = await client.retrieveVatRates({ countries: asked, ...query });
    if (outcome.kind === 'failure') return { ok: false as const, message: outcome.message };
    const byCountry = new Map<string, TedbRateRow[]>(asked.map((c) => [c, []]));
    for (const row of outcome.rows) byCountry.get(row.country)?.push(row);
    const missing = asked.filter((c) => byCountry.get(c)?.length === 0);
    if (missing.length > 0) {
      return {
        ok: false as const,
        message: `TEDB answered for ${asked.length - missing.length} of ${asked.length} member states (missing: ${missing.join(', ')})`,
      };
    }
    return { ok: true as const, byCountry };
  }

  /**
   * The days to look at per country (today, the days TEDB's situations change within the horizon,
   * and the first days of releases ahead, which TEDB may no longer report) and the situation on each.
   */
  async function ask(today: string, releases: readonly RateChangeRow[]) {
    const range = await situation({ from: today, to: addDays(today, horizon) });
    if (!range.ok) return range;
    const daysOf = new Map<string, string[]>();
    for (const [country, rows] of range.byCountry) {
      const days = new Set(rows.filter(isCountryRate).map((r) => r.situationOn));
      for (const r of releases) if (r.country_code.toUpperCase() === country) days.add(r.valid_from);
      daysOf.set(country, [...days].filter((d) => d > today).sort());
    }
    const situations = new Map<string, Map<string, TedbRateRow[]>>();
    for (const day of [today, ...new Set([...daysOf.values()].flat())].sort()) {
      const answer = await situation({ situationOn: day });
      if (!answer.ok) return answer;
      situations.set(day, answer.byCountry);
    }
    return { ok: true as const, daysOf, situations };
  }

  /** The baseline of a country: the curated periods with its releases and overrides over them. */
  function baselineOf(code: string, known: readonly RateChangeRow[]): CountryRates | null {
    const shipped = deps.curated.countries.find((c) => c.country_code === code);
    if (!shipped) return null;
    const layered = layerChanges(
      { ...deps.curated, countries: [shipped] },
      changesOfRows(known.filter(isRelease)),
      overrides.filter((o) => o.country === code),
    );
    return layered.countries[0] ?? null;
  }

  /**
   * What TEDB's situation on `day` means for a country served as `country`. Today's situation is
   * dated by TEDB from the day it began (often years ago, and never before the period served); a
   * change that would therefore reach back before the sync's day in the country is held, except one
   * that returns to the baseline: that one applies from the sync's day, leaving the past as it was.
   */
  function propose(
    code: string,
    country: CountryRates,
    baseline: CountryRates | null,
    rows: readonly TedbRateRow[],
    day: { asked: string; today: string; ownToday: string },
  ): Proposal {
    const served = ratesOn(country, day.asked);
    const usable = rows.filter(isCountryRate);
    const began =
      day.asked === day.today
        ? (usable
            .map((r) => r.situationOn)
            .sort()
            .at(-1) ?? day.asked)
        : day.asked;
    const claimed = served && served.from > began ? served.from : began;
    if (usable.length === 0)
      return {
        kind: 'change',
        from: claimed,
        rates: null,
        reasons: [`TEDB has no rates for ${code} on ${day.asked}: the country would disappear`],
      };
    const mapped = ratesFromTedbRows(rows);
    if (mapped.kind === 'unusable')
      return {
        kind: 'change',
        from: claimed,
        rates: null,
        reasons: [`TEDB's rates for ${code} on ${day.asked} are not usable: ${mapped.reason}`],
      };
    const rates = mapped.rates;
    if (served && sameRates(ratesOf(served), rates)) return { kind: 'same', from: claimed };
    const baseOn = (d: string) => {
      const period = baseline ? ratesOn(baseline, d) : null;
      return period ? ratesOf(period) : null;
    };
    const from = firstDay({ claimed, today: day.ownToday, rates, baselineToday: baseOn(day.ownToday) });
    const reasons = holdReasons({
      country: code,
      from,
      rates,
      today: day.ownToday,
      baseline: baseOn(from > day.asked ? from : day.asked),
    });
    return { kind: 'change', from, rates, reasons };
  }

  /** A country's inserts and retirements for the situations TEDB answered. */
  function reconcile(
    code: string,
    country: CountryRates,
    known: readonly RateChangeRow[],
    answers: { daysOf: Map<string, string[]>; situations: Map<string, Map<string, TedbRateRow[]>> },
    at: { now: Date; today: string },
  ): { inserts: RateChangeRow[]; retire: Retirement[] } {
    const learntAt = at.now.toISOString();
    const ownToday = dayInZone(timeZoneOf(country.country_code), at.now.getTime()).day;
    const baseline = baselineOf(country.country_code, known);
    const inserts: RateChangeRow[] = [];
    const retire: Retirement[] = [];
    const confirmed = new Set<string>();
    for (const day of [at.today, ...(answers.daysOf.get(code) ?? [])]) {
      const rows = answers.situations.get(day)?.get(code) ?? [];
      const proposal = propose(code, country, baseline, rows, { asked: day, today: at.today, ownToday });
      // One change per first day (today's situation may apply from a day also asked about).
      if (confirmed.has(proposal.from)) continue;
      confirmed.add(proposal.from);
      if (proposal.kind === 'same') continue;
      const text = JSON.stringify(proposal.rates);
      const sameDay = (k: RateChangeRow) => k.valid_from === proposal.from;
      // Learnt before, whatever became of it (an operator's rejection stands): nothing new.
      if (
        known.some(
          (k) => sameDay(k) && k.rates === text && ['applied', 'held', 'rejected'].includes(k.status),
        )
      )
        continue;
      for (const k of known)
        if (sameDay(k) && (k.status === 'applied' || k.status === 'held') && !isRelease(k))
          retire.push({ id: k.id, status: 'superseded', at: learntAt });
      inserts.push({
        id: ids.uuid(),
        country_code: country.country_code,
        valid_from: proposal.from,
        rates: text,
        source: 'tedb',
        learnt_at: learntAt,
        status: proposal.reasons.length > 0 ? 'held' : 'applied',
        reason: proposal.reasons.length > 0 ? proposal.reasons.join('; ') : null,
        decided_at: null,
        decided_by: null,
      });
    }
    // What TEDB no longer reports is withdrawn: an announced change (it never applied) and a held one
    // of any day (it was never served). A release stays, and so does a change in force.
    for (const k of known) {
      const unserved = k.status === 'held' || (k.status === 'applied' && k.valid_from > at.today);
      if (unserved && !confirmed.has(k.valid_from) && !isRelease(k))
        retire.push({ id: k.id, status: 'withdrawn', at: learntAt });
    }
    return { inserts, retire };
  }

  async function run(): Promise<SyncOutcome> {
    const now = clock.now();
    const today = isoDate(now);
    const releases = (await repository.changes(['applied'])).filter(
      (r) => isRelease(r) && r.valid_from > today,
    );
    const answers = await ask(today, releases);
    if (!answers.ok) return { kind: 'failed', message: answers.message };
    const layered = deps.current();
    const inserts: RateChangeRow[] = [];
    const retire: Retirement[] = [];
    for (const code of asked) {
      const country = layered.countries.find((c) => c.country_code === code.toLowerCase());
      if (!country) continue;
      const known = await repository.changesFrom(country.country_code, '0000-01-01');
      const planned = reconcile(code, country, known, answers, { now, today });
      inserts.push(...planned.inserts);
      retire.push(...planned.retire);
    }
    await repository.record(inserts, retire);
    return {
      kind: 'synced',
      applied: inserts.filter((i) => i.status === 'applied').length,
      held: inserts.filter((i) => i.status === 'held').length,
      retired: retire.length,
    };
  }

  return { run };
}

export type RatesSync = ReturnType<typeof createRatesSync>;
