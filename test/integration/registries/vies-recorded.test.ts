import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RegistryAnswer, RegistryResult, RegistryUnavailable } from '../../../src/registries/port.js';
import { createViesClient } from '../../../src/registries/vies.js';
import { VIES_ERROR_CODES } from '../../../src/registries/vies-common.js';
import { createViesSoapClient, parseSoapDate } from '../../../src/registries/vies-soap.js';
import { createViesStatusReader } from '../../../src/registries/vies-status.js';
import { type FixtureServer, fixture, type Handler, startFixtureServer } from './helpers.js';

function asAnswer(result: RegistryResult): RegistryAnswer {
  assert.equal(result.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as RegistryAnswer;
}

function asUnavailable(result: RegistryResult): RegistryUnavailable {
  assert.equal(result.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as RegistryUnavailable;
}

const json = (status: number, body: string) => ({ status, body });
const html = (status: number, body: string) => ({ status, body, headers: { 'content-type': 'text/html' } });
const xml = (status: number, body: string) => ({
  status,
  body,
  headers: { 'content-type': 'text/xml;charset=UTF-8' },
});

const FR = { country: 'FR', national: '60815004395' };

describe('VIES clients against recorded bodies', () => {
  let restServer: FixtureServer;
  let soapServer: FixtureServer;

  before(async () => {
    restServer = await startFixtureServer(() => json(500, ''));
    soapServer = await startFixtureServer(() => xml(200, fixture('vies/soap-valid.xml')));
  });
  after(async () => {
    await restServer.close();
    await soapServer.close();
  });

  const serve = (handler: Handler) => {
    restServer.use(handler);
    restServer.requests.length = 0;
    soapServer.requests.length = 0;
  };
  const client = (timeoutMs = 2_000) =>
    createViesClient({ baseUrl: `${restServer.url}/rest-api`, timeoutMs });
  const withSoap = () =>
    createViesClient({
      baseUrl: `${restServer.url}/rest-api`,
      soapUrl: `${soapServer.url}/soap`,
      timeoutMs: 2_000,
    });

  it('posts the official JSON fields and reads a valid answer', async () => {
    serve(() => json(200, fixture('vies/valid-fr.json')));
    const answer = asAnswer(await client().lookup({ vat: FR }));
    assert.deepEqual(answer, {
      kind: 'answer',
      source: 'vies',
      valid: true,
      name: 'SAS EXAMPLE INDUSTRIES',
      address: '12 RUE DE LA PAIX\n75002 PARIS',
      consultationNumber: null,
      checkedAt: new Date('2026-05-19T12:25:12.544Z'),
    });
    const request = restServer.requests[0];
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/rest-api/check-vat-number');
    assert.match(String(request.headers['content-type']), /application\/json/);
    assert.ok(request.headers['user-agent']);
    assert.deepEqual(JSON.parse(request.body), { countryCode: 'FR', vatNumber: '60815004395' });
  });

  it('sends the requester as requesterMemberStateCode/requesterNumber and reads requestIdentifier', async () => {
    serve(() => json(200, fixture('vies/valid-requester.json')));
    const answer = asAnswer(
      await client().lookup({
        vat: { country: 'PL', national: '7740001454' },
        requester: { country: 'GR', national: '094014201' },
      }),
    );
    assert.equal(answer.consultationNumber, 'WAPIAAAAZ2dRSaQm');
    assert.equal(answer.address, 'CHEMIKÓW 7\n09-411 PŁOCK');
    assert.deepEqual(JSON.parse(restServer.requests[0]?.body ?? ''), {
      countryCode: 'PL',
      vatNumber: '7740001454',
      requesterMemberStateCode: 'EL',
      requesterNumber: '094014201',
    });
  });

  it('turns --- placeholders into null and reads valid:false', async () => {
    serve(() => json(200, fixture('vies/valid-es-placeholder.json')));
    const es = asAnswer(await client().lookup({ vat: { country: 'ES', national: 'B12345678' } }));
    assert.equal(es.valid, true);
    assert.equal(es.name, null);
    assert.equal(es.address, null);
    serve(() => json(200, fixture('vies/invalid-de.json')));
    const de = asAnswer(await client().lookup({ vat: { country: 'DE', national: '123456788' } }));
    assert.equal(de.valid, false);
  });

  it('maps every VIES error code in the error envelope, whatever the HTTP status', async () => {
    for (const [code, info] of Object.entries(VIES_ERROR_CODES)) {
      for (const status of [200, 400, 500, 503]) {
        const body = `{\n  "actionSucceed" : false,\n  "errorWrappers" : [ {\n    "error" : "${code}"\n  } ]\n}`;
        serve(() => json(status, body));
        const result = asUnavailable(await client().lookup({ vat: FR }));
        assert.equal(result.reason, info.reason, `${code} with ${status}`);
        assert.equal(result.upstreamCode, code);
        assert.equal(result.retryable, info.reason !== 'rejected');
      }
    }
  });

  it('reads the recorded envelopes (MS_UNAVAILABLE, MS_MAX_CONCURRENT_REQ, with message)', async () => {
    serve(() => json(500, fixture('vies/error-ms-unavailable.json')));
    assert.equal(asUnavailable(await client().lookup({ vat: FR })).reason, 'down');
    serve(() => json(200, fixture('vies/error-ms-max-concurrent-req.json')));
    const throttled = asUnavailable(await client().lookup({ vat: FR }));
    assert.equal(throttled.reason, 'throttled');
    assert.equal(throttled.upstreamCode, 'MS_MAX_CONCURRENT_REQ');
    serve(() => json(400, fixture('vies/error-with-message.json')));
    const rejected = asUnavailable(
      await client().lookup({ vat: FR, requester: { country: 'DE', national: '1' } }),
    );
    assert.equal(rejected.reason, 'rejected');
    assert.match(rejected.message, /The requester VAT number is invalid/);
  });

  it('does not fall back to SOAP when VIES answered with an error code', async () => {
    serve(() => json(500, fixture('vies/error-ms-unavailable.json')));
    const result = asUnavailable(await withSoap().lookup({ vat: FR }));
    assert.equal(result.upstreamCode, 'MS_UNAVAILABLE');
    assert.equal(soapServer.requests.length, 0);
  });

  it('maps an unknown error code to a retryable outage with the code', async () => {
    serve(() => json(500, '{"actionSucceed":false,"errorWrappers":[{"error":"SOMETHING_NEW"}]}'));
    const result = asUnavailable(await client().lookup({ vat: FR }));
    assert.equal(result.reason, 'down');
    assert.equal(result.upstreamCode, 'SOMETHING_NEW');
    serve(() => json(500, '{"actionSucceed":false}'));
    assert.equal(asUnavailable(await client().lookup({ vat: FR })).reason, 'down');
  });

  it("reads the web UI shape's userError (IP_BLOCKED) as an error, not as invalid", async () => {
    serve(() => json(200, fixture('vies/web-ui-ip-blocked.json')));
    const result = asUnavailable(await client().lookup({ vat: FR }));
    assert.equal(result.reason, 'rejected');
    assert.equal(result.upstreamCode, 'IP_BLOCKED');
  });

  it('never reads garbage as valid:false', async () => {
    const cases: [ReturnType<typeof json>, string][] = [
      [html(503, fixture('vies/html-503.html')), 'down'],
      [html(500, fixture('vies/weblogic-500.html.txt')), 'down'],
      [html(200, fixture('vies/html-503.html')), 'bad_response'],
      [json(200, fixture('vies/truncated.json')), 'bad_response'],
      [json(200, ''), 'bad_response'],
      [json(502, ''), 'down'],
      [json(200, '[]'), 'bad_response'],
      [json(200, '{"countryCode":"FR","vatNumber":"60815004395"}'), 'bad_response'],
      [json(200, '{"countryCode":"FR","vatNumber":"60815004395","valid":"false"}'), 'bad_response'],
    ];
    for (const [reply, reason] of cases) {
      serve(() => reply);
      const result = asUnavailable(await client().lookup({ vat: FR }));
      assert.equal(result.reason, reason, `${reply.status} ${reply.body.slice(0, 30)}`);
      assert.equal(result.retryable, true);
    }
  });

  it('refuses an answer about another country or number', async () => {
    const body = JSON.parse(fixture('vies/valid-fr.json')) as Record<string, unknown>;
    serve(() => json(200, JSON.stringify({ ...body, vatNumber: '11111111111' })));
    assert.equal(asUnavailable(await client().lookup({ vat: FR })).reason, 'bad_response');
    serve(() => json(200, JSON.stringify({ ...body, countryCode: 'DE' })));
    assert.equal(asUnavailable(await client().lookup({ vat: FR })).reason, 'bad_response');
    // The same number with its prefix repeated is still the same number.
    serve(() => json(200, JSON.stringify({ ...body, vatNumber: 'FR60815004395' })));
    assert.equal(asAnswer(await client().lookup({ vat: FR })).valid, true);
  });

  it('reports a hang as timeout and a reset connection as down', async () => {
    serve(() => 'hang');
    const hung = asUnavailable(await client(100).lookup({ vat: FR }));
    assert.equal(hung.reason, 'timeout');
    serve(() => 'reset');
    const reset = asUnavailable(await client().lookup({ vat: FR }));
    assert.equal(reset.reason, 'down');
  });

  it("stops at the caller's deadline", async () => {
    serve(() => 'hang');
    const controller = new AbortController();
    const pending = client(10_000).lookup({ vat: FR, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const result = asUnavailable(await pending);
    assert.equal(result.reason, 'timeout');
    assert.match(result.message, /cancelled/);
  });

  it('falls back to SOAP when REST answers an HTML error page or unreadable JSON', async () => {
    for (const reply of [
      html(500, fixture('vies/weblogic-500.html.txt')),
      json(200, fixture('vies/truncated.json')),
    ]) {
      serve(() => reply);
      soapServer.use(() => xml(200, fixture('vies/soap-valid.xml')));
      const answer = asAnswer(await withSoap().lookup({ vat: FR }));
      assert.equal(answer.valid, true);
      assert.equal(answer.name, 'SAS EXAMPLE INDUSTRIES');
      assert.equal(soapServer.requests.length, 1);
    }
    const request = soapServer.requests[0];
    assert.ok(request);
    assert.match(String(request.headers['content-type']), /^text\/xml/);
    assert.equal(request.headers.soapaction, '');
    assert.match(
      request.body,
      /<urn:checkVat><urn:countryCode>FR<\/urn:countryCode><urn:vatNumber>60815004395</,
    );
  });

  it('does not fall back to SOAP after a timeout (the time budget is spent)', async () => {
    serve(() => 'hang');
    const client = createViesClient({
      baseUrl: `${restServer.url}/rest-api`,
      soapUrl: `${soapServer.url}/soap`,
      timeoutMs: 100,
    });
    assert.equal(asUnavailable(await client.lookup({ vat: FR })).reason, 'timeout');
    assert.equal(soapServer.requests.length, 0);
  });

  it('reads SOAP faults sent with HTTP 200 as well as 500', async () => {
    serve(() => html(503, fixture('vies/html-503.html')));
    for (const status of [200, 500]) {
      soapServer.use(() => xml(status, fixture('vies/soap-fault-ms-max-concurrent-req.xml')));
      const result = asUnavailable(await withSoap().lookup({ vat: FR }));
      assert.equal(result.reason, 'throttled');
      assert.equal(result.upstreamCode, 'MS_MAX_CONCURRENT_REQ');
    }
  });

  describe('SOAP client', () => {
    const soap = (now?: () => Date) =>
      createViesSoapClient({ url: `${soapServer.url}/soap`, timeoutMs: 2_000, ...(now ? { now } : {}) });

    it('reads checkVatResponse with env:/ns2: prefixes; the day-only requestDate becomes the check time', async () => {
      soapServer.use(() => xml(200, fixture('vies/soap-valid.xml')));
      const sameDay = new Date('2022-08-15T10:00:00Z');
      const answer = asAnswer(await soap(() => sameDay).lookup({ vat: FR }));
      assert.equal(answer.address, '12 RUE DE LA PAIX\n75002 PARIS');
      assert.deepEqual(answer.checkedAt, sameDay);
      const later = asAnswer(await soap(() => new Date('2022-08-20T10:00:00Z')).lookup({ vat: FR }));
      assert.deepEqual(later.checkedAt, new Date('2022-08-14T22:00:00Z'));
    });

    it('takes a requestDate still to come as the time the answer arrived', async () => {
      const now = new Date('2026-11-26T09:00:00Z');
      assert.deepEqual(parseSoapDate('2099-01-01+01:00', now), now);
      assert.deepEqual(parseSoapDate('2099-01-01T00:00:00Z', now), now);
      assert.deepEqual(parseSoapDate('2026-11-26T09:04:00Z', now), new Date('2026-11-26T09:04:00Z'));
    });

    it('uses checkVatApprox with the requester and reads requestIdentifier', async () => {
      soapServer.use(() => xml(200, fixture('vies/soap-approx-valid.xml')));
      soapServer.requests.length = 0;
      const answer = asAnswer(
        await soap().lookup({ vat: FR, requester: { country: 'DE', national: '811907980' } }),
      );
      assert.equal(answer.consultationNumber, 'WAPIAAAAYfYzPq1k');
      assert.equal(answer.name, 'SAS EXAMPLE INDUSTRIES');
      const body = soapServer.requests[0]?.body ?? '';
      assert.match(body, /<urn:checkVatApprox>/);
      assert.match(body, /<urn:requesterCountryCode>DE<\/urn:requesterCountryCode>/);
      assert.match(body, /<urn:requesterVatNumber>811907980<\/urn:requesterVatNumber>/);
    });

    it('reads an xsi:nil name as null', async () => {
      soapServer.use(() => xml(200, fixture('vies/soap-nil-name.xml')));
      const answer = asAnswer(await soap().lookup({ vat: { country: 'DE', national: '123456789' } }));
      assert.equal(answer.name, null);
      assert.equal(answer.address, null);
    });

    it('maps every VIES code in a faultstring', async () => {
      for (const [code, info] of Object.entries(VIES_ERROR_CODES)) {
        const body = fixture('vies/soap-fault-ms-max-concurrent-req.xml').replace(
          'MS_MAX_CONCURRENT_REQ',
          code,
        );
        soapServer.use(() => xml(500, body));
        const result = asUnavailable(await soap().lookup({ vat: FR }));
        assert.equal(result.upstreamCode, code);
        assert.equal(result.reason, info.reason, code);
      }
    });

    it('classifies client faults, HTML pages, truncated XML and wrong answers', async () => {
      soapServer.use(() => xml(500, fixture('vies/soap-fault-client.xml')));
      assert.equal(asUnavailable(await soap().lookup({ vat: FR })).reason, 'rejected');
      soapServer.use(() => html(500, fixture('vies/weblogic-500.html.txt')));
      assert.equal(asUnavailable(await soap().lookup({ vat: FR })).reason, 'down');
      soapServer.use(() => html(200, '<html><body>Redirect (policy_request_redirect)</body></html>'));
      assert.equal(asUnavailable(await soap().lookup({ vat: FR })).reason, 'bad_response');
      soapServer.use(() => xml(200, fixture('vies/soap-valid.xml').slice(0, 200)));
      assert.equal(asUnavailable(await soap().lookup({ vat: FR })).reason, 'bad_response');
      soapServer.use(() => xml(200, fixture('vies/soap-valid.xml').replace('60815004395', '99999999999')));
      assert.equal(asUnavailable(await soap().lookup({ vat: FR })).reason, 'bad_response');
    });
  });

  describe('check-status', () => {
    const reader = () => createViesStatusReader({ baseUrl: `${restServer.url}/rest-api`, timeoutMs: 500 });

    it('reads per-country availability', async () => {
      serve(() => json(200, fixture('vies/check-status.json')));
      const status = await reader().checkStatus();
      assert.ok(status);
      assert.equal(restServer.requests[0]?.url, '/rest-api/check-status');
      assert.deepEqual(status.DE, { available: false, upstream: 'Unavailable' });
      assert.deepEqual(status.ES, { available: false, upstream: 'Monitoring Disabled' });
      assert.deepEqual(status.EL, { available: true, upstream: 'Available' });
    });

    it('marks every country unavailable when VIES itself is', async () => {
      const body = fixture('vies/check-status.json').replace('"available":true', '"available":false');
      serve(() => json(200, body));
      const status = await reader().checkStatus();
      assert.equal(status?.FR?.available, false);
    });

    it('answers null when the status endpoint fails', async () => {
      for (const reply of [
        html(503, fixture('vies/html-503.html')),
        json(200, '{"vow":{}}'),
        json(200, '{'),
      ]) {
        serve(() => reply);
        assert.equal(await reader().checkStatus(), null);
      }
      serve(() => 'hang');
      assert.equal(
        await createViesStatusReader({ baseUrl: restServer.url, timeoutMs: 100 }).checkStatus(),
        null,
      );
    });
  });
});
