import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EoriAnswer, EoriResult, EoriUnavailable } from '../../../src/registries/eori-port.js';
import { createEosClient, parseEosDate } from '../../../src/registries/eos.js';
import { closedPortUrl, type FixtureServer, fixture, type Reply, startFixtureServer } from './helpers.js';

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

const xml = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  body,
  headers: { 'content-type': 'text/xml;charset=utf-8', ...headers },
});
const html = (status: number, body: string): Reply => ({
  status,
  body,
  headers: { 'content-type': 'text/html' },
});

describe('EOS client against recorded answers', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer(() => xml(200, fixture('eos/not-valid-recorded.xml')));
  });
  after(() => server.close());
  const client = (options: { timeoutMs?: number; maxBodyBytes?: number } = {}) =>
    createEosClient({ url: `${server.url}/eos`, timeoutMs: options.timeoutMs ?? 2_000, now, ...options });
  const serve = (reply: Reply | 'hang' | 'reset') => {
    server.use(() => reply);
    server.requests.length = 0;
  };

  it('posts validateEORI with one qualified eori per number, text/xml and an empty SOAPAction', async () => {
    serve(xml(200, fixture('eos/not-valid-recorded.xml')));
    await client().check({ eoris: ['DE123456', 'IT123456789'] });
    const request = server.requests[0];
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.match(String(request.headers['content-type']), /^text\/xml/);
    assert.equal(request.headers.soapaction, '');
    assert.match(
      request.body,
      /<eos:validateEORI><eos:eori>DE123456<\/eos:eori><eos:eori>IT123456789<\/eos:eori><\/eos:validateEORI>/,
    );
    assert.match(request.body, /xmlns:eos="http:\/\/eori\.ws\.eos\.dds\.s\/"/);
  });

  it('reads the recorded answer: both not valid, checked on the day EOS gives (Brussels time)', async () => {
    serve(xml(200, fixture('eos/not-valid-recorded.xml')));
    const results = await client().check({ eoris: ['DE123456', 'IT123456789'] });
    for (const result of results) {
      const read = answer(result);
      assert.equal(read.valid, false);
      assert.equal(read.trader, null);
      assert.deepEqual(read.checkedAt, new Date('2024-06-24T22:00:00.000Z'));
    }
  });

  it('reads name and address where the trader published them, and nothing where not', async () => {
    serve(xml(200, fixture('eos/valid-published.xml')));
    const [published, notValid] = await client().check({ eoris: ['FR301272811', 'DE123456'] });
    assert.deepEqual(answer(published).trader, {
      name: 'EXEMPLE INDUSTRIES SAS',
      street: '12 RUE DE LA PAIX',
      postalCode: '75002',
      city: 'PARIS',
      country: 'FR',
    });
    assert.equal(answer(notValid).valid, false);
    serve(xml(200, fixture('eos/valid-unpublished.xml')));
    const [unpublished] = await client().check({ eoris: ['XI123456789000'] });
    assert.equal(answer(unpublished).valid, true);
    assert.equal(answer(unpublished).trader, null);
  });

  it('an errorReason on one result leaves that number alone unavailable', async () => {
    serve(xml(200, fixture('eos/error-reason.xml')));
    const [failed, other] = await client().check({ eoris: ['DE123456', 'IT123456789'] });
    assert.equal(unavailable(failed).reason, 'down');
    assert.match(unavailable(failed).message, /could not be completed/);
    assert.equal(answer(other).valid, false);
  });

  it('no failure of EOS is ever read as not valid', async () => {
    const eoris = ['DE123456', 'IT123456789'];
    const cases: [string, Reply | 'hang' | 'reset', EoriUnavailable['reason']][] = [
      ['client fault (dispatch)', xml(500, fixture('eos/fault-dispatch.xml')), 'rejected'],
      ['server fault', xml(500, fixture('eos/fault-server.xml')), 'down'],
      ['server fault with 200', xml(200, fixture('eos/fault-server.xml')), 'down'],
      ['errorDescription', xml(200, fixture('eos/error-description.xml')), 'down'],
      ['maintenance page 503', html(503, fixture('eos/html-503.html')), 'down'],
      ['maintenance page 200', html(200, fixture('eos/html-503.html')), 'bad_response'],
      ['throttled', html(429, 'Too Many Requests'), 'throttled'],
      ['gateway timeout', html(504, ''), 'timeout'],
      ['truncated', xml(200, fixture('eos/truncated.xml')), 'bad_response'],
      ['empty', xml(200, ''), 'bad_response'],
      ['answer with 500', xml(500, fixture('eos/not-valid-recorded.xml')), 'down'],
      ['answer with 404', xml(404, fixture('eos/not-valid-recorded.xml')), 'bad_response'],
      ['another envelope', xml(200, otherEnvelope()), 'bad_response'],
      ['no return', xml(200, emptyResponse()), 'bad_response'],
      [
        'status 2',
        xml(200, withResults(result('DE123456', '2', 'Unknown'), result('IT123456789', '2', 'Unknown'))),
        'bad_response',
      ],
      [
        'status 0 but Not valid',
        xml(200, withResults(result('DE123456', '0', 'Not valid'), result('IT123456789', '0', 'Not valid'))),
        'bad_response',
      ],
      [
        'status 1 but Valid',
        xml(200, withResults(result('DE123456', '1', 'Valid'), result('IT123456789', '1', 'Valid'))),
        'bad_response',
      ],
      [
        'no status',
        xml(200, withResults(result('DE123456', '', 'Not valid'), result('IT123456789', '', 'Not valid'))),
        'bad_response',
      ],
      [
        'results for other numbers',
        xml(200, withResults(result('DE999', '1', 'Not valid'), result('IT999', '1', 'Not valid'))),
        'bad_response',
      ],
      ['connection reset', 'reset', 'down'],
      ['no answer', 'hang', 'timeout'],
    ];
    for (const [label, reply, reason] of cases) {
      serve(reply);
      const results = await client({ timeoutMs: 200 }).check({ eoris });
      for (const result of results) {
        const failed = unavailable(result);
        assert.equal(failed.reason, reason, `${label}: ${failed.message}`);
      }
    }
    serve(xml(200, fixture('eos/not-valid-recorded.xml')));
    const [refused] = await createEosClient({ url: await closedPortUrl(), timeoutMs: 500, now }).check({
      eoris,
    });
    assert.equal(unavailable(refused).reason, 'down');
  });

  it('a number missing from the answer is unavailable alone', async () => {
    serve(xml(200, withResults(result('DE123456', '1', 'Not valid'))));
    const [present, missing] = await client().check({ eoris: ['DE123456', 'IT123456789'] });
    assert.equal(answer(present).valid, false);
    assert.equal(unavailable(missing).reason, 'bad_response');
    assert.match(unavailable(missing).message, /without a result for IT123456789/);
  });

  it('does not read an answer larger than the cap', async () => {
    serve(xml(200, fixture('eos/not-valid-recorded.xml') + ' '.repeat(4096)));
    const [result] = await client({ maxBodyBytes: 2048 }).check({ eoris: ['DE123456'] });
    assert.equal(unavailable(result).reason, 'bad_response');
  });
});

