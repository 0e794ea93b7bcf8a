import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isUuidV7, type TestKey } from '../../../test/helpers/app.js';
import {
  AbortError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  errorFamily,
  IdempotencyInProgressError,
  InvalidRequestError,
  MAX_RETRY_AFTER_SECONDS,
  NotFoundError,
  OpenVat,
  OpenVatError,
  PlanRequiredError,
  RateLimitError,
  RegistryUnavailableError,
  TimeoutError,
} from '../src/index.js';
import { freePort } from './ports.js';
import { REQUESTER, type RunningService, startService } from './service.js';

/** What the stub in front of the app does with a request: answer it itself, or pass it on. */
type Step = (req: IncomingMessage, res: ServerResponse) => 'forward' | 'forward-then-504' | undefined;

/** A gateway that passes the request to the app, which does the work, then answers 504 itself. */
const forwardThen504: Step = () => 'forward-then-504';

interface Stub {
  url: string;
  /** Arrival time (ms) and method/path of every request the stub received. */
  requests: Array<{ at: number; method: string; path: string; headers: IncomingMessage['headers'] }>;
  /** Steps for the next requests, in order; once they are used up, requests go to the app. */
  plan(...steps: Step[]): void;
  close(): Promise<void>;
}

function answer(status: number, code: string, headers: Record<string, string> = {}): Step {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'service-request-id': 'stub', ...headers });
    res.end(
      JSON.stringify({ error: { code, message: `stub ${code}` }, meta: { request_id: 'stub-request' } }),
    );
    return undefined;
  };
}

/** A proxy's own answer: a status and an HTML page, no error envelope of the service. */
function bare(status: number, headers: Record<string, string> = {}): Step {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html', ...headers }).end(`<h1>${status}</h1>`);
    return undefined;
  };
}

