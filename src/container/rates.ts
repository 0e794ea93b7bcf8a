import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import type { Outbox } from '../modules/outbox/index.js';
import type { RatesDataset } from '../modules/rates/dataset.js';
import type { AppliedChange } from '../modules/rates/layers.js';
import { createRatesChangedPublisher } from '../modules/rates/publish.js';
import { createRatesRepository } from '../modules/rates/repository.js';
import type { RatesService } from '../modules/rates/service.js';
import { createRatesSync } from '../modules/rates/sync.js';
import { createRatesUpdates, type RatesUpdates } from '../modules/rates/updates.js';
import { createTedbClient, type TedbClient } from '../registries/tedb.js';

/** How long one TEDB call may take: a year of rates for 27 member states is a large answer. */
const TEDB_TIMEOUT_MS = 60_000;

/**
 * The rates that stay current: the TEDB client and sync (none when `OPENVAT_TEDB_URL=off`) and the
 * updates that serve what was learnt, over the curated dataset.
 */
export function createRatesUpdatesFor(deps: {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  curated: RatesDataset;
  overrides: readonly AppliedChange[];
  rates: RatesService;
  /** Where `rates.changed` events and their webhook deliveries are written. */
  outbox: Outbox;
  /** The TEDB client (default: the real one at `OPENVAT_TEDB_URL`). */
  tedb?: TedbClient;
}): RatesUpdates {
  const { config, log, db, clock, ids, curated, rates } = deps;
  const repository = createRatesRepository(db.kysely, db.dialect);
  const client =
    deps.tedb ??
    (config.tedbUrl ? createTedbClient({ url: config.tedbUrl, timeoutMs: TEDB_TIMEOUT_MS }) : null);
  // The member states TEDB knows (Northern Ireland's `xi` follows the United Kingdom's rates).
  const countries = curated.countries
    .filter((c) => c.is_eu_member && c.country_code !== 'xi')
    .map((c) => c.country_code);
  const sync = client
    ? createRatesSync({
        client,
        repository,
        clock,
        ids,
        countries,
        current: () => rates.layered(),
        curated,
        overrides: deps.overrides,
      })
    : null;
  return createRatesUpdates({
    curated,
    overrides: deps.overrides,
    rates,
    repository,
    sync,
    clock,
    workerId: ids.uuid(),
    publisher: createRatesChangedPublisher({ repository, outbox: deps.outbox, clock, ids }),
    onPublishError: (error) =>
      log.error({ err: error }, 'publishing rates.changed failed; it is tried again at the next reload'),
    // A failed run is tried again (an offline start included) and the rates in force are served
    // meanwhile: a warning that says when, not an error.
    onSynced: (outcome, nextRunAt) => {
      if (outcome.kind === 'failed')
        log.warn(
          { rates_sync: outcome, next_run_at: nextRunAt },
          `rates sync changed nothing: ${outcome.message}; the rates known so far are served, and it is tried again at ${nextRunAt}`,
        );
      else log.info({ rates_sync: outcome }, 'rates sync done');
    },
  });
}
