/**
 * `rates.changed`: every change of the rates in force that an instance notices (on each reload) is
 * stored once under its key (country, first day, kind, rates), whichever instance notices it first,
 * and its webhook deliveries are queued in the same transaction, through the outbox.
 */
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { Outbox } from '../outbox/index.js';
import { learntChange, periodsStarted, type RatesChange, ratesChangedPayload, ratesKey } from './events.js';
import type { LayeredDataset } from './layers.js';
import type { RateChangeRow, RatesRepository } from './repository.js';

const CHECK_ID = 'rates.changed';

export function createRatesChangedPublisher(deps: {
  repository: RatesRepository;
  outbox: Pick<Outbox, 'record'>;
  clock: Clock;
  ids: IdGenerator;
}) {
  const { repository, outbox, clock, ids } = deps;

  async function publish(change: RatesChange): Promise<boolean> {
    return outbox.record({
      own: async (trx) => {
        const id = ids.uuid();
        const createdAt = clock.now().toISOString();
        const payload = ratesChangedPayload(change, id);
        const stored = await repository.insertEvent(
          {
            id,
            country_code: change.country.country_code,
            effective_from: change.effectiveFrom,
            kind: change.kind,
            rates: ratesKey(change),
            source: change.source,
            payload,
            created_at: createdAt,
          },
          trx,
        );
        return stored ? { broadcasts: [{ id, type: 'rates.changed', payload, createdAt }] } : false;
      },
    });
  }

  return {
    /**
     * Publishes what changed: the learnt changes applied or accepted since the watch began (when
     * `applied` is given: the served changes were just reloaded), and the periods that started since
     * the last look. Returns how many events this call stored.
     */
    async check(input: {
      layered: LayeredDataset;
      applied: readonly RateChangeRow[] | null;
      /** The dataset without one learnt change. */
      without(id: string): LayeredDataset;
    }): Promise<number> {
      const now = clock.now();
      const mark = await repository.eventCheck(CHECK_ID, now.toISOString());
      const changes: RatesChange[] = [];
      for (const row of input.applied ?? []) {
        if ((row.decided_at ?? row.learnt_at) < mark.since) continue;
        const change = learntChange(
          input.layered,
          () => input.without(row.id),
          { country: row.country_code, from: row.valid_from },
          now.getTime(),
        );
        if (change) changes.push(change);
      }
      changes.push(...periodsStarted(input.layered, Date.parse(mark.checked_at), now.getTime()));
      const seen = new Set<string>();
      let stored = 0;
      for (const change of changes) {
        const key = `${change.country.country_code}|${change.effectiveFrom}|${change.kind}|${ratesKey(change)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (await publish(change)) stored += 1;
      }
      await repository.advanceEventCheck(CHECK_ID, now.toISOString());
      return stored;
    },
  };
}

export type RatesChangedPublisher = ReturnType<typeof createRatesChangedPublisher>;
