import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createHmrcClient } from '../../../src/registries/hmrc.js';
import type { RegistryAnswer, RegistryResult, RegistryUnavailable } from '../../../src/registries/port.js';
import { hmrcRegistered } from '../../../src/simulators/hmrc.js';
import type { SimulatorServer, SimulatorUrls } from '../../../src/simulators/server.js';
import {
  type FixtureServer,
  fixture,
  type Handler,
  type RecordedRequest,
  startFixtureServer,
  startSimulator,
} from './helpers.js';

function asAnswer(result: RegistryResult): RegistryAnswer {
  assert.equal(result.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as RegistryAnswer;
}

function asUnavailable(result: RegistryResult): RegistryUnavailable {
  assert.equal(result.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as RegistryUnavailable;
}

function findVrn(registered: boolean): string {
  for (let n = 100_000_001; ; n++) if (hmrcRegistered(String(n)) === registered) return String(n);
}

const CREDENTIALS = { clientId: 'client-123', clientSecret: 'secret-456' };

describe('HMRC client', () => {
  it('answers not_configured without credentials, naming the settings, without calling HMRC', async () => {
    let called = false;
    const fetchSpy: typeof fetch = async () => {
      called = true;
      return new Response('{}');
    };
    for (const credentials of [
      {},
      { clientId: 'x' },
      { clientSecret: 'y' },
      { clientId: ' ', clientSecret: ' ' },
    ]) {
      const client = createHmrcClient({
        baseUrl: 'http://127.0.0.1:9',
        timeoutMs: 100,
        fetch: fetchSpy,
        ...credentials,
      });
      const result = asUnavailable(await client.lookup({ vat: { country: 'GB', national: '553557881' } }));
      assert.equal(result.reason, 'not_configured');
      assert.equal(result.retryable, false);
      assert.match(result.message, /HMRC_CLIENT_ID/);
      assert.match(result.message, /HMRC_CLIENT_SECRET/);
    }
    assert.equal(called, false);
  });

  describe('against the simulator', () => {
    let sim: SimulatorServer;
    let urls: SimulatorUrls;
    let close: () => Promise<void>;
    before(async () => {
      ({ sim, urls, close } = await startSimulator());
    });
    after(() => close());
    beforeEach(() => {
      sim.control({ hmrc: { reset: true } });
    });
    const client = (timeoutMs = 2_000) =>
      createHmrcClient({ baseUrl: urls.HMRC_URL, timeoutMs, ...CREDENTIALS });

    it('answers the sandbox VRN with name and address', async () => {
      const answer = asAnswer(await client().lookup({ vat: { country: 'GB', national: '553557881' } }));
      assert.equal(answer.valid, true);
      assert.equal(answer.source, 'hmrc');
      assert.equal(answer.name, 'Credite Sberger Donal Inc.');
      assert.equal(answer.address, '131B Barton Hamlet\nSW97 5CK');
      assert.equal(answer.consultationNumber, null);
    });

    it('answers valid:false for an unregistered VRN (404 NOT_FOUND)', async () => {
      const answer = asAnswer(await client().lookup({ vat: { country: 'GB', national: findVrn(false) } }));
      assert.equal(answer.valid, false);
    });

    it('returns a consultation number with a UK requester, and looks up branches by their first 9 digits', async () => {
      const target = `${findVrn(true)}001`;
      const answer = asAnswer(
        await client().lookup({
          vat: { country: 'GB', national: target },
          requester: { country: 'GB', national: '146295999727' },
        }),
      );
      assert.equal(answer.valid, true);
      assert.match(answer.consultationNumber ?? '', /^sim/);
    });

    it('rejects an unregistered requester (403) without refreshing the token', async () => {
      const result = asUnavailable(
        await client().lookup({
          vat: { country: 'GB', national: '553557881' },
          requester: { country: 'GB', national: findVrn(false) },
        }),
      );
      assert.equal(result.reason, 'rejected');
      assert.equal(result.upstreamCode, 'INVALID_REQUEST');
      const stats = sim.modules.hmrc?.stats?.() as { tokenRequests: number };
      assert.equal(stats.tokenRequests, 1);
    });

    it('reports throttling, maintenance and hangs', async () => {
      sim.control({ hmrc: { errorRate: { GB: { rate: 1, code: 'MESSAGE_THROTTLED_OUT' } } } });
      const throttled = asUnavailable(
        await client().lookup({ vat: { country: 'GB', national: '553557881' } }),
      );
      assert.equal(throttled.reason, 'throttled');
      assert.equal(throttled.upstreamCode, 'MESSAGE_THROTTLED_OUT');
      sim.control({ hmrc: { reset: true, down: ['GB'] } });
      const down = asUnavailable(await client().lookup({ vat: { country: 'GB', national: '553557881' } }));
      assert.equal(down.reason, 'down');
      assert.equal(down.upstreamCode, 'SCHEDULED_MAINTENANCE');
      sim.control({ hmrc: { reset: true, hang: true } });
      const hung = asUnavailable(await client(150).lookup({ vat: { country: 'GB', national: '553557881' } }));
      assert.equal(hung.reason, 'timeout');
    });

    it('gets a new token once when the old one was revoked', async () => {
      const c = client();
      asAnswer(await c.lookup({ vat: { country: 'GB', national: '553557881' } }));
      sim.control({ hmrc: { revokeTokens: true } });
      asAnswer(await c.lookup({ vat: { country: 'GB', national: '553557881' } }));
      const stats = sim.modules.hmrc?.stats?.() as { tokenRequests: number };
      assert.equal(stats.tokenRequests, 2);
    });

    it('rejects wrong credentials at the token endpoint', async () => {
      const {
        sim: strict,
        urls: strictUrls,
        close: closeStrict,
      } = await startSimulator({ hmrc: CREDENTIALS });
      try {
        const wrong = createHmrcClient({
          baseUrl: strictUrls.HMRC_URL,
          timeoutMs: 2_000,
          clientId: 'client-123',
          clientSecret: 'wrong',
        });
        const result = asUnavailable(await wrong.lookup({ vat: { country: 'GB', national: '553557881' } }));
        assert.equal(result.reason, 'rejected');
        assert.equal(result.upstreamCode, 'invalid_client');
        assert.doesNotMatch(result.message, /wrong/);
        assert.ok(strict.modules.hmrc);
      } finally {
        await closeStrict();
      }
    });
  });

  describe('against recorded bodies', () => {
    let server: FixtureServer;
    let tokenCalls: RecordedRequest[];
    let lookup: (request: RecordedRequest) => ReturnType<Handler>;
    let tokenReply: () => ReturnType<Handler>;

    before(async () => {
      server = await startFixtureServer((request) => {
        if (request.url === '/oauth/token') {
          tokenCalls.push(request);
          return tokenReply();
        }
        return lookup(request);
      });
    });
    after(() => server.close());
    beforeEach(() => {
      tokenCalls = [];
      server.requests.length = 0;
      tokenReply = () => ({ status: 200, body: fixture('hmrc/token.json') });
      lookup = () => ({ status: 200, body: fixture('hmrc/lookup-200.json') });
    });

    const client = (now?: () => Date) =>
      createHmrcClient({ baseUrl: server.url, timeoutMs: 2_000, ...CREDENTIALS, ...(now ? { now } : {}) });
    const GB = { country: 'GB', national: '553557881' };

    it('sends the documented token request and look-up headers', async () => {
      const answer = asAnswer(await client().lookup({ vat: GB }));
      assert.deepEqual(answer.checkedAt, new Date('2019-01-31T12:53:05Z'));
      const token = tokenCalls[0];
      assert.ok(token);
      assert.equal(token.method, 'POST');
      assert.match(String(token.headers['content-type']), /application\/x-www-form-urlencoded/);
      const form = new URLSearchParams(token.body);
      assert.equal(form.get('client_id'), 'client-123');
      assert.equal(form.get('client_secret'), 'secret-456');
      assert.equal(form.get('grant_type'), 'client_credentials');
      assert.equal(form.get('scope'), 'read:vat');
      const request = server.requests.find((r) => r.url.startsWith('/organisations'));
      assert.ok(request);
      assert.equal(request.url, '/organisations/vat/check-vat-number/lookup/553557881');
      assert.equal(request.headers.accept, 'application/vnd.hmrc.2.0+json');
      assert.equal(request.headers.authorization, 'Bearer 8ba4d6d1b6c7a3e62ad4c2f3f0a1c2b3');
    });

    it('uses the verified endpoint with a requester and reads consultationNumber', async () => {
      lookup = () => ({ status: 200, body: fixture('hmrc/lookup-verified-200.json') });
      const answer = asAnswer(
        await client().lookup({ vat: GB, requester: { country: 'GB', national: '146295999727' } }),
      );
      assert.equal(answer.consultationNumber, 'ypAeKRPlW');
      assert.ok(
        server.requests.some(
          (r) => r.url === '/organisations/vat/check-vat-number/lookup/553557881/146295999727',
        ),
      );
    });

    it('asks for one token for many look-ups, concurrent ones included', async () => {
      const c = client();
      await Promise.all(Array.from({ length: 5 }, () => c.lookup({ vat: GB })));
      for (let i = 0; i < 5; i++) asAnswer(await c.lookup({ vat: GB }));
      assert.equal(tokenCalls.length, 1);
    });

    it('refreshes the token shortly before it expires (injected clock)', async () => {
      let now = new Date('2026-01-01T00:00:00Z');
      const c = client(() => now);
      asAnswer(await c.lookup({ vat: GB }));
      now = new Date(now.getTime() + (14_400 - 120) * 1000);
      asAnswer(await c.lookup({ vat: GB }));
      assert.equal(tokenCalls.length, 1);
      now = new Date(now.getTime() + 90 * 1000);
      asAnswer(await c.lookup({ vat: GB }));
      assert.equal(tokenCalls.length, 2);
    });

    it('refreshes the token once on 401, then answers rejected', async () => {
      lookup = () => ({ status: 401, body: fixture('hmrc/invalid-credentials-401.json') });
      const result = asUnavailable(await client().lookup({ vat: GB }));
      assert.equal(result.reason, 'rejected');
      assert.equal(result.upstreamCode, 'INVALID_CREDENTIALS');
      assert.equal(tokenCalls.length, 2);
      assert.equal(server.requests.filter((r) => r.url.startsWith('/organisations')).length, 2);
    });

    it('succeeds when the refreshed token is accepted', async () => {
      let first = true;
      lookup = () => {
        if (first) {
          first = false;
          return { status: 401, body: fixture('hmrc/invalid-credentials-401.json') };
        }
        return { status: 200, body: fixture('hmrc/lookup-200.json') };
      };
      assert.equal(asAnswer(await client().lookup({ vat: GB })).valid, true);
    });

    it('maps the documented statuses', async () => {
      const cases: [number, string, string, string | undefined][] = [
        [404, 'hmrc/lookup-404.json', 'answer', undefined],
        [400, 'hmrc/lookup-400.json', 'rejected', 'INVALID_REQUEST'],
        [403, 'hmrc/lookup-403.json', 'rejected', 'INVALID_REQUEST'],
        [429, 'hmrc/throttled-429.json', 'throttled', 'MESSAGE_THROTTLED_OUT'],
        [500, 'hmrc/lookup-500.json', 'down', 'INTERNAL_SERVER_ERROR'],
        [503, 'hmrc/maintenance-503.json', 'down', 'SCHEDULED_MAINTENANCE'],
        [404, 'hmrc/platform-404.json', 'bad_response', 'MATCHING_RESOURCE_NOT_FOUND'],
      ];
      for (const [status, file, expected, code] of cases) {
        lookup = () => ({
          status,
          body: fixture(file),
          headers: status === 429 ? { 'retry-after': '2' } : ({} as Record<string, string>),
        });
        const result = await client().lookup({ vat: GB });
        if (expected === 'answer') {
          assert.equal(asAnswer(result).valid, false);
          continue;
        }
        const unavailable = asUnavailable(result);
        assert.equal(unavailable.reason, expected, file);
        assert.equal(unavailable.upstreamCode, code, file);
        if (status === 429) assert.equal(unavailable.retryAfterSeconds, 2);
      }
      lookup = () => ({ status: 504, body: '' });
      assert.equal(asUnavailable(await client().lookup({ vat: GB })).reason, 'timeout');
      lookup = () => ({ status: 200, body: '<html></html>' });
      assert.equal(asUnavailable(await client().lookup({ vat: GB })).reason, 'bad_response');
      lookup = () => 'hang';
      const hung = createHmrcClient({ baseUrl: server.url, timeoutMs: 100, ...CREDENTIALS });
      assert.equal(asUnavailable(await hung.lookup({ vat: GB })).reason, 'timeout');
    });

    it('classifies token endpoint failures', async () => {
      tokenReply = () => ({ status: 401, body: fixture('hmrc/token-invalid-client.json') });
      const refused = asUnavailable(await client().lookup({ vat: GB }));
      assert.equal(refused.reason, 'rejected');
      assert.equal(refused.retryable, false);
      assert.doesNotMatch(refused.message, /secret-456/);
      tokenReply = () => ({ status: 503, body: '' });
      assert.equal(asUnavailable(await client().lookup({ vat: GB })).reason, 'down');
      tokenReply = () => ({ status: 200, body: '{"token_type":"bearer"}' });
      assert.equal(asUnavailable(await client().lookup({ vat: GB })).reason, 'bad_response');
    });
  });
});