/** A real HTTP server on 127.0.0.1 (a port of 19400–19499) in front of the app. */
async function startStub(target: string): Promise<Stub> {
  const requests: Stub['requests'] = [];
  let steps: Step[] = [];
  const port = await freePort();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    const step = steps.shift();
    const action = step?.(req, res);
    if (step && action === undefined) return;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
    }
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const upstream = await fetch(target + (req.url ?? '/'), { method: req.method ?? 'GET', headers, body });
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'connection' && name !== 'keep-alive') out[name] = value;
    });
    const answered = Buffer.from(await upstream.arrayBuffer());
    if (action === 'forward-then-504') {
      res.writeHead(504, { 'content-type': 'text/html' }).end('<h1>504 Gateway Time-out</h1>');
      return;
    }
    res.writeHead(upstream.status, out).end(answered);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    plan(...next) {
      steps = next;
      requests.length = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<OpenVatError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OpenVatError, `expected an OpenVatError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to reject');
}

describe('@openvat/client errors and retries', () => {
  let service: RunningService;
  let stub: Stub;
  let free: TestKey;
  let pro: TestKey;
  let business: TestKey;
  let businessTest: TestKey;

  before(async () => {
    service = await startService();
    stub = await startStub(service.baseUrl);
    free = await service.t.key('free', 'test');
    pro = await service.t.key('pro', 'test');
    business = await service.t.key('business', 'live', { defaultRequesterVat: REQUESTER });
    businessTest = await service.t.key('business', 'test', { defaultRequesterVat: REQUESTER });
  });
  after(async () => {
    await stub.close();
    await service.close();
  });

  const direct = (key: TestKey, maxRetries = 0) =>
    new OpenVat({ baseUrl: service.baseUrl, apiKey: key.key, maxRetries });

  function assertFromService(error: OpenVatError, status: number, code: string) {
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    assert.ok(error.message.length > 0);
    assert.ok(isUuidV7(error.requestId), `request id ${error.requestId}`);
  }

  it('401 unauthorized is an AuthenticationError', async () => {
    const error = await rejection(
      new OpenVat({ baseUrl: service.baseUrl, apiKey: 'svc_test_nope' }).validate({
        vat_number: 'DE100000008',
      }),
    );
    assert.ok(error instanceof AuthenticationError);
    assertFromService(error, 401, 'unauthorized');
  });

  it('402 plan_required is a PlanRequiredError with its details', async () => {
    const error = await rejection(direct(free).decide({ seller_vat: 'DE136695976', buyer_country: 'FR' }));
    assert.ok(error instanceof PlanRequiredError);
    assertFromService(error, 402, 'plan_required');
    assert.ok(Array.isArray(error.details?.required_plans));
  });

  it('input errors are InvalidRequestErrors, whatever their code', async () => {
    const format = await rejection(direct(pro).validate({ vat_number: 'DE12' }));
    assert.ok(format instanceof InvalidRequestError);
    assert.equal(format.status, 400);
    assert.ok(format.code === 'invalid_format' || format.code === 'invalid_request', format.code);
    assert.ok(isUuidV7(format.requestId));

    const tooLarge = await rejection(
      direct(pro).validateBatch({ vat_numbers: Array.from({ length: 101 }, () => 'DE100000008') }),
    );
    assert.ok(tooLarge instanceof InvalidRequestError);
    assert.equal(tooLarge.code, 'batch_too_large');
  });

  it('404 not_found is a NotFoundError', async () => {
    const error = await rejection(direct(business).confirmations.get('01a20a1d-a660-7108-97f6-f5a58baa0e28'));
    assert.ok(error instanceof NotFoundError);
    assertFromService(error, 404, 'not_found');
  });

  it('idempotency_conflict is a ConflictError', async () => {
    const openvat = direct(business);
    const company = { name: 'Musterhaus GmbH & Co KG', town: 'musterort' };
    const idempotencyKey = crypto.randomUUID();
    await openvat.confirm({ vat_number: 'ATU12345678', company }, { idempotencyKey });
    const error = await rejection(
      openvat.confirm({ vat_number: 'ATU88881111', company }, { idempotencyKey }),
    );
    assert.ok(error instanceof ConflictError);
    assert.equal(error.code, 'idempotency_conflict');
    assert.ok(error.status >= 400 && error.status < 500);
  });

  it('429 rate_limited is a RateLimitError with retryAfter from Retry-After', async () => {
    const error = await rejection(direct(pro).validate({ vat_number: 'DE800000009' }));
    assert.ok(error instanceof RateLimitError);
    assertFromService(error, 429, 'rate_limited');
    assert.equal(error.retryAfter, Number(error.headers['retry-after']));
    assert.ok(error.retryAfter !== null && error.retryAfter > 0);
  });

  it('registry_unavailable is a RegistryUnavailableError with retryAfter', async () => {
    const error = await rejection(direct(pro).validate({ vat_number: 'DE400000000' }));
    assert.ok(error instanceof RegistryUnavailableError);
    assert.equal(error.code, 'registry_unavailable');
    assert.ok(error.status >= 500);
    assert.ok(isUuidV7(error.requestId));
    assert.ok(error.retryAfter !== null && error.retryAfter > 0);
  });

  it('an unknown code is a plain OpenVatError; a body without an envelope still gives status and code', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key, maxRetries: 0 });
    stub.plan(answer(418, 'brand_new_code'));
    const unknown = await rejection(openvat.rates.list());
    assert.equal(unknown.constructor, OpenVatError);
    assert.equal(unknown.code, 'brand_new_code');
    assert.equal(unknown.status, 418);
    assert.equal(unknown.requestId, 'stub-request');

    stub.plan((_req, res) => {
      res
        .writeHead(400, { 'content-type': 'text/html', 'service-request-id': 'from-header' })
        .end('<h1>no</h1>');
      return undefined;
    });
    const html = await rejection(openvat.rates.list());
    assert.equal(html.constructor, OpenVatError);
    assert.equal(html.code, 'http_400');
    assert.equal(html.requestId, 'from-header');
  });

  it('a code of a known pattern joins its family without a client update', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key, maxRetries: 0 });
    stub.plan(answer(422, 'b2c_not_supported'));
    const input = await rejection(openvat.decide({ seller_vat: 'DE136695976', buyer_country: 'FR' }));
    assert.ok(input instanceof InvalidRequestError);
    assert.equal(input.code, 'b2c_not_supported');
    stub.plan(answer(502, 'bzst_unavailable', { 'retry-after': '7' }));
    const registry = await rejection(
      openvat.confirm({ vat_number: 'ATU12345678', company: { name: 'Musterhaus' } }),
    );
    assert.ok(registry instanceof RegistryUnavailableError);
    assert.equal(registry.retryAfter, 7);
    assert.equal(errorFamily('country_unknown'), InvalidRequestError);
    assert.equal(errorFamily('invalid_requester_vat'), InvalidRequestError);
    assert.equal(errorFamily('taxauth_session_limit'), RateLimitError);
    assert.equal(errorFamily('taxauth_server_error'), RegistryUnavailableError);
    assert.equal(errorFamily('taxauth_rejected'), InvalidRequestError);
    assert.equal(errorFamily('internal_error'), null);
  });

  it('retries after 429 and a bare 503, waiting what Retry-After says, then answers from the service', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan(answer(429, 'rate_limited', { 'retry-after': '1' }), bare(503, { 'retry-after': '1' }));
    const res = await openvat.validate({ vat_number: 'DE100000008' });
    assert.equal(res.data.vat_number, 'DE100000008');
    assert.equal(stub.requests.length, 3);
    const [first, second, third] = stub.requests;
    assert.ok(first && second && third);
    assert.ok(second.at - first.at >= 950, `waited ${second.at - first.at} ms after the 429`);
    assert.ok(third.at - second.at >= 950, `waited ${third.at - second.at} ms after the 503`);
  });

  it('confirm is retried after a bare 502/503, with the same Idempotency-Key', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: business.key });
    stub.plan(bare(502, { 'retry-after': '0' }), bare(503));
    const res = await openvat.confirm({
      vat_number: 'ATU12345678',
      company: { name: 'Musterhaus GmbH & Co KG' },
    });
    assert.ok(res.data.confirmation_id);
    assert.equal(stub.requests.length, 3);
    const keys = stub.requests.map((r) => r.headers['idempotency-key']);
    assert.ok(keys[0]);
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  });

  it('gives up after maxRetries and rejects with the last answer', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key, maxRetries: 1 });
    stub.plan(bare(503, { 'retry-after': '0' }), answer(429, 'rate_limited', { 'retry-after': '0' }));
    const error = await rejection(openvat.validate({ vat_number: 'DE100000008' }));
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 0);
    assert.equal(stub.requests.length, 2);
  });

  it(`does not wait for a Retry-After longer than ${MAX_RETRY_AFTER_SECONDS} seconds: the caller decides`, async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan(answer(429, 'rate_limited', { 'retry-after': '3600' }));
    const error = await rejection(openvat.validate({ vat_number: 'DE100000008' }));
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 3600);
    assert.equal(stub.requests.length, 1);

    stub.plan(answer(429, 'rate_limited', { 'retry-after': String(MAX_RETRY_AFTER_SECONDS + 1) }));
    const started = Date.now();
    const over = await rejection(openvat.validate({ vat_number: 'DE100000008' }));
    assert.ok(over instanceof RateLimitError);
    assert.equal(over.retryAfter, MAX_RETRY_AFTER_SECONDS + 1);
    assert.equal(stub.requests.length, 1);
    assert.ok(Date.now() - started < 1_000);
  });

  it("the service's registry_unavailable is thrown at once with its retryAfter: the service already retried", async () => {
    // The real service answers 502 registry_unavailable with Retry-After: 60 (registry down).
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan();
    const started = Date.now();
    const error = await rejection(openvat.validate({ vat_number: 'DE400000000' }));
    assert.ok(error instanceof RegistryUnavailableError);
    assert.equal(error.code, 'registry_unavailable');
    assert.equal(error.retryAfter, 60);
    assert.equal(stub.requests.length, 1);
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);

    stub.plan(answer(503, 'registry_unavailable'), answer(502, 'upstream_error'));
    await rejection(openvat.rates.get('DE'));
    assert.equal(stub.requests.length, 1);
  });

  it('confirm is not repeated after the tax authority is unavailable or its session limit is reached', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: businessTest.key });
    const company = { name: 'Musterhaus GmbH & Co KG', town: 'musterort' };
    // Test mode: ATU88880502 is 502 taxauth_unavailable (network failure), no Retry-After.
    stub.plan();
    const unreachable = await rejection(openvat.confirm({ vat_number: 'ATU88880502', company }));
    assert.ok(unreachable instanceof RegistryUnavailableError);
    assert.equal(unreachable.code, 'taxauth_unavailable');
    assert.equal(stub.requests.length, 1);
    // ATU99990011: 503 taxauth_unavailable with Retry-After: 300.
    stub.plan();
    const down = await rejection(openvat.confirm({ vat_number: 'ATU99990011', company }));
    assert.ok(down instanceof RegistryUnavailableError);
    assert.equal(down.retryAfter, 300);
    assert.equal(stub.requests.length, 1);
    // ATU99990008: 429 taxauth_session_limit with Retry-After: 60.
    stub.plan();
    const limited = await rejection(openvat.confirm({ vat_number: 'ATU99990008', company }));
    assert.ok(limited instanceof RateLimitError);
    assert.equal(limited.code, 'taxauth_session_limit');
    assert.equal(limited.retryAfter, 60);
    assert.equal(stub.requests.length, 1);
  });

  it('a POST that is not safe to repeat is not retried after a gateway forwarded it and answered 504', async () => {
    const key = await service.t.key('pro', 'test');
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: key.key });
    const direct = new OpenVat({ baseUrl: service.baseUrl, apiKey: key.key });

    stub.plan(forwardThen504);
    const hook = await rejection(openvat.webhooks.create({ url: 'http://127.0.0.1:19499/hooks' }));
    assert.equal(hook.status, 504);
    assert.equal(stub.requests.length, 1);
    assert.equal((await direct.webhooks.list()).data.length, 1);

    stub.plan(forwardThen504);
    const job = await rejection(openvat.batchJobs.create({ vat_numbers: ['DE100000008'] }));
    assert.equal(job.status, 504);
    assert.equal(stub.requests.length, 1);

    for (const call of [
      () => openvat.validateBatch({ vat_numbers: ['DE100000008'] }),
      () => openvat.decide({ seller_vat: 'DE136695976', buyer_vat: 'FR40303265045' }),
    ]) {
      stub.plan(forwardThen504);
      assert.equal((await rejection(call())).status, 504);
      assert.equal(stub.requests.length, 1);
    }
    // A bare 502/503 from a proxy is not proof either that the service did nothing.
    stub.plan(bare(502), bare(503));
    await rejection(openvat.webhooks.create({ url: 'http://127.0.0.1:19499/other' }));
    assert.equal(stub.requests.length, 1);
  });

  it('calls safe to repeat are retried after a forwarded 504: reads, confirm (its key), monitors.create', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: businessTest.key });
    stub.plan(forwardThen504);
    const rates = await openvat.rates.get('DE');
    assert.equal(rates.data.country_code, 'de');
    assert.equal(stub.requests.length, 2);

    stub.plan(forwardThen504);
    const confirmed = await openvat.confirm({ vat_number: 'ATU12345678', company: { name: 'Musterhaus' } });
    assert.equal(stub.requests.length, 2);
    const keys = stub.requests.map((r) => r.headers['idempotency-key']);
    assert.equal(keys[0], keys[1]);
    assert.ok(confirmed.data.confirmation_id);

    stub.plan(forwardThen504);
    const monitor = await openvat.monitors.create({ vat_number: 'DE100000008', interval: 'daily' });
    assert.equal(stub.requests.length, 2);
    const list = await openvat.monitors.list();
    assert.deepEqual(
      list.data.map((m) => m.id),
      [monitor.data.monitor.id],
    );
  });

  it('a 429 rate_limited of the service is retried for every call: it did not do the work', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan(answer(429, 'rate_limited', { 'retry-after': '0' }));
    const hook = await openvat.webhooks.create({ url: 'http://127.0.0.1:19499/after-429' });
    assert.ok(hook.data.id);
    assert.equal(stub.requests.length, 2);
    await openvat.webhooks.delete(hook.data.id);
  });

  it('confirm: a 409 "still in progress" is asked again with the same key until the first request is answered', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: businessTest.key });
    const inProgress = () => (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(409, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: {
            code: 'idempotency_conflict',
            message: 'A request with this Idempotency-Key is still in progress; retry after it has finished.',
          },
          meta: { request_id: 'stub-request' },
        }),
      );
      return undefined;
    };
    // The first attempt reaches the service but its answer is lost (the client timed out); the
    // retry finds the key in flight twice, then the stored answer.
    stub.plan(forwardThen504, inProgress(), inProgress());
    const res = await openvat.confirm({ vat_number: 'ATU12345678', company: { name: 'Musterhaus' } });
    assert.ok(res.data.confirmation_id);
    assert.equal(stub.requests.length, 4);
    const keys = new Set(stub.requests.map((r) => r.headers['idempotency-key']));
    assert.equal(keys.size, 1);
    assert.equal(res.meta.request_id.length > 0, true);

    // Still in progress after one attempt's time: a distinct error that says to retry with the same key.
    const key = crypto.randomUUID();
    const short = new OpenVat({ baseUrl: stub.url, apiKey: businessTest.key, timeout: 1_200 });
    stub.plan(...Array.from({ length: 10 }, inProgress));
    const started = Date.now();
    const error = await rejection(
      short.confirm({ vat_number: 'ATU12345678', company: { name: 'Musterhaus' } }, { idempotencyKey: key }),
    );
    assert.ok(error instanceof IdempotencyInProgressError);
    assert.ok(!(error instanceof ConflictError));
    assert.equal(error.idempotencyKey, key);
    assert.equal(error.status, 409);
    assert.match(error.message, /may have succeeded/);
    assert.match(error.message, /same key/);
    assert.ok(stub.requests.length >= 2, `${stub.requests.length} requests`);
    assert.ok(Date.now() - started < 3_000);
    // The 422 of a key reused with another body stays a ConflictError, not retried.
    stub.plan(answer(422, 'idempotency_conflict'));
    const reused = await rejection(openvat.confirm({ vat_number: 'ATU12345678', company: { name: 'M' } }));
    assert.ok(reused instanceof ConflictError);
    assert.equal(stub.requests.length, 1);
  });

  it('a 2xx that is not JSON rejects with an OpenVatError naming the status and content type', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html>login</html>');
      return undefined;
    });
    const html = await rejection(openvat.validate({ vat_number: 'DE100000008' }));
    assert.equal(html.constructor, OpenVatError);
    assert.equal(html.status, 200);
    assert.equal(html.code, 'invalid_response');
    assert.match(html.message, /200/);
    assert.match(html.message, /text\/html/);
    assert.equal(stub.requests.length, 1);

    stub.plan((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end();
      return undefined;
    });
    const empty = await rejection(openvat.rates.get('DE'));
    assert.equal(empty.status, 200);
    assert.match(empty.message, /empty body/);
    assert.match(empty.message, /application\/json/);

    // A 204 of a deletion stays { data: null }.
    const hook = await openvat.webhooks.create({ url: 'http://127.0.0.1:19499/deleted' });
    stub.plan();
    const deleted = await openvat.webhooks.delete(hook.data.id);
    assert.equal(deleted.data, null);
  });

  it('conditional requests are refused before sending: a 304 would have no body to resolve to', async () => {
    const sent: string[] = [];
    const openvat = new OpenVat({
      baseUrl: service.baseUrl,
      apiKey: pro.key,
      fetch: (input, init) => {
        sent.push(String(input));
        return fetch(input, init);
      },
    });
    const first = await openvat.rates.get('DE');
    assert.equal(first.data.country_code, 'de');
    const conditionals: Array<Record<string, string>> = [
      { 'If-None-Match': '"abc"' },
      { 'if-modified-since': new Date().toUTCString() },
    ];
    for (const headers of conditionals) {
      await assert.rejects(openvat.rates.get('DE', {}, { headers }), (error: unknown) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /conditional requests/);
        return true;
      });
    }
    assert.equal(sent.length, 1);
  });

  it('a 500 is retried for a read but not for a POST that is not idempotent', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan(answer(500, 'internal_error'));
    const rates = await openvat.rates.get('DE');
    assert.equal(rates.data.country_code, 'de');
    assert.equal(stub.requests.length, 2);

    stub.plan(answer(500, 'internal_error'));
    const error = await rejection(openvat.decide({ seller_vat: 'DE136695976', buyer_country: 'FR' }));
    assert.equal(error.status, 500);
    assert.equal(error.code, 'internal_error');
    assert.equal(stub.requests.length, 1);
  });

  it('a dropped connection is a ConnectionError, retried for reads only', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    const drop: Step = (req) => {
      req.socket.destroy();
      return undefined;
    };
    stub.plan(drop);
    const res = await openvat.validate({ vat_number: 'DE100000008' });
    assert.equal(res.data.valid, true);
    assert.equal(stub.requests.length, 2);

    stub.plan(drop);
    const error = await rejection(openvat.validateBatch({ vat_numbers: ['DE100000008'] }));
    assert.ok(error instanceof ConnectionError);
    assert.equal(error.status, 0);
    assert.equal(error.code, 'connection_error');
    assert.equal(stub.requests.length, 1);
  });

  it('times out after `timeout` ms with a TimeoutError', async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key, timeout: 200, maxRetries: 0 });
    stub.plan(() => undefined); // never answers
    const error = await rejection(openvat.validate({ vat_number: 'DE100000008' }));
    assert.ok(error instanceof TimeoutError);
    assert.equal(error.code, 'timeout');
  });

  it("the caller's AbortSignal stops the call, also while it waits to retry", async () => {
    const openvat = new OpenVat({ baseUrl: stub.url, apiKey: pro.key });
    stub.plan(() => undefined);
    const inFlight = new AbortController();
    const pending = openvat.validate({ vat_number: 'DE100000008' }, { signal: inFlight.signal });
    setTimeout(() => inFlight.abort(), 100);
    const aborted = await rejection(pending);
    assert.ok(aborted instanceof AbortError);
    assert.equal(aborted.code, 'aborted');

    stub.plan(answer(429, 'rate_limited', { 'retry-after': '5' }));
    const waiting = new AbortController();
    const retrying = openvat.validate({ vat_number: 'DE100000008' }, { signal: waiting.signal });
    setTimeout(() => waiting.abort(), 200);
    const stopped = await rejection(retrying);
    assert.ok(stopped instanceof AbortError);
    assert.equal(stub.requests.length, 1);
  });

  it('aborting during the poll wait of batchJobs.follow, wait and run rejects with AbortError', async () => {
    // A job that never completes, answered by a fetch of our own.
    const running: typeof fetch = async (_input, init) => {
      const job =
        init?.method === 'POST'
          ? {
              id: 'job-1',
              status: 'queued',
              total: 1,
              done: 0,
              failed: 0,
              created_at: new Date().toISOString(),
            }
          : {
              id: 'job-1',
              status: 'running',
              total: 1,
              done: 0,
              failed: 0,
              created_at: new Date().toISOString(),
            };
      return new Response(JSON.stringify({ data: job, meta: { request_id: 'r' } }), {
        status: init?.method === 'POST' ? 202 : 200,
        headers: { 'content-type': 'application/json' },
      });
    };
    const openvat = new OpenVat({ baseUrl: 'http://127.0.0.1:19499', apiKey: pro.key, fetch: running });
    const runs: Array<(signal: AbortSignal) => Promise<unknown>> = [
      async (signal) => {
        for await (const _ of openvat.batchJobs.follow('job-1', { pollInterval: 10_000, signal })) {
          // the first state is yielded, then the poll wait is aborted
        }
      },
      (signal) => openvat.batchJobs.wait('job-1', { pollInterval: 10_000, signal }),
      async (signal) => {
        for await (const _ of openvat.batchJobs.run(
          { vat_numbers: ['DE100000008'] },
          { pollInterval: 10_000, signal },
        )) {
          // as above
        }
      },
    ];
    for (const run of runs) {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const started = Date.now();
      const error = await rejection(run(controller.signal));
      assert.ok(error instanceof AbortError, String(error));
      assert.equal(error.code, 'aborted');
      assert.ok(Date.now() - started < 5_000);
    }
  });

  it('batchJobs.follow, wait, run and submitAll apply the per-call headers, maxRetries and timeout to each request', async () => {
    const seen: Array<{ method: string; tag: string | null }> = [];
    let failNext = false;
    let polls = 0;
    const jobs: typeof fetch = async (_input, init) => {
      const method = init?.method ?? 'GET';
      seen.push({ method, tag: new Headers(init?.headers).get('x-tag') });
      if (failNext) {
        failNext = false;
        return new Response('<h1>503</h1>', { status: 503, headers: { 'content-type': 'text/html' } });
      }
      polls += 1;
      const status = method === 'POST' ? 'queued' : polls % 2 === 0 ? 'completed' : 'running';
      const job = { id: 'job-1', status, total: 1, done: status === 'completed' ? 1 : 0, failed: 0 };
      return new Response(JSON.stringify({ data: job, meta: { request_id: 'r' } }), {
        status: method === 'POST' ? 202 : 200,
        headers: { 'content-type': 'application/json' },
      });
    };
    const openvat = new OpenVat({ baseUrl: 'http://127.0.0.1:19499', apiKey: pro.key, fetch: jobs });
    const options = { pollInterval: 1, headers: { 'x-tag': 'mine' } };
    for await (const _ of openvat.batchJobs.follow('job-1', options)) {
      // every state
    }
    await openvat.batchJobs.wait('job-1', options);
    for await (const _ of openvat.batchJobs.run({ vat_numbers: ['DE100000008'] }, options)) {
      // every state
    }
    for await (const _ of openvat.batchJobs.submitAll(['DE100000008', 'DE300000002'], {
      chunkSize: 1,
      headers: { 'x-tag': 'mine' },
    })) {
      // each job
    }
    assert.ok(seen.length >= 6);
    assert.deepEqual(
      seen.filter((r) => r.tag !== 'mine'),
      [],
    );
    // maxRetries: 0 is honoured by the polls: a bare 503 is not retried.
    seen.length = 0;
    failNext = true;
    const error = await rejection(openvat.batchJobs.wait('job-1', { pollInterval: 1, maxRetries: 0 }));
    assert.equal(error.status, 503);
    assert.equal(seen.length, 1);
    // timeout bounds each of their requests.
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
      });
    const slow = new OpenVat({ baseUrl: 'http://127.0.0.1:19499', apiKey: pro.key, fetch: hanging });
    const timedOut = await rejection(slow.batchJobs.wait('job-1', { timeout: 50, maxRetries: 0 }));
    assert.ok(timedOut instanceof TimeoutError);
  });

  it('reads the base URL and key from OPENVAT_URL and OPENVAT_API_KEY', async () => {
    const saved = { url: process.env.OPENVAT_URL, key: process.env.OPENVAT_API_KEY };
    process.env.OPENVAT_URL = `${service.baseUrl}/`;
    process.env.OPENVAT_API_KEY = pro.key;
    try {
      const res = await new OpenVat().validate({ vat_number: 'DE100000008' });
      assert.equal(res.data.valid, true);
      delete process.env.OPENVAT_API_KEY;
      // Without a key: the public calls work, the others reject before sending anything.
      const sent: string[] = [];
      const keyless = new OpenVat({
        fetch: (input, init) => {
          sent.push(`${new URL(String(input)).pathname} ${new Headers(init?.headers).has('authorization')}`);
          return fetch(input, init);
        },
      });
      assert.equal((await keyless.rates.get('DE')).data.country_code, 'de');
      assert.ok((await keyless.rates.list()).data);
      assert.ok((await keyless.status()).data);
      assert.deepEqual((await keyless.health()).data, { ok: true });
      assert.deepEqual(sent, ['/v1/rates/DE false', '/v1/rates false', '/v1/status false', '/health false']);
      const missing = await rejection(keyless.validate({ vat_number: 'DE100000008' }));
      assert.ok(missing instanceof AuthenticationError);
      assert.equal(missing.code, 'missing_api_key');
      assert.equal(missing.status, 0);
      assert.match(missing.message, /OPENVAT_API_KEY/);
      assert.equal(sent.length, 4);
    } finally {
      if (saved.url === undefined) delete process.env.OPENVAT_URL;
      else process.env.OPENVAT_URL = saved.url;
      if (saved.key === undefined) delete process.env.OPENVAT_API_KEY;
      else process.env.OPENVAT_API_KEY = saved.key;
    }
  });
});
