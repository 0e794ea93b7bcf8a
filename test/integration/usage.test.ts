import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import type { ApiKeyPrincipal } from '../../src/modules/keys/service.js';
import { createUsageRepository, type UsageRepository } from '../../src/modules/usage/repository.js';
import { createUsageService } from '../../src/modules/usage/service.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const principal = (id: string): ApiKeyPrincipal => ({
  id,
  accountId: 'acct',
  plan: 'pro',
  mode: 'live',
  defaultRequesterVat: null,
});

const limits = { free: 1, starter: 2, pro: 3, business: 4 };

for (const target of await databaseTargets()) {
  describe(`usage counts on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let repository: UsageRepository;
    before(async () => {
      db = await target.open();
      repository = createUsageRepository(db.kysely);
    });
    after(() => db.dispose());

    it('adds each write to the stored counts, per key, day and operation', async () => {
      const clock = createManualClock('2026-11-20T23:59:59.000Z');
      const usage = createUsageService({ repository, clock, requestsPerMinute: limits });
      usage.record('k1', 'validate', 200);
      usage.record('k1', 'validate', 503);
      usage.record('k2', 'validate', 200);
      clock.set('2026-11-21T00:00:00.000Z');
      usage.record('k1', 'validate', 200);
      usage.record('k1', 'batch', 400);
      await usage.flush();
      usage.record('k1', 'validate', 429);
      await usage.flush();
      await usage.flush(); // nothing pending: no write, no change
      const rows = await repository.list('k1', '2026-11-01', '2026-11-30');
      assert.deepEqual(
        rows.map((r) => [r.day, r.operation, r.requests, r.errors]),
        [
          ['2026-11-20', 'validate', 2, 1],
          ['2026-11-21', 'batch', 1, 1],
          ['2026-11-21', 'validate', 2, 1],
        ],
      );
      assert.deepEqual(
        (await repository.list('k2', '2026-11-01', '2026-11-30')).map((r) => r.requests),
        [1],
      );
    });

    it('reports the last days with every day listed, totals and operations', async () => {
      const clock = createManualClock('2026-11-22T08:00:00.000Z');
      const usage = createUsageService({ repository, clock, requestsPerMinute: limits });
      for (let i = 0; i < 5; i++) usage.record('k1', 'decide', 200);
      const report = await usage.report(principal('k1'), 3);
      assert.equal(report.from, '2026-11-20');
      assert.equal(report.to, '2026-11-22');
      assert.equal(report.requests_per_minute, 3);
      assert.deepEqual(report.daily, [
        { date: '2026-11-20', requests: 2, errors: 1 },
        { date: '2026-11-21', requests: 3, errors: 2 },
        { date: '2026-11-22', requests: 5, errors: 0 },
      ]);
      assert.deepEqual(report.totals, { requests: 10, errors: 3 });
      assert.deepEqual(report.operations, [
        { operation: 'decide', requests: 5, errors: 0 },
        { operation: 'validate', requests: 4, errors: 2 },
        { operation: 'batch', requests: 1, errors: 1 },
      ]);
      const shorter = await usage.report(principal('k1'), 1);
      assert.deepEqual(shorter.daily, [{ date: '2026-11-22', requests: 5, errors: 0 }]);
    });

    it('keeps the counts of a failed write for the next one', async () => {
      const clock = createManualClock('2026-11-22T09:00:00.000Z');
      let fail = true;
      const flaky: UsageRepository = {
        ...repository,
        add: (counts) => (fail ? Promise.reject(new Error('database down')) : repository.add(counts)),
      };
      const usage = createUsageService({ repository: flaky, clock, requestsPerMinute: limits });
      usage.record('k3', 'confirm', 200);
      await assert.rejects(usage.flush(), /database down/);
      usage.record('k3', 'confirm', 200);
      // Still unwritten, the counts are in the key's report.
      assert.equal((await usage.report(principal('k3'), 1)).totals.requests, 2);
      fail = false;
      await usage.flush();
      assert.deepEqual(
        (await repository.list('k3', '2026-11-22', '2026-11-22')).map((r) => r.requests),
        [2],
      );
    });
  });
}
