import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { EoriAnswer, EoriResult, EoriUnavailable } from '../../../src/registries/eori-port.js';
import { createEosClient } from '../../../src/registries/eos.js';
import { createEosSimulator, eosRequestDate, expectedEosAnswer } from '../../../src/simulators/eos.js';
import { type SimulatorServer, serveSimulators } from '../../../src/simulators/server.js';
import type { Reply } from './helpers.js';

const NOW = new Date('2026-03-10T10:15:30.000Z');
const now = () => NOW;

function answer(result: EoriResult | undefined): EoriAnswer {
  assert.equal(result?.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as EoriAnswer;
}

function unavailable(result: EoriResult | undefined): EoriUnavailable {
  assert.equal(result?.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as EoriUnavailable;
}

const _xml = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  body,
  headers: { 'content-type': 'text/xml;charset=utf-8', ...headers },
});
const _html = (status: number, body: string): Reply => ({
  status,
  body,
  headers: { 'content-type': 'text/html' },
});

describe('EOS client against the simulator', () => {
  let sim: SimulatorServer;
  let url: string;
  before(async () => {
    sim = serveSimulators({ eos: createEosSimulator({ now }) });
    const { base } = await sim.listen(0, '127.0.0.1');
    url = `${base}/eos/validation/services/validation`;
  });
  after(() => sim.close());
  beforeEach(() => {
    sim.control({ eos: { reset: true } });
  });
  const client = (timeoutMs = 2_000) => createEosClient({ url, timeoutMs, now });
  const stats = () =>
    sim.modules.eos?.stats?.() as {
      total: number;
      eorisReceived: string[];
      soapActions: Record<string, number>;
      largestRequest: number;
    };

  it('answers valid with the published trader, valid with nothing published, and not valid, in one request', async () => {
    const results = await client().check({ eoris: ['DE100', 'XI101', 'FR200'] });
    const published = answer(results[0]);
    assert.equal(published.valid, true);
    assert.equal(published.source, 'eos');
    assert.equal(published.eori, 'DE100');
    assert.equal(published.upstreamStatus, '0 Valid');
    const expected = expectedEosAnswer('DE100');
    assert.ok('status' in expected && expected.trader);
    assert.deepEqual(published.trader, {
      name: expected.trader.name,
      street: expected.trader.street,
      postalCode: expected.trader.postalCode,
      city: expected.trader.city,
      country: 'DE',
    });
    assert.deepEqual(published.checkedAt, NOW, 'the day EOS gives is today, so the check is now');
    const unpublished = answer(results[1]);
    assert.equal(unpublished.valid, true);
    assert.equal(unpublished.trader, null);
    const notValid = answer(results[2]);
    assert.equal(notValid.valid, false);
    assert.equal(notValid.trader, null);
    assert.equal(notValid.upstreamStatus, '1 Not valid');
    assert.equal(stats().total, 1);
    assert.deepEqual(stats().soapActions, { '': 1 }, 'the SOAPAction is sent empty, as the WSDL binds it');
  });

  it('sends at most 10 numbers per request, each number once, and answers in the order asked', async () => {
    const eoris = Array.from({ length: 23 }, (_, i) => `NL${String(500 + i)}`);
    const results = await client().check({ eoris: [...eoris, 'NL500', 'NL501'] });
    assert.equal(results.length, 25);
    assert.deepEqual(
      results.map((result) => result.eori),
      [...eoris, 'NL500', 'NL501'],
    );
    assert.deepEqual(results[23], results[0]);
    for (const [i, eori] of eoris.entries()) {
      const expected = expectedEosAnswer(eori);
      assert.ok('status' in expected);
      assert.equal(answer(results[i]).valid, expected.status === 0, eori);
    }
    assert.equal(stats().total, 3);
    assert.equal(stats().largestRequest, 10);
    assert.deepEqual(stats().eorisReceived, eoris);
  });

  it('never sends a number EOS does not check, and says why', async () => {
    const results = await client().check({
      eoris: ['GB123456789000', 'DE100', 'EL094019245', 'DE12+3', 'CH123'],
    });
    for (const index of [0, 2, 3, 4]) {
      const refused = unavailable(results[index]);
      assert.equal(refused.reason, 'rejected');
      assert.equal(refused.retryable, false);
      assert.match(refused.message, /not sent to EOS/);
    }
    assert.match(unavailable(results[0]).message, /HMRC checks/);
    assert.equal(answer(results[1]).valid, true);
    assert.deepEqual(stats().eorisReceived, ['DE100']);
    const none = await client().check({ eoris: ['GB123456789000'] });
    assert.equal(unavailable(none[0]).reason, 'rejected');
    assert.equal(stats().total, 1, 'a request of refused numbers only is not sent');
  });

  it('an errorReason makes that number alone unavailable', async () => {
    const results = await client().check({ eoris: ['DE301', 'DE200'] });
    const failed = unavailable(results[0]);
    assert.equal(failed.reason, 'down');
    assert.equal(failed.upstreamCode, 'errorReason');
    assert.equal(answer(results[1]).valid, false);
  });

  it('every failure of the whole request leaves each number unavailable, never not valid', async () => {
    const cases: [string, () => void, string[], EoriUnavailable['reason']][] = [
      ['server fault', () => {}, ['DE300', 'DE200'], 'down'],
      ['errorDescription', () => {}, ['DE302', 'DE200'], 'down'],
      ['maintenance page', () => {}, ['DE303', 'DE200'], 'down'],
      ['service down', () => sim.control({ eos: { serviceDown: true } }), ['DE200'], 'down'],
      ['down', () => sim.control({ eos: { down: ['EOS'] } }), ['DE200'], 'down'],
      [
        'throttled',
        () => sim.control({ eos: { rateLimit: { limit: 0, windowMs: 60_000 } } }),
        ['DE200'],
        'throttled',
      ],
      [
        'injected fault',
        () => sim.control({ eos: { errorRate: { EOS: { rate: 1, code: 'SOAP_FAULT' } } } }),
        ['DE200'],
        'down',
      ],
      [
        'injected errorDescription',
        () => sim.control({ eos: { errorRate: { EOS: { rate: 1, code: 'ERROR_DESCRIPTION' } } } }),
        ['DE200'],
        'down',
      ],
      [
        'maintenance page with 200',
        () => sim.control({ eos: { serviceDown: true, errorStatus: 200 } }),
        ['DE200'],
        'bad_response',
      ],
    ];
    for (const [label, setUp, eoris, reason] of cases) {
      sim.control({ eos: { reset: true } });
      setUp();
      const results = await client().check({ eoris });
      assert.equal(results.length, eoris.length);
      for (const result of results) {
        const failed = unavailable(result);
        assert.equal(failed.reason, reason, `${label}: ${failed.message}`);
      }
    }
  });

  it('throttling carries the Retry-After', async () => {
    sim.control({ eos: { rateLimit: { limit: 0, windowMs: 60_000 } } });
    const [result] = await client().check({ eoris: ['DE200'] });
    assert.equal(unavailable(result).retryAfterSeconds, 1);
  });

  it('no answer in time, or a caller who stops waiting, is a timeout', async () => {
    const [hung] = await client(150).check({ eoris: ['DE304', 'DE200'] });
    assert.equal(unavailable(hung).reason, 'timeout');
    sim.control({ eos: { hang: true } });
    const controller = new AbortController();
    const pending = client(10_000).check({ eoris: ['DE200'], signal: controller.signal });
    controller.abort();
    const [cancelled] = await pending;
    assert.equal(unavailable(cancelled).reason, 'timeout');
    assert.match(unavailable(cancelled).message, /cancelled/);
  });

  it('answers as Metro does: dispatch by payload, a fault naming the SOAPAction when the payload is no operation', async () => {
    const envelope = (body: string) =>
      `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:e="http://eori.ws.eos.dds.s/"><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`;
    const post = (body: string, headers: Record<string, string>) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'text/xml', ...headers }, body });
    const otherAction = await post(envelope('<e:validateEORI><e:eori>DE200</e:eori></e:validateEORI>'), {
      soapaction: '"urn:checkVat"',
    });
    assert.equal(otherAction.status, 200);
    assert.match(await otherAction.text(), /<statusDescr>Not valid<\/statusDescr>/);
    const wrongPayload = await post(envelope('<validateEORI><eori>DE200</eori></validateEORI>'), {
      soapaction: '"urn:checkVat"',
    });
    assert.equal(wrongPayload.status, 500);
    assert.match(
      await wrongPayload.text(),
      /<faultcode>S:Client<\/faultcode><faultstring>Cannot find dispatch method for Request=\[SOAPAction="urn:checkVat",Payload=\{\}validateEORI\]<\/faultstring>/,
    );
    const unqualified = await post(envelope('<e:validateEORI><eori>DE200</eori></e:validateEORI>'), {
      soapaction: '',
    });
    assert.doesNotMatch(await unqualified.text(), /<result>/, 'unqualified eori children are not read');
    const json = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(json.status, 415);
    assert.match(
      await json.text(),
      /Unsupported Content-Type: application\/json Supported ones are: \[text\/xml\]/,
    );
  });

  it('answers more than 10 numbers with an errorDescription, which the client reads as unavailable', async () => {
    const eoris = Array.from({ length: 11 }, (_, i) => `<e:eori>DE${200 + i}</e:eori>`).join('');
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/xml;charset=UTF-8', soapaction: '' },
      body: `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:e="http://eori.ws.eos.dds.s/"><soapenv:Body><e:validateEORI>${eoris}</e:validateEORI></soapenv:Body></soapenv:Envelope>`,
    });
    const body = await response.text();
    assert.match(body, /<errorDescription>/);
    assert.doesNotMatch(body, /<result>/);
  });

  it('writes requestDate as dd/MM/yyyy on Brussels time', () => {
    assert.equal(eosRequestDate(new Date('2026-03-10T23:30:00Z')), '11/03/2026');
    assert.equal(eosRequestDate(new Date('2026-07-01T21:59:00Z')), '01/07/2026');
  });
});
