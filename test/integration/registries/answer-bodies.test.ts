import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createBfsClient } from '../../../src/registries/bfs.js';
import { createBrregClient } from '../../../src/registries/brreg.js';
import { createEvatrClient, type EvatrResult } from '../../../src/registries/evatr.js';
import { createHmrcClient } from '../../../src/registries/hmrc.js';
import type { RegistryResult } from '../../../src/registries/port.js';
import { createViesClient } from '../../../src/registries/vies.js';
import { createViesSoapClient } from '../../../src/registries/vies-soap.js';
import { type FixtureServer, fixture, type Reply, startFixtureServer } from './helpers.js';

/**
 * A registry client answers `valid: false` only on the registry's own documented "not registered"
 * body. An error page in front of the registry (a proxy, a moved endpoint), an empty body or JSON of
 * another shape is unavailability, whatever its HTTP status, never `valid: true` or `valid: false`.
 */

const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>' +
  '<body><h1>Not Found</h1><p>The requested URL was not found on this server.</p><hr><address>nginx</address></body></html>';

const html = (status: number): Reply => ({
  status,
  body: HTML_PAGE,
  headers: { 'content-type': 'text/html; charset=utf-8' },
});
const json = (status: number, body: string): Reply => ({
  status,
  body,
  headers: { 'content-type': 'application/json' },
});
const xml = (status: number, body: string): Reply => ({
  status,
  body,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
});

/**
 * Bodies that are no registry's answer: an HTML page with each status the client could read as
 * "not found" and with 200, an empty 200, and JSON of other shapes with those statuses.
 */
function foreignBodies(notFoundStatuses: readonly number[]): Array<[string, Reply]> {
  const cases: Array<[string, Reply]> = [];
  for (const status of [...notFoundStatuses, 200]) cases.push([`an HTML page with ${status}`, html(status)]);
  cases.push(['an empty 200', { status: 200, body: '' }]);
  cases.push([
    'an empty 200 without a content type',
    { status: 200, body: '', headers: { 'content-type': '' } },
  ]);
  for (const status of [...notFoundStatuses, 200]) {
    for (const body of ['{}', '{"error":"x"}', '[]', '[{"valid":false}]', 'null', 'false']) {
      cases.push([`${body} with ${status}`, json(status, body)]);
    }
  }
  return cases;
}

function assertUnavailable(result: RegistryResult, what: string): void {
  assert.equal(result.kind, 'unavailable', `${what}: expected unavailable, got ${JSON.stringify(result)}`);
}

function assertAnswer(result: RegistryResult, valid: boolean, what: string): void {
  assert.equal(result.kind, 'answer', `${what}: expected an answer, got ${JSON.stringify(result)}`);
  assert.equal(result.kind === 'answer' && result.valid, valid, what);
}

