import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { EoriAnswer, EoriResult, EoriUnavailable } from '../../../src/registries/eori-port.js';
import { createHmrcEoriClient, HMRC_EORI_ACCEPT } from '../../../src/registries/hmrc-eori.js';
import { createHmrcSimulator } from '../../../src/simulators/hmrc.js';
import {
  createHmrcEoriSimulator,
  expectedHmrcEoriAnswer,
  HMRC_EORI_MESSAGES,
  hmrcProcessingDate,
} from '../../../src/simulators/hmrc-eori.js';
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

const _json = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  body,
  headers: { 'content-type': 'application/json', ...headers },
});
const _text = (status: number, body: string, type = 'text/plain; charset=utf-8'): Reply => ({
  status,
  body,
  headers: { 'content-type': type },
});

describe('HMRC EORI client against the simulator', () => {
  let sim: SimulatorServer;
  let base: string;
  before(async () => {
    sim = serveSimulators({ hmrc: createHmrcSimulator({ now }), hmrcEori: createHmrcEoriSimulator({ now }) });
    ({ base } = await sim.listen(0, '127.0.0.1'));
  });
  after(() => sim.close());
  beforeEach(() => {
    sim.control({ hmrcEori: { reset: true } });
  });
  const hmrcUrl = () => `${base}/hmrc`;
  const endpoint = () => `${hmrcUrl()}/customs/eori/lookup/check-multiple-eori`;
  const client = (timeoutMs = 2_000, fetchFn?: typeof fetch) =>
    createHmrcEoriClient({ baseUrl: hmrcUrl(), timeoutMs, now, ...(fetchFn ? { fetch: fetchFn } : {}) });
  const stats = () =>
    sim.modules.hmrcEori?.stats?.() as { total: number; eorisReceived: string[]; largestRequest: number };

  it('answers by the sandbox rule: details for last digits 2 to 5, none for 0, 1, 6, 7, not valid for 8 and 9', async () => {
    const eoris = ['GB123456789000', 'GB123456789002', 'GB123456789005', 'GB123456789006', 'GB123456789008'];
    const results = await client().check({ eoris });
    const withoutDetails = answer(results[0]);
    assert.equal(withoutDetails.valid, true);
    assert.equal(withoutDetails.source, 'hmrc');
    assert.equal(withoutDetails.trader, null);
    assert.deepEqual(withoutDetails.checkedAt, NOW);
    const withDetails = answer(results[1]);
    const expected = expectedHmrcEoriAnswer('GB123456789002').companyDetails;
    assert.ok(expected);
    assert.deepEqual(withDetails.trader, {
      name: expected.traderName,
      street: expected.address.streetAndNumber,
      postalCode: expected.address.postcode,
      city: expected.address.cityName,
      country: null,
    });
    const noPostcode = answer(results[2]);
    assert.equal(noPostcode.valid, true);
    assert.ok(noPostcode.trader?.name);
    assert.equal(noPostcode.trader?.postalCode, null, 'HMRC gives "" for an address without a postcode');
    assert.equal(answer(results[3]).trader, null);
    const notValid = answer(results[4]);
    assert.equal(notValid.valid, false);
    assert.equal(notValid.upstreamStatus, 'valid: false');
    assert.equal(stats().total, 1);
  });

  it('gives the Developer Hub example for its number', async () => {
    const [result] = await client().check({ eoris: ['GB123456789133'] });
    assert.deepEqual(answer(result).trader, {
      name: 'Aviationstr',
      street: '141B Halsey Place',
      postalCode: 'HD98 2LI',
      city: 'Huddersfield',
      country: null,
    });
  });

  it('never sends a malformed or XI number, which would fail the whole request, and says why', async () => {
    const results = await client().check({
      eoris: ['GB123456789002', 'GB123456789', 'XI123456789000', 'GBGD123456789000', 'GB123456789008'],
    });
    assert.equal(answer(results[0]).valid, true);
    for (const index of [1, 2, 3]) {
      const refused = unavailable(results[index]);
      assert.equal(refused.reason, 'rejected');
      assert.equal(refused.retryable, false);
      assert.match(refused.message, /not sent to HMRC/);
    }
    assert.match(unavailable(results[2]).message, /XI number.*EOS/);
    assert.equal(answer(results[4]).valid, false);
    assert.deepEqual(stats().eorisReceived, ['GB123456789002', 'GB123456789008']);
  });

  it('as HMRC does, the simulator fails the whole request for one malformed or XI number', async () => {
    const post = (eoris: string[]) =>
      fetch(endpoint(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: HMRC_EORI_ACCEPT },
        body: JSON.stringify({ eoris }),
      });
    const malformed = await post(['GB123456789002', 'GB123']);
    assert.equal(malformed.status, 400);
    assert.deepEqual(await malformed.json(), {
      code: 'INVALID_REQUEST',
      message: HMRC_EORI_MESSAGES.pattern,
    });
    const xi = await post(['GB123456789002', 'XI123456789000']);
    assert.deepEqual(await xi.json(), { code: 'INVALID_REQUEST', message: HMRC_EORI_MESSAGES.xi });
    assert.equal((await post([])).status, 400);
    const tooMany = await post(Array.from({ length: 11 }, (_, i) => `GB1234567890${10 + i}`));
    assert.deepEqual(await tooMany.json(), { code: 'INVALID_REQUEST', message: HMRC_EORI_MESSAGES.tooMany });
    sim.control({ hmrcEori: { plainTextErrors: true } });
    const plain = await post(['GB123']);
    assert.equal(plain.status, 400);
    assert.match(String(plain.headers.get('content-type')), /^text\/plain/);
    assert.equal(await plain.text(), HMRC_EORI_MESSAGES.pattern);
  });

  it('the platform answers 406 without the Accept header of version 1.0; the client reads it as a refusal', async () => {
    const bare = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"eoris":["GB123456789002"]}',
    });
    assert.equal(bare.status, 406);
    assert.deepEqual(await bare.json(), {
      code: 'ACCEPT_HEADER_INVALID',
      message: 'The accept header is missing or invalid',
    });
    const withoutAccept: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.delete('accept');
      return fetch(input, { ...init, headers });
    };
    const [result] = await client(2_000, withoutAccept).check({ eoris: ['GB123456789002'] });
    const refused = unavailable(result);
    assert.equal(refused.reason, 'rejected');
    assert.equal(refused.upstreamCode, 'ACCEPT_HEADER_INVALID');
  });

  it('sends at most 10 numbers per request, each number once, in the order asked', async () => {
    const eoris = Array.from({ length: 25 }, (_, i) => `GB1234567891${String(i).padStart(2, '0')}`);
    const results = await client().check({ eoris: [...eoris, eoris[0] as string] });
    assert.equal(results.length, 26);
    assert.deepEqual(
      results.map((result) => result.eori),
      [...eoris, eoris[0]],
    );
    for (const [i, eori] of eoris.entries()) {
      assert.equal(answer(results[i]).valid, expectedHmrcEoriAnswer(eori).valid, eori);
    }
    assert.equal(stats().total, 3);
    assert.equal(stats().largestRequest, 10);
    assert.deepEqual(stats().eorisReceived, eoris);
  });

  it('no failure of HMRC is ever read as not valid', async () => {
    const cases: [string, () => void, string[], EoriUnavailable['reason'], string?][] = [
      [
        'throttled (429)',
        () => sim.control({ hmrcEori: { errorRate: { GB: { rate: 1, code: 'MESSAGE_THROTTLED_OUT' } } } }),
        ['GB123456789008'],
        'throttled',
        'MESSAGE_THROTTLED_OUT',
      ],
      [
        'rate limit',
        () => sim.control({ hmrcEori: { rateLimit: { limit: 0, windowMs: 60_000 } } }),
        ['GB123456789008'],
        'throttled',
        'MESSAGE_THROTTLED_OUT',
      ],
      [
        'maintenance (503)',
        () => sim.control({ hmrcEori: { down: ['GB'] } }),
        ['GB123456789008'],
        'down',
        'SCHEDULED_MAINTENANCE',
      ],
      [
        'internal error (500)',
        () => sim.control({ hmrcEori: { errorRate: { GB: { rate: 1, code: 'INTERNAL_SERVER_ERROR' } } } }),
        ['GB123456789008'],
        'down',
        'INTERNAL_SERVER_ERROR',
      ],
      [
        'gateway timeout (504)',
        () => sim.control({ hmrcEori: { errorRate: { GB: { rate: 1, code: 'GATEWAY_TIMEOUT' } } } }),
        ['GB123456789008'],
        'timeout',
      ],
      ['HTML 503 page', () => sim.control({ hmrcEori: { serviceDown: true } }), ['GB123456789008'], 'down'],
      ['backend 400 reported as 500', () => {}, ['GB123456789007'], 'down', 'HTTP_500'],
      ['backend 500 reported as 502', () => {}, ['GB123456789009'], 'down', 'HTTP_502'],
    ];
    for (const [label, setUp, eoris, reason, code] of cases) {
      sim.control({ hmrcEori: { reset: true } });
      setUp();
      const results = await client().check({ eoris });
      for (const result of results) {
        const failed = unavailable(result);
        assert.equal(failed.reason, reason, `${label}: ${failed.message}`);
        if (code) assert.equal(failed.upstreamCode, code, label);
      }
    }
  });

  it('the stub numbers that fail upstream are unavailable, never not valid', async () => {
    const [forbidden] = await client().check({ eoris: ['GB123456789008'] });
    const failed = unavailable(forbidden);
    assert.equal(failed.reason, 'down');
    assert.equal(failed.upstreamCode, 'HTTP_500');
    const [asPair] = await client().check({ eoris: ['GB123456789008', 'GB123456789002'] });
    assert.equal(answer(asPair).valid, false, 'with another number it is the sandbox rule again');
  });

  it('no answer in time is a timeout', async () => {
    sim.control({ hmrcEori: { hang: true } });
    const [result] = await client(150).check({ eoris: ['GB123456789002'] });
    assert.equal(unavailable(result).reason, 'timeout');
  });

  it('writes processingDate as HMRC does: seconds and the London offset', () => {
    assert.equal(hmrcProcessingDate(new Date('2021-01-05T09:54:08.123Z')), '2021-01-05T09:54:08+00:00');
    assert.equal(hmrcProcessingDate(new Date('2026-07-14T09:02:31Z')), '2026-07-14T10:02:31+01:00');
  });

  it('leaves the VAT check of the HMRC simulator where it was', async () => {
    const response = await fetch(`${hmrcUrl()}/organisations/vat/check-vat-number/lookup/553557881`, {
      headers: { accept: 'application/vnd.hmrc.2.0+json' },
    });
    assert.equal(response.status, 401, 'the VAT API still asks for a token');
  });
});
