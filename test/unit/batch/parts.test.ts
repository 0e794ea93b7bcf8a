import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BatchItemsTable } from '../../../src/db/schema.js';
import { createManualClock } from '../../../src/lib/clock.js';
import type { BatchRepository } from '../../../src/modules/batch/repository.js';
import { countSource, itemResult, rollup, type SourceCounts } from '../../../src/modules/batch/results.js';
import { createItemScheduler } from '../../../src/modules/batch/scheduler.js';
import { answerRefusal } from '../../../src/modules/validation/index.js';

describe('batch results', () => {
  it('rolls the per-registry counts up into the hosted meta: most answers, worst status, cached only when none was live', () => {
    const sources: SourceCounts = {};
    countSource(sources, 'vies', 'cached');
    countSource(sources, 'vies', 'cached');
    countSource(sources, 'hmrc', 'live');
    assert.deepEqual(rollup(sources), { cached: false, source: 'vies', source_status: 'cached' });
    countSource(sources, 'hmrc', 'degraded');
    countSource(sources, 'hmrc', 'degraded');
    assert.deepEqual(rollup(sources), { cached: false, source: 'hmrc', source_status: 'degraded' });
    assert.deepEqual(rollup({ vies: { live: 0, cached: 2, degraded: 0 } }), {
      cached: true,
      source: 'vies',
      source_status: 'cached',
    });
    assert.deepEqual(rollup({}), { cached: false, source: 'vies', source_status: 'live' });
  });

  it('an item fails with one of the three codes of the hosted contract', () => {
    assert.deepEqual(
      itemResult(answerRefusal({ kind: 'requester_rejected', source: 'vies', message: 'no' })),
      {
        ok: false,
        error: { code: 'invalid_format', message: 'no' },
      },
    );
    assert.deepEqual(
      itemResult(answerRefusal({ kind: 'rate_limited', message: 'later', retryAfterSeconds: 1 })),
      {
        ok: false,
        error: { code: 'registry_unavailable', message: 'later' },
      },
    );
  });
});

describe('the item scheduler', () => {
  const item = (id: string, country: string, job = 'job-1'): BatchItemsTable => ({
    id,
    job_id: job,
    position: 0,
    vat_number: `${country}123`,
    claim: null,
    country,
    rank: 0,
    status: 'pending',
    ok: null,
    result: null,
    source: null,
    attempts: 0,
    next_attempt_at: '2026-11-23T10:00:00.000Z',
    retry_until: null,
    last_error: null,
    locked_until: null,
    claimed_by: null,
    finished_at: null,
  });

  function scheduler(due: BatchItemsTable[]) {
    const released: string[] = [];
    const claims: Array<{ limit: number; skipCountries: string[] }> = [];
    const repository = {
      async claimDue(input: { limit: number; skipCountries: string[] }) {
        claims.push({ limit: input.limit, skipCountries: [...input.skipCountries] });
        return due.splice(0, input.limit);
      },
      async release(ids: string[]) {
        released.push(...ids);
      },
      async markRunning() {},
      async stalledJobs() {
        return [];
      },
    } as unknown as BatchRepository;
    const s = createItemScheduler({
      repository,
      clock: createManualClock('2026-11-23T10:00:00Z'),
      workerId: 'w',
      leaseMs: 1_000,
      perCountryInFlight: 2,
      finishJob: async () => {},
    });
    return { s, released, claims };
  }

  it('holds at most perCountryInFlight items of one country and gives the excess back', async () => {
    const { s, released, claims } = scheduler([
      item('a', 'DE'),
      item('b', 'DE'),
      item('c', 'DE'),
      item('d', 'FR'),
    ]);
    const kept = await s.claimDue(10);
    assert.deepEqual(
      kept.map((i) => i.id),
      ['a', 'b', 'd'],
    );
    assert.deepEqual(released, ['c'], 'the third DE item goes back to the queue');
    assert.ok(s.holdsItemsOf('job-1'));
    await s.claimDue(10);
    assert.deepEqual(claims[1]?.skipCountries, ['DE'], 'a full country is not claimed again');
    for (const i of kept) s.release(i);
    assert.equal(s.holdsItemsOf('job-1'), false, 'released items are no longer held');
  });

  it('does not repeat a claim that found only full countries until work is queued', async () => {
    const { s, claims } = scheduler([item('a', 'DE'), item('b', 'DE')]);
    await s.claimDue(10);
    await s.claimDue(10); // DE full: finds nothing, remembers it
    const before = claims.length;
    await s.claimDue(10);
    assert.equal(claims.length, before, 'skipped: the same countries are still full');
    s.wake();
    await s.claimDue(10);
    assert.equal(claims.length, before + 1, 'new work makes it look again');
  });
});