describe('registry bodies that are not the registry saying "not registered"', () => {
  let server: FixtureServer;

  before(async () => {
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  describe('Brønnøysund', () => {
    const orgnr = '923609016';
    const lookup = (): Promise<RegistryResult> =>
      createBrregClient({ baseUrl: server.url, timeoutMs: 2_000 }).lookup({
        vat: { country: 'NO', national: `${orgnr}MVA` },
      });
    const registerError = (path: string) =>
      JSON.stringify({
        timestamp: '2026-05-20T10:00:00.000+00:00',
        status: 404,
        error: 'Not Found',
        message: 'Enheten finnes ikke',
        path,
      });

    it('an HTML 404 or 410, an empty body or JSON of another shape is unavailable', async () => {
      const cases: Array<[string, Reply]> = [
        ...foreignBodies([404, 410]),
        [
          "the register's error body for an unknown route",
          json(404, registerError('/enhetsregisteret/api/v2/enheter')),
        ],
        [
          "the register's error body for another unit",
          json(404, registerError('/enhetsregisteret/api/enheter/995525828')),
        ],
        ['a 404 error body without a path', json(404, '{"status":404,"error":"Not Found"}')],
        ['a deleted unit of another number', json(410, fixture('brreg/410.json'))],
        ['a 410 without the unit', json(410, '{"slettedato":"2019-06-30"}')],
        ['the VAT flag without the unit', json(200, '{"registrertIMvaregisteret":false}')],
        [
          'the VAT flag for no unit',
          json(200, '{"registrertIMvaregisteret":true,"organisasjonsnummer":null}'),
        ],
      ];
      for (const [what, reply] of cases) {
        server.use(() => reply);
        assertUnavailable(await lookup(), what);
      }
    });

    it("the register's own 404 and 410 bodies and the unit outside the VAT register stay valid:false", async () => {
      server.use(() => json(404, registerError(`/enhetsregisteret/api/enheter/${orgnr}`)));
      assertAnswer(await lookup(), false, 'the 404 error body for this unit');
      server.use(() => json(404, fixture('brreg/404.json')));
      assertAnswer(
        await createBrregClient({ baseUrl: server.url, timeoutMs: 2_000 }).lookup({
          vat: { country: 'NO', national: '123456785' },
        }),
        false,
        'the recorded 404 body',
      );
      server.use(() => json(410, fixture('brreg/410.json').replaceAll('912345678', orgnr)));
      assertAnswer(await lookup(), false, 'the deleted unit');
      server.use(() => json(200, fixture('brreg/enhet-not-vat.json').replaceAll('974760673', orgnr)));
      assertAnswer(await lookup(), false, 'a unit outside the VAT register');
      server.use(() => json(200, fixture('brreg/enhet-vat.json').replaceAll('995525828', orgnr)));
      assertAnswer(await lookup(), true, 'a unit in the VAT register');
    });
  });

  describe('HMRC', () => {
    const vrn = '553557881';
    let lookupReply: Reply = json(500, '');
    const lookup = (): Promise<RegistryResult> =>
      createHmrcClient({
        baseUrl: server.url,
        clientId: 'client-123',
        clientSecret: 'secret-456',
        timeoutMs: 2_000,
      }).lookup({ vat: { country: 'GB', national: vrn } });
    beforeEach(() => {
      server.use((request) =>
        request.url === '/oauth/token' ? json(200, fixture('hmrc/token.json')) : lookupReply,
      );
    });

    it('an HTML 404, the platform 404, an empty body or JSON of another shape is unavailable', async () => {
      const cases: Array<[string, Reply]> = [
        ...foreignBodies([404]),
        ["the platform's unknown-route 404", json(404, fixture('hmrc/platform-404.json'))],
        ['a 404 with another code', json(404, '{"code":"NOT_FOUND_VRN","message":"x"}')],
        ['a target without a number', json(200, '{"target":{}}')],
        ['a target with a name only', json(200, '{"target":{"name":"Credite Sberger Donal Inc."}}')],
        ['a target that is a string', json(200, '{"target":"553557881"}')],
      ];
      for (const [what, reply] of cases) {
        lookupReply = reply;
        assertUnavailable(await lookup(), what);
      }
    });

    it("HMRC's NOT_FOUND body stays valid:false and its 200 body valid:true", async () => {
      lookupReply = json(404, fixture('hmrc/lookup-404.json'));
      assertAnswer(await lookup(), false, 'NOT_FOUND');
      lookupReply = json(200, fixture('hmrc/lookup-200.json'));
      assertAnswer(await lookup(), true, 'the lookup answer');
    });
  });

  describe('VIES REST', () => {
    const lookup = (): Promise<RegistryResult> =>
      createViesClient({ baseUrl: `${server.url}/rest-api`, timeoutMs: 2_000 }).lookup({
        vat: { country: 'DE', national: '123456788' },
      });

    it('an HTML page, an empty body or JSON of another shape is unavailable', async () => {
      const cases: Array<[string, Reply]> = [
        ...foreignBodies([404]),
        ['a bare valid:false', json(200, '{"valid":false}')],
        ['a bare valid:true', json(200, '{"valid":true}')],
        ['another API saying valid:false', json(200, '{"valid":false,"errors":["no such route"]}')],
        ['the web-UI shape without its number', json(200, '{"isValid":false,"userError":"INVALID"}')],
        ['valid:false without the number', json(200, '{"countryCode":"DE","valid":false}')],
        ['valid:false without the country', json(200, '{"vatNumber":"123456788","valid":false}')],
        ['the answer with 404', json(404, fixture('vies/invalid-de.json'))],
      ];
      for (const [what, reply] of cases) {
        server.use(() => reply);
        assertUnavailable(await lookup(), what);
      }
    });

    it('the documented answer stays valid:false', async () => {
      server.use(() => json(200, fixture('vies/invalid-de.json')));
      assertAnswer(await lookup(), false, 'CheckVatResponse valid:false');
    });
  });

  describe('VIES SOAP', () => {
    const lookup = (): Promise<RegistryResult> =>
      createViesSoapClient({ url: `${server.url}/services/checkVatService`, timeoutMs: 2_000 }).lookup({
        vat: { country: 'FR', national: '60815004395' },
      });
    const invalid = fixture('vies/soap-valid.xml').replace(
      '<ns2:valid>true</ns2:valid>',
      '<ns2:valid>false</ns2:valid>',
    );

    it('an HTML page, an empty body, JSON or another envelope is unavailable', async () => {
      const envelope = (inner: string) =>
        `<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body>${inner}</env:Body></env:Envelope>`;
      const cases: Array<[string, Reply]> = [
        ...foreignBodies([404, 500]),
        ['an empty envelope', xml(200, envelope(''))],
        [
          'a checkVatResponse with only valid:false',
          xml(
            200,
            envelope(
              '<ns2:checkVatResponse xmlns:ns2="urn:ec.europa.eu:taxud:vies:services:checkVat:types"><ns2:valid>false</ns2:valid></ns2:checkVatResponse>',
            ),
          ),
        ],
        [
          'the answer without its number',
          xml(200, invalid.replace(/<ns2:vatNumber>[^<]*<\/ns2:vatNumber>/, '')),
        ],
        [
          'the answer without its country',
          xml(200, invalid.replace(/<ns2:countryCode>[^<]*<\/ns2:countryCode>/, '')),
        ],
        ['the answer with 404', xml(404, invalid)],
      ];
      for (const [what, reply] of cases) {
        server.use(() => reply);
        assertUnavailable(await lookup(), what);
      }
    });

    it('the documented answer stays valid:false', async () => {
      server.use(() => xml(200, invalid));
      assertAnswer(await lookup(), false, 'checkVatResponse valid:false');
    });
  });

  describe('Swiss UID register', () => {
    const lookup = (): Promise<RegistryResult> =>
      createBfsClient({ baseUrl: `${server.url}/V5.0/PublicServices.svc`, timeoutMs: 2_000 }).lookup({
        vat: { country: 'CH', national: '116281710' },
      });

    it('an HTML page, an empty body, JSON or another envelope is unavailable', async () => {
      const envelope = (inner: string) =>
        `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${inner}</s:Body></s:Envelope>`;
      const cases: Array<[string, Reply]> = [
        ...foreignBodies([404, 500]),
        ['an empty envelope', xml(200, envelope(''))],
        [
          'a response without its result',
          xml(200, envelope('<ValidateVatNumberResponse xmlns="http://www.uid.admin.ch/xmlns/uid-wse"/>')),
        ],
        [
          'a result that is not a boolean',
          xml(
            200,
            envelope(
              '<ValidateVatNumberResponse xmlns="http://www.uid.admin.ch/xmlns/uid-wse"><ValidateVatNumberResult>no</ValidateVatNumberResult></ValidateVatNumberResponse>',
            ),
          ),
        ],
        ['the answer with 404', xml(404, fixture('bfs/validate-false.xml'))],
      ];
      for (const [what, reply] of cases) {
        server.use(() => reply);
        assertUnavailable(await lookup(), what);
      }
    });

    it('the documented answer stays valid:false', async () => {
      server.use(() => xml(200, fixture('bfs/validate-false.xml')));
      assertAnswer(await lookup(), false, 'ValidateVatNumberResult false');
    });
  });

  describe('eVatR', () => {
    const confirm = (): Promise<EvatrResult> =>
      createEvatrClient({ baseUrl: `${server.url}/app`, timeoutMs: 2_000 }).confirm({
        requesterVat: 'DE136695976',
        vat: 'ATU12345678',
      });

    it('an HTML 404, an empty body or JSON of another shape is no answer', async () => {
      const cases: Array<[string, Reply]> = [
        ...foreignBodies([404]),
        [
          'a gateway error body with 404',
          json(404, '{"status":404,"error":"Not Found","path":"/app/v1/abfrage"}'),
        ],
        ['a status that is no eVatR status', json(404, '{"status":"NOT_FOUND"}')],
        ['an empty status', json(200, '{"status":"","anfrageZeitpunkt":"2026-05-20T10:00:00+02:00"}')],
      ];
      for (const [what, reply] of cases) {
        server.use(() => reply);
        const result = await confirm();
        const category = result.kind === 'answer' ? result.category : 'unavailable';
        assert.equal(category, 'unavailable', `${what}: got ${JSON.stringify(result)}`);
      }
    });

    it('the documented not-assigned answer stays invalid', async () => {
      server.use(() =>
        json(404, '{"anfrageZeitpunkt":"2026-05-20T10:00:00.123456789+02:00","status":"evatr-2001"}'),
      );
      const result = await confirm();
      assert.equal(result.kind, 'answer', JSON.stringify(result));
      assert.equal(result.kind === 'answer' && result.category, 'invalid');
    });
  });
});
