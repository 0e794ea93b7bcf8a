import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { PLAYGROUND_KEY } from '../../src/modules/playground/playground.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const demo = { authorization: `Bearer ${PLAYGROUND_KEY}` };

/** What the public demo key stores is kept 24 hours, not a plan's retention (or 10 years). */
describe("the playground demo key's rows expire after 24 hours", () => {
  const clock = createManualClock('2026-11-22T12:00:00.000Z');
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ OPENVAT_CONFIRM_BURST: '1000' }, { clock });
  });
  after(() => t.close());

  it('confirmations and audit records: served for 24 hours, then 404; a key of its own keeps 10 years', async () => {
    const confirm = (headers: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers,
        remoteAddress: '198.51.100.7',
        payload: {
          vat_number: 'ATU12345678',
          requester_vat_number: 'DE136695976',
          company: { name: 'Beispiel GmbH', town: 'Wien' },
        },
      });
    const res = await confirm(demo);
    assert.equal(res.statusCode, 200, res.body);
    const { confirmation_id: id } = res.json().data as { confirmation_id: string };
    const requestId = res.json().meta.request_id as string;
    const own = await t.key('business', 'test');
    const kept = await confirm(own.headers);
    assert.equal(kept.statusCode, 200, kept.body);

    const rows = await t.container.db.kysely
      .selectFrom('confirmations')
      .select(['id', 'retain_until'])
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.retain_until),
      ['2026-11-23T12:00:00.000Z', '2036-11-22T12:00:00.000Z'],
    );
    const audit = await t.container.db.kysely
      .selectFrom('audits')
      .select('expires_at')
      .where('request_id', '=', requestId)
      .executeTakeFirstOrThrow();
    assert.equal(audit.expires_at, '2026-11-23T12:00:00.000Z');

    const get = (url: string) =>
      t.app.inject({ method: 'GET', url, headers: demo, remoteAddress: '198.51.100.8' });
    assert.equal((await get(`/v1/confirmations/${id}`)).statusCode, 200);
    assert.equal((await get(`/v1/audits/${requestId}`)).statusCode, 200);
    clock.advance(86_400_000);
    assert.equal((await get(`/v1/confirmations/${id}`)).statusCode, 404);
    assert.equal((await get(`/v1/audits/${requestId}`)).statusCode, 404);
    const ownId = kept.json().data.confirmation_id as string;
    const still = await t.app.inject({
      method: 'GET',
      url: `/v1/confirmations/${ownId}`,
      headers: own.headers,
    });
    assert.equal(still.statusCode, 200);
    // The evidence chain is untouched: expiring is not deleting.
    assert.equal((await t.container.confirmations.verifyChain()).ok, true);
  });

  it("the audit records of its stored work (a batch job, a monitor's checks): served for 24 hours, then 404", async () => {
    const post = (url: string, payload: object) =>
      t.app.inject({ method: 'POST', url, headers: demo, remoteAddress: '198.51.100.9', payload });
    const job = await post('/v1/validate/batch', { vat_numbers: ['DE100000008'], async: true });
    assert.equal(job.statusCode, 202, job.body);
    await t.container.batchWorker.drain();
    const monitor = await post('/v1/monitors', { vat_number: 'DE100000008', interval: 'daily' });
    assert.equal(monitor.statusCode, 201, monitor.body);
    const ids = [job.json().meta.request_id as string, monitor.json().data.check.request_id as string];
    const expiries = await t.container.db.kysely
      .selectFrom('audits')
      .select(['endpoint', 'expires_at'])
      .where('request_id', 'in', ids)
      .orderBy('endpoint')
      .execute();
    const tomorrow = new Date(clock.millis() + 86_400_000).toISOString();
    assert.deepEqual(expiries, [
      { endpoint: 'monitor_check', expires_at: tomorrow },
      { endpoint: 'validate_batch', expires_at: tomorrow },
    ]);
    const get = (id: string) =>
      t.app.inject({ method: 'GET', url: `/v1/audits/${id}`, headers: demo, remoteAddress: '198.51.100.10' });
    for (const id of ids) assert.equal((await get(id)).statusCode, 200);
    clock.advance(86_400_000);
    for (const id of ids) assert.equal((await get(id)).statusCode, 404);
  });
});
