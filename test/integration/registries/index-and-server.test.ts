import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistryClients, sourceForPrefix } from '../../../src/registries/index.js';
import type { SimulatorServer, SimulatorUrls } from '../../../src/simulators/server.js';
import { startSimulator } from './helpers.js';

describe('registry wiring and the simulator server', () => {
  let sim: SimulatorServer;
  let urls: SimulatorUrls;
  let close: () => Promise<void>;
  before(async () => {
    ({ sim, urls, close } = await startSimulator());
  });
  after(() => close());

  it('routes VAT prefixes to registries', () => {
    for (const prefix of ['DE', 'EL', 'GR', 'XI', 'fr', 'SE'])
      assert.equal(sourceForPrefix(prefix), 'vies', prefix);
    assert.equal(sourceForPrefix('GB'), 'hmrc');
    assert.equal(sourceForPrefix('CH'), 'bfs');
    assert.equal(sourceForPrefix('NO'), 'brreg');
    for (const prefix of ['US', 'SM', '', 'EU']) assert.equal(sourceForPrefix(prefix), null, prefix);
  });

  it('builds every client from configuration and answers through each', async () => {
    const clients = createRegistryClients({
      vies: { baseUrl: urls.VIES_URL, soapUrl: urls.VIES_SOAP_URL, timeoutMs: 2_000 },
      hmrc: { baseUrl: urls.HMRC_URL, clientId: 'id', clientSecret: 'secret', timeoutMs: 2_000 },
      bfs: { baseUrl: urls.BFS_URL, timeoutMs: 2_000 },
      brreg: { baseUrl: urls.BRREG_URL, timeoutMs: 2_000 },
    });
    assert.equal(clients.clientForPrefix('GR'), clients.vies);
    assert.equal(clients.clientForPrefix('GB'), clients.hmrc);
    assert.equal(clients.clientForPrefix('US'), null);
    assert.equal(clients.vies.countries.length, 28);
    assert.ok(clients.vies.countries.includes('XI') && !clients.vies.countries.includes('GB'));
    assert.deepEqual(clients.hmrc.countries, ['GB']);
    const vies = await clients.vies.lookup({ vat: { country: 'BE', national: '100' } });
    assert.equal(vies.kind === 'answer' && vies.valid, true);
    const hmrc = await clients.hmrc.lookup({ vat: { country: 'GB', national: '553557881' } });
    assert.equal(hmrc.kind === 'answer' && hmrc.valid, true);
    assert.equal(
      (await clients.bfs.lookup({ vat: { country: 'CH', national: '116281710' } })).kind,
      'answer',
    );
    assert.equal(
      (await clients.brreg.lookup({ vat: { country: 'NO', national: '995525828' } })).kind,
      'answer',
    );
    assert.ok(await clients.viesStatus.checkStatus());
  });

  it('publishes the URLs of every simulator, eVatR included', async () => {
    assert.match(urls.VIES_URL, /^http:\/\/127\.0\.0\.1:\d+\/vies\/rest-api$/);
    assert.match(urls.VIES_SOAP_URL, /\/vies\/services\/checkVatService$/);
    assert.match(urls.BFS_URL, /\/bfs\/V5\.0\/PublicServices\.svc$/);
    assert.match(urls.EVATR_URL, /\/evatr\/app$/);
    assert.ok(sim.modules.evatr);
    const response = await fetch(urls.EVATR_URL.replace(/\/app$/, '/app/v1/abfrage'), {
      method: 'POST',
      body: '{}',
    });
    assert.notEqual(response.status, 404);
    await response.arrayBuffer();
  });

  it('applies a bare control command to every module', () => {
    const settings = sim.control({ latencyMs: 0, seed: 3 }) as Record<string, { seed?: number }>;
    assert.equal(settings.vies?.seed, 3);
    assert.equal(settings.hmrc?.seed, 3);
    assert.equal(settings.brreg?.seed, 3);
  });

  it('reset puts the eVatR simulator back to its defaults too, alone or through "all"', async () => {
    const base = urls.EVATR_URL.replace(/\/app$/, '');
    const control = async (command: unknown) => {
      const res = await fetch(new URL('/_control', base), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(command),
      });
      return ((await res.json()) as { evatr: Record<string, unknown> }).evatr;
    };
    const defaults = await control({ evatr: { reset: true } });
    const changed = await control({
      evatr: { maintenance: true, latencyMs: 50, unavailableCountries: ['AT'] },
    });
    assert.notDeepEqual(changed, defaults);
    assert.deepEqual(await control({ evatr: { reset: true } }), defaults);
    await control({ evatr: { maintenance: true } });
    assert.deepEqual(await control({ all: { reset: true } }), defaults);
    assert.deepEqual(defaults, {
      latencyMs: 0,
      maintenance: false,
      dateFormat: 'iso',
      qualifiedSessionLimit: null,
      unavailableCountries: [],
    });
  });

  it('reproduces the SOAP quirks of VIES', async () => {
    const envelope =
      '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:urn="urn:ec.europa.eu:taxud:vies:services:checkVat:types">' +
      '<soapenv:Body><urn:checkVat><urn:countryCode>DE</urn:countryCode><urn:vatNumber>100</urn:vatNumber></urn:checkVat></soapenv:Body></soapenv:Envelope>';
    const post = (headers: Record<string, string>, body = envelope) =>
      fetch(urls.VIES_SOAP_URL, { method: 'POST', headers, body });
    const ok = await post({ 'content-type': 'text/xml;charset=UTF-8', soapaction: '' });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /<ns2:valid>true<\/ns2:valid>.*<ns2:name>/);
    const action = await post({ 'content-type': 'text/xml', soapaction: 'urn:checkVat/checkVat' });
    assert.match(await action.text(), /does not match an operation/);
    const form = await post({ 'content-type': 'application/x-www-form-urlencoded' });
    assert.match(await form.text(), /Error 500--Internal Server Error/);
    const broken = await post({ 'content-type': 'text/xml' }, '<soapenv:Envelope');
    assert.match(await broken.text(), /Error reading XMLStreamReader/);
  });

  it('serves the web-UI endpoint and the REST test service', async () => {
    const web = (await (await fetch(`${urls.VIES_URL}/ms/DE/vat/401`)).json()) as Record<string, unknown>;
    assert.equal(web.isValid, false);
    assert.equal(web.userError, 'IP_BLOCKED');
    const test = await fetch(`${urls.VIES_URL}/check-vat-test-service`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ countryCode: 'DE', vatNumber: '123456789' }),
    });
    assert.match(await test.text(), /"error" : "SERVICE_UNAVAILABLE"/);
  });
});
