import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { SML_ZONES } from '../../src/registries/peppol-sml.js';
import { createPeppolSmlSimulator, type PeppolSmlSimulator } from '../../src/simulators/peppol-sml.js';
import { createPeppolSmpSimulator } from '../../src/simulators/peppol-smp.js';
import { type SimulatorServer, serveSimulators } from '../../src/simulators/server.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const DAY_MS = 86_400_000;

for (const target of await databaseTargets()) {
  describe(`monitors with "peppol": true against the SML and SMP simulators on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let smp: SimulatorServer;
    let sml: PeppolSmlSimulator;
    let receiver: WebhookReceiver;
    let db: TestDb;
    let t: TestApp;
    let key: TestKey;
    let secret: string;
    const clock = createManualClock('2026-12-02T10:00:00.000Z');
    const registry = createFakeRegistry(['BE', 'DE', 'AT', 'NL']);

    before(async () => {
      smp = serveSimulators({ smp: createPeppolSmpSimulator() });
      const { base } = await smp.listen(0);
      sml = createPeppolSmlSimulator({ smpBase: `${base}/peppol-smp` });
      const dns = await sml.listen(0, '127.0.0.1');
      receiver = await startWebhookReceiver();
      db = await target.open();
      t = await buildTestApp(
        {
          PEPPOL_SML_ZONE: SML_ZONES.peppolProduction,
          PEPPOL_DNS_SERVERS: `127.0.0.1:${dns.port}`,
          PEPPOL_DNS_TIMEOUT_MS: '300',
          PEPPOL_SMP_TIMEOUT_MS: '3000',
          PEPPOL_ALLOW_PRIVATE_SMP: 'true',
          OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
          OPENVAT_MONITOR_PER_COUNTRY: '8',
          OPENVAT_MONITOR_RETRY_BACKOFF_MS: '60000',
          // Breakers of the SML and the SMPs are not what this test is about.
          OPENVAT_BREAKER_THRESHOLD: '1000',
        },
        { db, clock, registries: registry.ports },
      );
      key = await t.key('business', 'live');
      const hook = await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: key.headers,
        payload: { url: `${receiver.origin}/hooks` },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      secret = hook.json().secret;
    });
    beforeEach(() => {
      sml.control({ reset: true });
      smp.control({ smp: { reset: true } });
      receiver.received.length = 0;
    });
    after(async () => {
      await t.close();
      await db.dispose();
      await receiver.close();
      await sml.close();
      await smp.close();
    });

    const create = (payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/v1/monitors', headers: key.headers, payload });
    const monitor = async (id: string) =>
      (await t.app.inject({ method: 'GET', url: `/v1/monitors/${id}`, headers: key.headers })).json().data;
    /** Every monitor due within the next 1.6 days is checked, then every queued webhook delivered. */
    async function nextCycle(): Promise<
      Array<{ event: string; body: string; headers: Record<string, unknown> }>
    > {
      clock.advance(1.6 * DAY_MS);
      await t.container.monitorScheduler.drain();
      await t.container.webhookWorker.drain();
      return receiver.received.splice(0).map((r) => ({
        event: String(r.headers['service-event']),
        body: r.body,
        headers: r.headers,
      }));
    }

    it('sends a signed peppol.changed on a change of reachability, and nothing on an SML or SMP outage', async () => {
      const created = await create({ vat_number: 'DE999000009', interval: 'daily', peppol: true });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.monitor.id as string;
      const first = created.json().data.monitor.peppol;
      assert.equal(first.reachable, true);
      assert.equal(first.can_receive_invoices, true);
      assert.equal(first.checked_at, clock.now().toISOString());
      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${created.json().data.check.request_id}`,
        headers: key.headers,
      });
      assert.equal(audit.json().data.response.data.peppol.reachable, true, 'the check’s audit has the part');
      const plain = await create({ vat_number: 'BE0999000030', interval: 'daily' });
      assert.equal(plain.json().data.monitor.peppol, null, 'a monitor without "peppol"');
      await t.container.webhookWorker.drain();
      receiver.received.length = 0;

      // The SML fails: the stored answer is served degraded, which is no check of Peppol.
      sml.control({ fail: 'servfail' });
      const outage = await nextCycle();
      assert.deepEqual(
        outage.filter((d) => d.event === 'peppol.changed'),
        [],
        'no event on an SML outage',
      );
      let view = await monitor(id);
      assert.equal(view.monitor.peppol.reachable, true, 'the state is kept');
      assert.equal(view.monitor.peppol.checked_at, first.checked_at);

      // The SMP fails: registered, invoices unknown, which is no change either.
      sml.control({ reset: true });
      smp.control({ smp: { down: ['invoices'] } });
      const smpOutage = await nextCycle();
      assert.deepEqual(
        smpOutage.filter((d) => d.event === 'peppol.changed'),
        [],
        'no event on an SMP outage',
      );
      view = await monitor(id);
      assert.equal(view.monitor.peppol.can_receive_invoices, true, 'an unknown value keeps the known one');
      assert.notEqual(view.monitor.peppol.checked_at, first.checked_at);
      assert.deepEqual(view.changes, []);

      // The company leaves Peppol: NXDOMAIN.
      smp.control({ smp: { reset: true } });
      sml.control({ unregistered: ['9930:de999000009'] });
      const changed = await nextCycle();
      const events = changed.filter((d) => d.event === 'peppol.changed');
      assert.equal(events.length, 1, JSON.stringify(changed.map((d) => d.event)));
      assert.deepEqual(
        changed.filter((d) => d.event === 'vat_number.changed'),
        [],
        'the VAT state did not change',
      );
      const delivery = events[0] as (typeof events)[number];
      const timestamp = String(delivery.headers['service-timestamp']);
      assert.equal(
        delivery.headers['service-signature'],
        `sha256=${createHmac('sha256', secret).update(`${timestamp}.${delivery.body}`).digest('hex')}`,
      );
      const body = JSON.parse(delivery.body);
      assert.equal(body.event, 'peppol.changed');
      assert.equal(body.data.data.monitor.id, id);
      assert.deepEqual(body.data.data.peppol.before, { reachable: true, can_receive_invoices: true });
      assert.deepEqual(body.data.data.peppol.after, { reachable: false, can_receive_invoices: false });
      assert.equal(body.data.data.peppol.answer.participants[0].registered, false);
      view = await monitor(id);
      assert.equal(view.monitor.peppol.reachable, false);
      assert.equal(view.changes.length, 1);
      assert.equal(view.changes[0].type, 'peppol_changed');
      assert.deepEqual(JSON.parse(view.changes[0].after), { reachable: false, can_receive_invoices: false });
      assert.equal(view.monitor.last_change_at, view.changes[0].detected_at);

      // Nothing changes on the next check: no event.
      const quiet = await nextCycle();
      assert.deepEqual(
        quiet.filter((d) => d.event === 'peppol.changed'),
        [],
      );
    });

    it('PATCH turns Peppol on and off; "peppol": true needs the peppol scope', async () => {
      const created = await create({ vat_number: 'NL999000001B01', interval: 'weekly' });
      const id = created.json().data.monitor.id as string;
      const on = await t.app.inject({
        method: 'PATCH',
        url: `/v1/monitors/${id}`,
        headers: key.headers,
        payload: { peppol: true },
      });
      assert.equal(on.statusCode, 200, on.body);
      assert.deepEqual(on.json().data.peppol, {
        reachable: null,
        can_receive_invoices: null,
        checked_at: null,
      });
      const checked = await t.app.inject({
        method: 'POST',
        url: `/v1/monitors/${id}/check`,
        headers: key.headers,
      });
      assert.equal(checked.json().data.monitor.peppol.reachable, true);
      assert.equal(checked.json().data.monitor.peppol.can_receive_invoices, null, 'its SMP is down');
      const off = await t.app.inject({
        method: 'PATCH',
        url: `/v1/monitors/${id}`,
        headers: key.headers,
        payload: { peppol: false },
      });
      assert.equal(off.json().data.peppol, null);
      // A key whose scopes leave Peppol out.
      const admin = { authorization: `Bearer ${(await t.container.admin.createKey('ops', 'admin')).key}` };
      const account = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: admin,
        payload: { name: 'Scoped AG' },
      });
      const made = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/keys',
        headers: admin,
        payload: {
          plan: 'business',
          mode: 'live',
          account_id: account.json().data.id,
          scopes: ['monitors', 'validate', 'validate_batch'],
        },
      });
      assert.equal(made.statusCode, 201, made.body);
      const scoped = { authorization: `Bearer ${made.json().data.key}` };
      const refused = [
        await t.app.inject({
          method: 'POST',
          url: '/v1/monitors',
          headers: scoped,
          payload: { vat_number: 'DE999000009', interval: 'daily', peppol: true },
        }),
        await t.app.inject({
          method: 'GET',
          url: '/v1/validate?vat_number=DE999000009&include=peppol',
          headers: scoped,
        }),
        await t.app.inject({
          method: 'POST',
          url: '/v1/validate/batch',
          headers: scoped,
          payload: { vat_numbers: ['DE999000009'], include: ['peppol'] },
        }),
      ];
      for (const response of refused) {
        assert.equal(response.statusCode, 403, response.body);
        assert.equal(response.json().error.code, 'scope_not_allowed');
        assert.match(response.json().error.message, /scope "peppol"/);
      }
      const allowed = await t.app.inject({
        method: 'POST',
        url: '/v1/monitors',
        headers: scoped,
        payload: { vat_number: 'DE999000009', interval: 'daily' },
      });
      assert.equal(allowed.statusCode, 201, allowed.body);
    });
  });
}
