import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../../src/db/database.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { createKillableService, type KillableService } from '../helpers/processes.js';

describe('a batch job survives kill -9 of the server mid-way', () => {
  let service: KillableService;
  let key: string;
  let databaseUrl: string;
  let calls: Map<string, number>;

  before(async () => {
    // Leases long enough that no item claimed before the kill is claimed again while its first
    // look-up still runs, on a loaded machine (1 s was seen to expire under a whole suite's load),
    // and short enough that the restarted server takes the killed one's items over soon.
    service = await createKillableService('batch-recovery', {
      OPENVAT_BATCH_LEASE_MS: '3000',
    });
    ({ key, databaseUrl, calls } = service);
  });
  after(() => service.close());

  const start = () => service.start();

  async function job(url: string, id: string) {
    const res = await fetch(`${url}/v1/validate/batch/${id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.status, 200);
    return (
      (await res.json()) as {
        data: {
          status: string;
          done: number;
          results?: Array<{ ok: boolean; data?: { vat_number: string; valid: boolean } }>;
        };
      }
    ).data;
  }

  it('no finished item is validated again and no result is lost', async () => {
    const numbers = wellFormedNumbers('DE', 300, 1_000);
    // A requester makes every look-up live (never from the cache), so any repeat would reach the registry.
    const requester = wellFormedNumbers('DE', 50, 9_000).find((vat) => {
      const expected = expectedViesAnswer('DE', vat.slice(2));
      return 'valid' in expected && expected.valid;
    });
    let url = await start();
    const created = await fetch(`${url}/v1/validate/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ vat_numbers: numbers, requester_vat_number: requester, async: true }),
    });
    assert.equal(created.status, 202);
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    while ((await job(url, id)).done < 100) await sleep(50);
    await service.stop('SIGKILL');

    const db = createDatabase(databaseUrl);
    const finished = await db.kysely
      .selectFrom('batch_items')
      .select('vat_number')
      .where('job_id', '=', id)
      .where('status', '=', 'done')
      .execute();
    await db.close();
    assert.ok(finished.length >= 100 && finished.length < 300, `${finished.length} finished before the kill`);
    const atKill = new Map(finished.map((r) => [r.vat_number, calls.get(r.vat_number) ?? 0]));

    url = await start();
    let data = await job(url, id);
    while (data.status !== 'completed') {
      await sleep(100);
      data = await job(url, id);
    }
    await service.stop('SIGTERM');

    for (const [vat, count] of atKill) {
      assert.equal(count, 1, `${vat} was asked once before the kill`);
      assert.equal(calls.get(vat), 1, `${vat} finished before the kill and was validated again`);
    }
    const results = data.results ?? [];
    assert.equal(results.length, 300);
    results.forEach((item, i) => {
      const vat = numbers[i] as string;
      assert.equal(item.ok, true, vat);
      assert.equal(item.data?.vat_number, vat);
      const expected = expectedViesAnswer('DE', vat.slice(2));
      assert.ok('valid' in expected);
      assert.equal(item.data?.valid, expected.valid);
      assert.ok((calls.get(vat) ?? 0) >= 1);
    });
  });
});
