/**
 * The rates sync: asks TEDB for the member states' rates from today through a year ahead, and keeps
 * what differs from what openvat would serve as effective-dated changes (`rate_changes`), layered over
 * the curated dataset. A change that looks wrong is held for an operator instead of applied. A sync
 * that cannot read a whole answer (a fault, something that is not XML, a member state without rows, a
 * timeout) changes nothing and says why.
 */

import type { Clock } from '../../lib/clock.js';
import { isoDate } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { TedbClient, TedbRateRow } from '../../registries/tedb.js';
import { ratesOn } from './dataset.js';
import { type LayeredDataset, type PeriodRates, ratesOf, sameRates } from './layers.js';
import type { RateChangeRow, RatesRepository } from './repository.js';
import { isCountryRate, ratesFromTedbRows } from './tedb-rules.js';

/** A standard rate that moves by more than this many points is held for an operator. */
export const MAX_STANDARD_MOVE = 5;

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
  /** The rates openvat serves now (curated + applied changes). */
  current(): LayeredDataset;
  /** The member states TEDB is asked about, lower case as in the dataset (`gr` for Greece). */
  countries: readonly string[];
  /** Days ahead to ask for (announced changes); 365 by default. */
  horizonDays?: number;
}

function addDays(day: string, days: number): string {
  return isoDate(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));
}

export function createRatesSync(deps: RatesSyncDeps) {
  const { client, repository, clock, ids } = deps;
  const horizon = deps.horizonDays ?? 365;
  const asked = deps.countries.map((c) => c.toUpperCase());

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

  async function run(): Promise<SyncOutcome> {
    const now = clock.now();
    const today = isoDate(now);
    const range = await situation({ from: today, to: addDays(today, horizon) });
    if (!range.ok) return { kind: 'failed', message: range.message };
    // The days a country's rates change within the horizon: each is asked for as a whole situation.
    const changeDays = new Map<string, string[]>();
    for (const [country, rows] of range.byCountry) {
      const days = [...new Set(rows.filter(isCountryRate).map((r) => r.situationOn))].filter(
        (d) => d > today,
      );
      changeDays.set(country, days.sort());
    }
    const days = [today, ...new Set([...changeDays.values()].flat())].sort();
    const situations = new Map<string, Map<string, TedbRateRow[]>>();
    for (const day of days) {
      const answer = await situation({ situationOn: day });
      if (!answer.ok) return { kind: 'failed', message: answer.message };
      situations.set(day, answer.byCountry);
    }

    const layered = deps.current();
    const learntAt = now.toISOString();
    const inserts: RateChangeRow[] = [];
    const retire: { id: string; status: 'superseded' | 'withdrawn'; at: string }[] = [];
    for (const code of asked) {
      const country = layered.countries.find((c) => c.country_code === code.toLowerCase());
      if (!country) continue;
      const known = await repository.changesFrom(country.country_code, '0000-01-01');
      const confirmed = new Set<string>();
      for (const day of [today, ...(changeDays.get(code) ?? [])]) {
        const rows = situations.get(day)?.get(code) ?? [];
        const served = ratesOn(country, day);
        const usable = rows.filter(isCountryRate);
        // The day this situation began: TEDB's own date for today's, never before the period served.
        const began =
          day === today
            ? (usable
                .map((r) => r.situationOn)
                .sort()
                .at(-1) ?? today)
            : day;
        const validFrom = served && served.from > began ? served.from : began;
        const mapped = ratesFromTedbRows(rows);
        let rates: PeriodRates | null = null;
        let hold: string | null = null;
        if (usable.length === 0) {
          hold = `TEDB has no rates for ${code} on ${day}: the country would disappear`;
        } else if (mapped.kind === 'unusable') {
          hold = `TEDB's rates for ${code} on ${day} are not usable: ${mapped.reason}`;
        } else {
          rates = mapped.rates;
          if (served && sameRates(ratesOf(served), rates)) {
            confirmed.add(validFrom);
            continue;
          }
          if (served && Math.abs(rates.standard_rate - served.standard_rate) > MAX_STANDARD_MOVE) {
            hold = `the standard rate of ${code} would move by more than ${MAX_STANDARD_MOVE} points (${served.standard_rate}% → ${rates.standard_rate}%)`;
          }
        }
        confirmed.add(validFrom);
        const text = JSON.stringify(rates);
        // Learnt before, whatever became of it (an operator's rejection stands): nothing new.
        if (
          known.some(
            (k) =>
              k.valid_from === validFrom &&
              k.rates === text &&
              ['applied', 'held', 'rejected'].includes(k.status),
          )
        )
          continue;
        for (const k of known) {
          if (k.valid_from === validFrom && (k.status === 'applied' || k.status === 'held')) {
            retire.push({ id: k.id, status: 'superseded', at: learntAt });
          }
        }
        inserts.push({
          id: ids.uuid(),
          country_code: country.country_code,
          valid_from: validFrom,
          rates: text,
          source: 'tedb',
          learnt_at: learntAt,
          status: hold ? 'held' : 'applied',
          reason: hold,
          decided_at: null,
          decided_by: null,
        });
      }
      // An announced change TEDB no longer reports is withdrawn (it never applied).
      for (const k of known) {
        if (
          k.valid_from > today &&
          !confirmed.has(k.valid_from) &&
          (k.status === 'applied' || k.status === 'held')
        ) {
          retire.push({ id: k.id, status: 'withdrawn', at: learntAt });
        }
      }
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