describe('EOS requestDate', () => {
  it('dd/MM/yyyy is a Brussels day: now when today, else its start; never ahead of now', () => {
    assert.deepEqual(parseEosDate('10/03/2026', NOW), NOW);
    assert.deepEqual(parseEosDate('09/03/2026', NOW), new Date('2026-03-08T23:00:00Z'));
    assert.deepEqual(parseEosDate('25/06/2024', NOW), new Date('2024-06-24T22:00:00Z'));
    assert.deepEqual(parseEosDate('11/03/2027', NOW), NOW, 'a day ahead is not the time of this check');
    assert.deepEqual(parseEosDate('31/02/2026', NOW), NOW);
    assert.deepEqual(parseEosDate('not a date', NOW), NOW);
    assert.deepEqual(parseEosDate(null, NOW), NOW);
    assert.deepEqual(parseEosDate('2026-03-09+01:00', NOW), new Date('2026-03-08T23:00:00Z'));
  });
});

const ENVELOPE_START =
  "<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S=\"http://schemas.xmlsoap.org/soap/envelope/\"><S:Body>";
const ENVELOPE_END = '</S:Body></S:Envelope>';

function result(eori: string, status: string, description: string): string {
  return `<result><eori>${eori}</eori><status>${status}</status><statusDescr>${description}</statusDescr></result>`;
}

function withResults(...results: string[]): string {
  return `${ENVELOPE_START}<ns0:validateEORIResponse xmlns:ns0="http://eori.ws.eos.dds.s/"><return><requestDate>25/06/2024</requestDate>${results.join('')}</return></ns0:validateEORIResponse>${ENVELOPE_END}`;
}

function emptyResponse(): string {
  return `${ENVELOPE_START}<ns0:validateEORIResponse xmlns:ns0="http://eori.ws.eos.dds.s/"/>${ENVELOPE_END}`;
}

function otherEnvelope(): string {
  return `${ENVELOPE_START}<ns2:checkVatResponse xmlns:ns2="urn:ec.europa.eu:taxud:vies:services:checkVat:types"><ns2:valid>false</ns2:valid></ns2:checkVatResponse>${ENVELOPE_END}`;
}
