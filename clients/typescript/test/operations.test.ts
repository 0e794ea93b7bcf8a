import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/fakes/webhook-receiver.js';
import { isUuidV7, type TestKey } from '../../../test/helpers/app.js';
import { type BatchJob, OpenVat, type VatNumberChangedEvent, verifyWebhook } from '../src/index.js';

/** `true` only when the key sets A and B are the same (a compile-time check). */
type ExactKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

import { freePort } from './ports.js';
import { REQUESTER, type RunningService, startService } from './service.js';

const MUSTERHAUS = {
  name: 'Musterhaus GmbH & Co KG',
  street: 'Musterstrasse 22',
  postcode: '12345',
  town: 'musterort',
};

/** Every operation of the client against the real service (test keys, and live keys on the simulators). */
describe('@openvat/client operations', () => {
  let service: RunningService;
  let receiver: WebhookReceiver;
  let proTest: TestKey;
  let proLive: TestKey;
  let businessLive: TestKey;
  const client = (key: TestKey, extra: Partial<ConstructorParameters<typeof OpenVat>[0]> = {}) =>
    new OpenVat({ baseUrl: service.baseUrl, apiKey: key.key, ...extra });
  /** A live Business client that records the Idempotency-Key of every request it sends. */
  function recordingIdempotencyKeys() {
    const sent: Array<string | null> = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers).get('idempotency-key'));
      return fetch(input, init);
    };
    return { sent, openvat: client(businessLive, { fetch: recording }) };
  }

  before(async () => {
    service = await startService();
    receiver = await startWebhookReceiver({ port: await freePort() });
    proTest = await service.t.key('pro', 'test');
    proLive = await service.t.key('pro', 'live');
    businessLive = await service.t.key('business', 'live', { defaultRequesterVat: REQUESTER });
  });
  after(async () => {
    await service.close();
    await receiver.close();
  });

  it('validate: a test key gets the magic answer, in the { data, meta } envelope', async () => {
    const res = await client(proTest).validate({ vat_number: 'de 100 000 008' });
    assert.equal(res.data.vat_number, 'DE100000008');
    assert.equal(res.data.valid, true);
    assert.ok(res.data.company?.name);
    assert.ok(isUuidV7(res.meta.request_id));
  });

  it('validate: include peppol adds data.peppol (the Peppol data, or its error alone)', async () => {
    const res = await client(proTest).validate({ vat_number: 'BE0999000030', include: ['peppol'] });
    assert.equal(res.data.valid, true);
    const part = res.data.peppol;
    assert.ok(part && !('error' in part), JSON.stringify(part));
    assert.equal(part.reachable, true);
    assert.equal(part.participants[0]?.sml_status, 'ok');
    const plain = await client(proTest).validate({ vat_number: 'BE0999000030' });
    assert.equal(plain.data.peppol, undefined);
  });

  it('validate: company fields answer data.match', async () => {
    const res = await client(proTest).validate({
      vat_number: 'DE100000008',
      company_name: 'Testfirma Muster GmbH',
      company_city: 'Hamburg',
    });
    assert.deepEqual(res.data.match?.name, { result: 'match', score: 1, registry_result: null });
    assert.equal(res.data.match?.city?.result, 'mismatch');
    assert.equal(res.data.match?.street, undefined);
    const batch = await client(proTest).validateBatch({
      vat_numbers: ['DE100000008', { vat_number: 'DE110000001', company_name: 'Testfirma Muster GmbH' }],
    });
    const [plain, claimed] = batch.data.results;
    assert.ok(plain?.ok && plain.data.match === undefined);
    assert.ok(claimed?.ok && claimed.data.match?.name?.registry_result === 'match');
  });

  it('validate: a live key asks the registry simulator, and cache: false forces a live call', async () => {
    const openvat = client(proLive);
    const first = await openvat.validate({ vat_number: 'DE136695976', cache: false });
    assert.equal(first.data.vat_number, 'DE136695976');
    assert.equal(first.meta.source_status, 'live');
    const cached = await openvat.validate({ vat_number: 'DE136695976' });
    assert.equal(cached.meta.source_status, 'cached');
    const forced = await openvat.validate({ vat_number: 'DE136695976', cache: false });
    assert.equal(forced.meta.source_status, 'live');
    // The live answer is audited: the audit record is found by its request id.
    const audit = await openvat.audits.get(first.meta.request_id);
    assert.equal(audit.data.request_id, first.meta.request_id);
  });

  it('validateBatch answers every number in order', async () => {
    const res = await client(proTest).validateBatch({ vat_numbers: ['DE100000008', 'DE300000002', 'XX1'] });
    assert.deepEqual(res.data.summary, { total: 3, successful: 2, failed: 1 });
    const [a, b, c] = res.data.results;
    assert.ok(a?.ok && a.data.valid === true);
    assert.ok(b?.ok && b.data.valid === false);
    assert.ok(c && !c.ok && c.error.code === 'invalid_format');
  });

  it('decide answers a B2B sale', async () => {
    const res = await client(proTest).decide({ seller_vat: 'DE136695976', buyer_vat: 'FR40303265045' });
    assert.equal(res.data.customer_type, 'business');
    assert.equal(res.data.charge_vat, false);
    assert.ok(isUuidV7(res.meta.request_id));
  });

  it('confirm sends an Idempotency-Key by itself; the same key replays the same confirmation', async () => {
    const { sent, openvat } = recordingIdempotencyKeys();
    const body = { vat_number: 'ATU12345678', company: MUSTERHAUS };
    const first = await openvat.confirm(body);
    assert.equal(first.data.vat_number, 'ATU12345678');
    assert.match(sent[0] ?? '', /^[0-9a-f-]{36}$/);
    const again = await openvat.confirm(body, { idempotencyKey: sent[0] ?? '' });
    assert.equal(again.data.confirmation_id, first.data.confirmation_id);
    const other = await openvat.confirm(body);
    assert.notEqual(sent[2], sent[0]);
    assert.notEqual(other.data.confirmation_id, first.data.confirmation_id);

    const stored = await openvat.confirmations.get(first.data.confirmation_id);
    assert.equal(stored.data.confirmation_id, first.data.confirmation_id);
    assert.equal(stored.data.mode, 'live');
  });

  it('rates.list and rates.get', async () => {
    const openvat = client(proTest);
    const all = await openvat.rates.list();
    assert.ok(all.data.some((rate) => rate.country_code === 'de'));
    const de = await openvat.rates.get('de', { date: '2021-01-01' });
    assert.equal(de.data.country_code, 'de');
    assert.equal(de.data.standard_rate, 19);
  });

  it('status lists the registries after a live call', async () => {
    await client(proLive).validate({ vat_number: 'DE136695976', cache: false });
    const res = await client(proTest).status();
    assert.ok(isUuidV7(res.meta.request_id));
    const vies = res.data.registries.find((r) => r.registry === 'vies');
    assert.ok(vies, JSON.stringify(res.data));
    assert.equal(vies.breaker, 'closed');
    assert.ok(vies.last_success_at);
  });

  it('health answers { ok: true } in the envelope', async () => {
    const res = await client(proTest).health();
    assert.deepEqual(res.data, { ok: true });
    assert.equal(typeof res.meta.request_id, 'string');
  });

  it('usage.get reports the calls of the key', async () => {
    const openvat = client(proTest);
    await openvat.validate({ vat_number: 'DE100000008' });
    const usage = await openvat.usage.get();
    assert.ok(isUuidV7(usage.meta.request_id));
    assert.ok(usage.data);
  });

  it('webhooks: create, list, test (a signed delivery), update, deliveries, delete', async () => {
    const openvat = client(proTest);
    const created = await openvat.webhooks.create({ url: `${receiver.origin}/hooks` });
    assert.match(created.data.secret, /^whsec_/);
    assert.ok(isUuidV7(created.meta.request_id));
    const listed = await openvat.webhooks.list();
    assert.deepEqual(
      listed.data.map((w) => w.id),
      [created.data.id],
    );

    const before = receiver.received.length;
    const tested = await openvat.webhooks.test(created.data.id);
    assert.equal(tested.data.delivered, true);
    assert.equal(tested.data.status, 200);
    const delivery = receiver.received[before];
    assert.ok(delivery);
    const event = await verifyWebhook(delivery.body, delivery.headers, created.data.secret);
    assert.equal(event.event, 'test');
    if (event.event === 'test') assert.equal(event.data.data.webhook_id, created.data.id);

    const disabled = await openvat.webhooks.update(created.data.id, { disabled: true });
    assert.equal(disabled.data.disabled, true);
    const deliveries = await openvat.webhooks.deliveries(created.data.id, { limit: '10' });
    assert.ok(Array.isArray(deliveries.data));

    const deleted = await openvat.webhooks.delete(created.data.id);
    assert.equal(deleted.data, null);
    assert.ok(isUuidV7(deleted.meta.request_id));
    assert.deepEqual((await openvat.webhooks.list()).data, []);
  });

  it('monitors: create, check (a signed vat_number.changed), list, all, get, update, changes, summary, bulk, delete', async () => {
    const openvat = client(proTest);
    const hook = await openvat.webhooks.create({ url: `${receiver.origin}/monitor-hooks` });
    // A test-mode number that is valid at the first check and invalid from the second.
    const created = await openvat.monitors.create({
      vat_number: 'DE910000000',
      interval: 'daily',
      reference: 'c-1',
    });
    const id = created.data.monitor.id;
    assert.equal(created.data.monitor.status, 'valid');
    const again = await openvat.monitors.create({ vat_number: 'DE910000000', interval: 'daily' });
    assert.equal(again.data.monitor.id, id, 'creating it again answers the existing monitor');

    const before = receiver.received.length;
    const checked = await openvat.monitors.check(id);
    assert.equal(checked.data.monitor.status, 'invalid');
    assert.deepEqual(
      checked.data.changes.map((c) => c.type),
      ['became_invalid'],
    );
    const deadline = Date.now() + 10_000;
    let event: Awaited<ReturnType<typeof verifyWebhook>> | undefined;
    while (!event && Date.now() < deadline) {
      for (const delivery of receiver.received.slice(before)) {
        const verified = await verifyWebhook(delivery.body, delivery.headers, hook.data.secret);
        if (verified.event === 'vat_number.changed') event = verified;
      }
      if (!event) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(event, 'the change reached the receiver');
    if (event?.event === 'vat_number.changed') {
      assert.equal(event.data.data.monitor.id, id);
      // The delivered meta is the request id only, and so is its type.
      assert.deepEqual(Object.keys(event.data.meta), ['request_id']);
      const metaKeys: ExactKeys<keyof VatNumberChangedEvent['data']['meta'], 'request_id'> = true;
      assert.ok(metaKeys);
    }

    const bulk = await openvat.monitors.bulk({
      monitors: [{ vat_number: 'DE930000007' }, { vat_number: 'not a number' }],
      interval: 'weekly',
    });
    assert.equal(bulk.data.summary.created, 1);
    assert.equal(bulk.data.summary.failed, 1);
    const page = await openvat.monitors.list({ limit: '1' });
    assert.equal(page.data.length, 1);
    assert.ok(page.meta.next_cursor, 'a second page');
    const all: string[] = [];
    for await (const monitor of openvat.monitors.all({ limit: '1' })) all.push(monitor.vat_number);
    assert.deepEqual(all.sort(), ['DE910000000', 'DE930000007']);
    const invalid = await openvat.monitors.list({ status: 'invalid' });
    assert.deepEqual(
      invalid.data.map((m) => m.id),
      [id],
    );

    const got = await openvat.monitors.get(id);
    assert.equal(got.data.monitor.reference, 'c-1');
    assert.ok(got.data.checks.length >= 2);
    const updated = await openvat.monitors.update(id, { interval: 'monthly', reference: null });
    assert.equal(updated.data.interval, 'monthly');
    assert.equal(updated.data.reference, null);
    const changes = await openvat.monitors.changes();
    assert.ok(changes.data.some((c) => c.monitor_id === id && c.type === 'became_invalid'));
    const summary = await openvat.monitors.summary();
    assert.equal(summary.data.total, 2);
    assert.equal(summary.data.invalid, 1);

    const deleted = await openvat.monitors.delete(id);
    assert.equal(deleted.data, null);
    await assert.rejects(openvat.monitors.get(id), (error: unknown) => {
      assert.ok(error instanceof Error && 'status' in error && error.status === 404);
      return true;
    });
    await openvat.webhooks.delete(hook.data.id);
  });

  it('numeric and boolean query options are taken as numbers and booleans, sent as text', async () => {
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    const openvat = client(proTest, { fetch: recording });
    const page = await openvat.monitors.list({ limit: 2, stale: false });
    assert.ok(Array.isArray(page.data));
    await openvat.monitors.changes({ limit: 3 });
    await openvat.usage.get({ days: 30 });
    const hook = await openvat.webhooks.create({ url: `${receiver.origin}/query-hooks` });
    await openvat.webhooks.deliveries(hook.data.id, { limit: 4 });
    await openvat.webhooks.delete(hook.data.id);
    const queries = urls.map((u) => new URL(u).search);
    assert.ok(queries.includes('?limit=2&stale=false'), queries.join(' '));
    assert.ok(queries.includes('?limit=3'));
    assert.ok(queries.includes('?days=30'));
    assert.ok(queries.includes('?limit=4'));
  });

  it('confirm uses an Idempotency-Key given in the per-call headers, whatever its case, as its key', async () => {
    const { sent, openvat } = recordingIdempotencyKeys();
    const body = { vat_number: 'ATU12345678', company: MUSTERHAUS };
    const key = crypto.randomUUID();
    const first = await openvat.confirm(body, { headers: { 'Idempotency-Key': key } });
    assert.equal(first.replayed, false);
    const again = await openvat.confirm(body, { headers: { 'IDEMPOTENCY-KEY': key } });
    assert.equal(again.replayed, true, 'the second answer is the stored one');
    const lower = await openvat.confirm(body, { headers: { 'idempotency-key': key } });
    assert.deepEqual(sent, [key, key, key]);
    assert.equal(again.data.confirmation_id, first.data.confirmation_id);
    assert.equal(lower.data.confirmation_id, first.data.confirmation_id);
    await assert.rejects(
      openvat.confirm(body, { idempotencyKey: crypto.randomUUID(), headers: { 'Idempotency-Key': key } }),
      TypeError,
    );
  });

  it('batchJobs: create, get, follow with progress, wait, run', async () => {
    const openvat = client(proLive);
    const numbers = ['DE136695976', 'FR40303265045', 'XX1'];
    const created = await openvat.batchJobs.create({ vat_numbers: numbers });
    assert.equal(created.data.total, 3);
    const got = await openvat.batchJobs.get(created.data.id);
    assert.equal(got.data.id, created.data.id);

    const seen: BatchJob[] = [];
    for await (const job of openvat.batchJobs.follow(created.data.id, { pollInterval: 50 })) seen.push(job);
    const last = seen.at(-1);
    assert.equal(last?.status, 'completed');
    assert.equal(last?.results?.length, 3);
    assert.ok(seen.every((job, i) => i === 0 || job.done >= (seen[i - 1]?.done ?? 0)));

    const waited = await openvat.batchJobs.wait(created.data.id, { pollInterval: 50 });
    assert.deepEqual(waited.summary, last?.summary);

    const states = [];
    for await (const job of client(proTest).batchJobs.run(
      { vat_numbers: ['DE100000008'] },
      { pollInterval: 50 },
    )) {
      states.push(job.status);
    }
    assert.equal(states.at(-1), 'completed');
  });

  it('batchJobs.submitAll reads an async iterable and queues one job per chunk', async () => {
    async function* numbers() {
      for (let i = 0; i < 5; i += 1) yield 'DE100000008';
    }
    const openvat = client(proTest);
    const jobs = [];
    for await (const job of openvat.batchJobs.submitAll(numbers(), { chunkSize: 2 })) jobs.push(job);
    assert.deepEqual(
      jobs.map((job) => job.total),
      [2, 2, 1],
    );
    for (const job of jobs) {
      const done = await openvat.batchJobs.wait(job.id, { pollInterval: 50 });
      assert.equal(done.summary?.successful, job.total);
    }
  });
});
