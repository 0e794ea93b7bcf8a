import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../../src/db/database.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { createKeyIn, createKillableService, type KillableService } from '../helpers/processes.js';

/**
 * An answer is sent only after its audit record is committed, so killing the server with SIGKILL
 * under load loses no record of any request a client got an answer to.
 */
describe('kill -9 under load loses no audit record of an answered request', () => {
  let service: KillableService;

  before(async () => {
    service = await createKillableService('audit-kill', {});
  });
  after(() => service.close());

  it('every answered validate and decide has its audit record after the kill', async () => {
    // A test key too: its calls write nothing but audit records, which are grouped into one insert
    // without a transaction around it; a live key's validations add answers and events.
    const testKey = createKeyIn(service.databaseUrl, 'test');
    const url = await service.start();
    const authOf = (i: number) => ({ authorization: `Bearer ${i % 2 === 0 ? service.key : testKey}` });
    // Cache hits for one number (answered once first), live look-ups for the others.
    const fresh = wellFormedNumbers('DE', 400, 5_000);
    const warm = await fetch(`${url}/v1/validate?vat_number=DE100000008`, { headers: authOf(0) });
    assert.equal(warm.status, 200);

    const answered: Array<{ id: string; endpoint: string; mode: 'live' | 'test' }> = [];
    let failedAfterKill = 0;
    let killed = false;
    const call = async (i: number): Promise<void> => {
      const auth = authOf(i);
      const decide = i % 5 === 0;
      const vat = i % 3 === 0 ? (fresh[i % fresh.length] ?? 'DE100000008') : 'DE100000008';
      try {
        const res = decide
          ? await fetch(`${url}/v1/decide`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ seller_vat: 'DE100000008', buyer_country: 'FR', supply_type: 'goods' }),
            })
          : await fetch(`${url}/v1/validate?vat_number=${vat}`, { headers: auth });
        const body = (await res.json()) as { meta?: { request_id?: string } };
        if (res.status === 200 && body.meta?.request_id) {
          answered.push({
            id: body.meta.request_id,
            endpoint: decide ? 'decide' : 'validate',
            mode: i % 2 === 0 ? 'live' : 'test',
          });
        }
      } catch {
        // The connection died with the server: no answer, so no record is owed.
        if (killed) failedAfterKill += 1;
        else throw new Error('a request failed before the kill');
      }
    };
    const workers = Array.from({ length: 32 }, async (_, w) => {
      for (let i = w; !killed; i += 32) await call(i);
    });
    while (answered.length < 400) await sleep(10);
    killed = true;
    await service.stop('SIGKILL');
    await Promise.all(workers);

    const db = createDatabase(service.databaseUrl);
    try {
      const stored = new Map(
        (await db.kysely.selectFrom('audits').select(['request_id', 'endpoint']).execute()).map((r) => [
          r.request_id,
          r.endpoint,
        ]),
      );
      const missing = answered
        .filter((a) => stored.get(a.id) !== a.endpoint)
        .map(({ id, endpoint }) => ({ id, endpoint }));
      assert.deepEqual(
        missing,
        [],
        `${missing.length} of ${answered.length} answered requests have no audit record`,
      );
      assert.ok(answered.some((a) => a.endpoint === 'decide'));
      assert.ok(answered.some((a) => a.mode === 'test' && a.endpoint === 'validate'));
      assert.ok(answered.some((a) => a.mode === 'live' && a.endpoint === 'validate'));
      assert.ok(
        answered.length >= 400,
        `${answered.length} answered, ${failedAfterKill} cut off by the kill`,
      );
    } finally {
      await db.close();
    }
  });
});
