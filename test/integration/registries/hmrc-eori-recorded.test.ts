import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EoriAnswer, EoriResult, EoriUnavailable } from '../../../src/registries/eori-port.js';
import { createHmrcEoriClient } from '../../../src/registries/hmrc-eori.js';
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

const json = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  body,
  headers: { 'content-type': 'application/json', ...headers },
});
const text = (status: number, body: string, type = 'text/plain; charset=utf-8'): Reply => ({
  status,
  body,
  headers: { 'content-type': type },
});

describe('HMRC EORI client against recorded answers', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer(() => json(200, fixture('hmrc-eori/check-multiple-200.json')));
  });
  after(() => server.close());
  const client = (options: { timeoutMs?: number; maxBodyBytes?: number } = {}) =>
    createHmrcEoriClient({
      baseUrl: `${server.url}/`,
      timeoutMs: options.timeoutMs ?? 2_000,
      now,
      ...options,
    });
  const serve = (reply: Reply | 'hang' | 'reset') => {
    server.use(() => reply);
    server.requests.length = 0;
  };
  const documented = ['GB123456789133', 'GB123456729136', 'GB8392848394939'];

  it('posts {"eoris": [...]} with the version 1.0 Accept header and no authorisation', async () => {
    serve(json(200, fixture('hmrc-eori/check-multiple-200.json')));
    await client().check({ eoris: documented });
    const request = server.requests[0];
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/customs/eori/lookup/check-multiple-eori');
    assert.equal(request.headers.accept, 'application/vnd.hmrc.1.0+json');
    assert.match(String(request.headers['content-type']), /^application\/json/);
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(request.body), { eoris: documented });
  });

  it('reads the documented answer: details, no details, not valid, and processingDate', async () => {
    serve(json(200, fixture('hmrc-eori/check-multiple-200.json')));
    const [withDetails, withoutDetails, notValid] = await client().check({ eoris: documented });
    assert.deepEqual(answer(withDetails), {
      kind: 'answer',
      source: 'hmrc',
      eori: 'GB123456789133',
      valid: true,
      trader: {
        name: 'Aviationstr',
        street: '141B Halsey Place',
        postalCode: 'HD98 2LI',
        city: 'Huddersfield',
        country: null,
      },
      checkedAt: new Date('2021-01-05T09:54:08Z'),
      upstreamStatus: 'valid: true',
    });
    assert.equal(answer(withoutDetails).valid, true);
    assert.equal(answer(withoutDetails).trader, null);
    assert.equal(answer(notValid).valid, false);
    assert.equal(answer(notValid).trader, null);
  });

  it('a number the answer does not name has no answer, even when the list has as many items', async () => {
    // HMRC's own example asks for GB123456789136 and answers for GB123456729136.
    serve(json(200, fixture('hmrc-eori/check-multiple-200.json')));
    const asked = ['GB123456789133', 'GB123456789136', 'GB8392848394939'];
    const [first, second, third] = await client().check({ eoris: asked });
    assert.equal(answer(first).valid, true);
    assert.equal(unavailable(second).reason, 'bad_response');
    assert.match(unavailable(second).message, /without a result for GB123456789136/);
    assert.equal(answer(third).valid, false);
  });

  it('an address without a postcode, as the backend passes it on', async () => {
    serve(json(200, fixture('hmrc-eori/check-200-no-postcode.json')));
    const [result] = await client().check({ eoris: ['GB025115110987655'] });
    const read = answer(result);
    assert.equal(read.trader?.postalCode, null);
    assert.equal(read.trader?.street, '999 High Street');
    assert.deepEqual(read.checkedAt, new Date('2025-07-14T09:02:31Z'));
  });

  it('no failure of HMRC is ever read as not valid', async () => {
    const eoris = ['GB123456789002', 'GB123456789008'];
    const cases: [string, Reply | 'hang' | 'reset', EoriUnavailable['reason'], string?][] = [
      [
        '400 documented body',
        json(400, fixture('hmrc-eori/400-invalid-request.json')),
        'rejected',
        'INVALID_REQUEST',
      ],
      ['400 plain text', text(400, fixture('hmrc-eori/400-plain.txt')), 'rejected', 'HTTP_400'],
      ['406', json(406, fixture('hmrc-eori/406-accept-header.json')), 'rejected', 'ACCEPT_HEADER_INVALID'],
      ['403 plain text', text(403, 'Service Unavailable'), 'rejected', 'HTTP_403'],
      ['429', json(429, fixture('hmrc-eori/429-throttled.json')), 'throttled', 'MESSAGE_THROTTLED_OUT'],
      ['500', json(500, fixture('hmrc-eori/500-internal.json')), 'down', 'INTERNAL_SERVER_ERROR'],
      ['502', json(502, fixture('hmrc-eori/502-upstream.json')), 'down', 'HTTP_502'],
      ['503', json(503, fixture('hmrc-eori/503-maintenance.json')), 'down', 'SCHEDULED_MAINTENANCE'],
      ['503 HTML', text(503, fixture('hmrc-eori/html-503.html'), 'text/html'), 'down'],
      ['504', json(504, '{"code":"GATEWAY_TIMEOUT","message":"Gateway timeout"}'), 'timeout'],
      [
        '404 platform',
        json(404, fixture('hmrc-eori/404-platform.json')),
        'bad_response',
        'MATCHING_RESOURCE_NOT_FOUND',
      ],
      ['200 HTML', text(200, fixture('hmrc-eori/html-503.html'), 'text/html'), 'bad_response'],
      ['200 object', json(200, '{"eori":"GB123456789002","valid":false}'), 'bad_response'],
      [
        '200 truncated',
        json(200, fixture('hmrc-eori/check-multiple-200.json').slice(0, 120)),
        'bad_response',
      ],
      ['200 empty', json(200, ''), 'bad_response'],
      [
        '200 valid not boolean',
        json(200, '[{"eori":"GB123456789002","valid":"false"},{"eori":"GB123456789008","valid":"false"}]'),
        'bad_response',
      ],
      ['200 other numbers', json(200, '[{"eori":"GB999999999999","valid":false}]'), 'bad_response'],
      ['connection reset', 'reset', 'down'],
      ['no answer', 'hang', 'timeout'],
    ];
    for (const [label, reply, reason, code] of cases) {
      serve(reply);
      const results = await client({ timeoutMs: 200 }).check({ eoris });
      for (const result of results) {
        const failed = unavailable(result);
        assert.equal(failed.reason, reason, `${label}: ${failed.message}`);
        if (code) assert.equal(failed.upstreamCode, code, label);
      }
    }
    const [refused] = await createHmrcEoriClient({
      baseUrl: await closedPortUrl(),
      timeoutMs: 500,
      now,
    }).check({
      eoris,
    });
    assert.equal(unavailable(refused).reason, 'down');
  });

  it('a 400 is not retried and 429 says when to try again', async () => {
    serve(json(400, fixture('hmrc-eori/400-invalid-request.json')));
    const [rejected] = await client().check({ eoris: ['GB123456789002'] });
    assert.equal(unavailable(rejected).retryable, false);
    serve(json(429, fixture('hmrc-eori/429-throttled.json'), { 'retry-after': '30' }));
    const [throttled] = await client().check({ eoris: ['GB123456789002'] });
    assert.equal(unavailable(throttled).retryable, true);
    assert.equal(unavailable(throttled).retryAfterSeconds, 30);
  });

  it('does not read an answer larger than the cap', async () => {
    serve(json(200, `${fixture('hmrc-eori/check-multiple-200.json')}${' '.repeat(4096)}`));
    const [result] = await client({ maxBodyBytes: 2048 }).check({ eoris: ['GB123456789133'] });
    assert.equal(unavailable(result).reason, 'bad_response');
  });
});
