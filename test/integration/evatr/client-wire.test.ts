import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  categoriseEvatrStatus,
  createEvatrClient,
  describeEvatrStatus,
  EVATR_STATUS_CATEGORIES,
  EVATR_STATUS_CODES,
  EVATR_STATUSES,
  type EvatrAnswer,
  type EvatrFailure,
  type EvatrResult,
  normaliseEvatrTimestamp,
  parseEvatrDate,
} from '../../../src/registries/evatr.js';
import {
  type Exchange,
  type RunningServer,
  refusedUrl,
  startHangingServer,
  startScriptedServer,
} from './helpers.js';

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../../fixtures/evatr/${name}`, import.meta.url));

function answer(result: EvatrResult): EvatrAnswer {
  if (result.kind !== 'answer') assert.fail(`expected an answer, got ${result.reason}: ${result.message}`);
  return result;
}

function failure(result: EvatrResult): EvatrFailure {
  if (result.kind !== 'failure') assert.fail(`expected a failure, got ${result.status}`);
  return result;
}

function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  contentType = 'application/json; charset=UTF-8',
) {
  res.writeHead(status, { 'content-type': contentType });
  res.end(body);
}

/** Serves whatever the current test puts in `next`. */
describe('eVatR client on the wire', () => {
  let next: (exchange: Exchange, res: ServerResponse) => void = (_e, res) => send(res, 500, '');
  let server: RunningServer & { exchanges: Exchange[] };
  const fixedNow = new Date('2030-01-02T03:04:05.678Z');
  const client = () =>
    createEvatrClient({ baseUrl: `${server.url}/app`, timeoutMs: 5000, now: () => fixedNow });

  before(async () => {
    server = await startScriptedServer((exchange, res) => next(exchange, res));
  });
  after(() => server.close());

  describe('request', () => {
    it('POSTs JSON to {baseUrl}/v1/abfrage with the real field names, UTF-8, captured verbatim', async () => {
      const served = Buffer.from(
        '{"id":"0123456789abcdef","anfrageZeitpunkt":"2025-07-14T10:01:02.123456789+02:00","status":"evatr-0000",' +
          '"ergFirmenname":"A","ergStrasse":"B","ergPlz":"A","ergOrt":"A","neuesFeld":{"x":1}}',
        'utf8',
      );
      next = (_e, res) => send(res, 200, served);
      const result = answer(
        await client().confirm({
          requesterVat: 'DE123456789',
          vat: 'HU12345676',
          name: 'Müller & Söhne Kft.',
          street: 'ul. Zielona 5',
          postcode: '90-001',
          town: 'Łódź',
        }),
      );
      const exchange = server.exchanges.at(-1);
      assert.ok(exchange);
      assert.equal(exchange.method, 'POST');
      assert.equal(exchange.path, '/app/v1/abfrage');
      assert.equal(exchange.headers['content-type'], 'application/json');
      // The exact bytes that went out are the ones kept, and they are UTF-8.
      assert.deepEqual(exchange.body, Buffer.from(result.raw.requestBody, 'utf8'));
      assert.deepEqual(JSON.parse(exchange.body.toString('utf8')), {
        anfragendeUstid: 'DE123456789',
        angefragteUstid: 'HU12345676',
        firmenname: 'Müller & Söhne Kft.',
        ort: 'Łódź',
        plz: '90-001',
        strasse: 'ul. Zielona 5',
      });
      assert.ok(exchange.body.includes(Buffer.from('Łódź', 'utf8')));
      // The exact bytes that came back are the ones kept.
      assert.deepEqual(Buffer.from(result.raw.responseBody, 'utf8'), served);
      assert.equal(result.raw.httpStatus, 200);
      assert.equal(result.raw.url, `${server.url}/app/v1/abfrage`);
      assert.equal(result.raw.contentType, 'application/json; charset=UTF-8');
      // Unknown extra fields are tolerated.
      assert.equal(result.id, '0123456789abcdef');
      assert.deepEqual(result.matches, { name: 'A', street: 'B', postcode: 'A', town: 'A' });
      assert.equal(result.category, 'valid_not_qualified');
      assert.equal(result.answeredAt, '2025-07-14T08:01:02.123Z');
      assert.equal(result.upstreamTimestamp, '2025-07-14T10:01:02.123456789+02:00');
    });

    it("keeps the authority's text safe to store: no NUL or control characters, well-formed; the raw answer as sent", async () => {
      const served =
        '{"id":"ab\\u0000cd\\u0007","anfrageZeitpunkt":"2025-07-14T10:01:02.1+02:00","status":"evatr-0000",' +
        '"ergFirmenname":"A\\u202e","ergStrasse":"B","ergPlz":"A","ergOrt":"A"}';
      next = (_e, res) => send(res, 200, served);
      const result = answer(
        await client().confirm({ requesterVat: 'DE123456789', vat: 'HU12345676', name: 'x', town: 'y' }),
      );
      assert.equal(result.id, 'abcd');
      assert.equal(result.matches.name, 'A');
      assert.equal(result.raw.responseBody, served);
    });

    it('sends a simple request with the two numbers only', async () => {
      next = (_e, res) =>
        send(res, 200, '{"anfrageZeitpunkt":"2025-07-14T10:01:02.1+02:00","status":"evatr-0000"}');
      const result = answer(await client().confirm({ requesterVat: 'DE136695976', vat: 'ATU12345678' }));
      assert.equal(
        result.raw.requestBody,
        '{"anfragendeUstid":"DE136695976","angefragteUstid":"ATU12345678"}',
      );
      assert.equal(result.category, 'valid_not_qualified');
      assert.equal(result.id, null);
      assert.equal(result.answeredAt, '2025-07-14T08:01:02.100Z');
    });

    it('makes exactly one attempt, even for a "try again later" status', async () => {
      const before = server.exchanges.length;
      next = (_e, res) =>
        send(res, 503, '{"anfrageZeitpunkt":"2025-07-14T23:30:00.000000001+02:00","status":"evatr-0011"}');
      const result = answer(await client().confirm({ requesterVat: 'DE136695976', vat: 'ATU12345678' }));
      assert.equal(result.category, 'unavailable');
      assert.equal(server.exchanges.length, before + 1);
    });
  });

  describe('answers', () => {
    it('branches on the body status, not on the HTTP code', async () => {
      next = (_e, res) =>
        send(res, 200, '{"anfrageZeitpunkt":"2025-07-14T10:01:02.123+02:00","status":"evatr-2001"}');
      assert.equal(answer(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' })).category, 'invalid');
      next = (_e, res) =>
        send(res, 400, '{"anfrageZeitpunkt":"2025-07-14T10:01:02.123+02:00","status":"evatr-0003"}');
      const partial = answer(await client().confirm({ requesterVat: 'DE1', vat: 'AT1', name: 'X' }));
      assert.equal(partial.category, 'valid_not_qualified');
      assert.equal(partial.httpStatus, 400);
    });

    it('an unknown code is unavailable, with a generic description', async () => {
      next = (_e, res) =>
        send(res, 418, '{"anfrageZeitpunkt":"2025-07-14T10:01:02.123+02:00","status":"evatr-9999"}');
      const result = answer(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
      assert.equal(result.status, 'evatr-9999');
      assert.equal(result.category, 'unavailable');
      assert.equal(result.known, false);
      assert.match(result.description, /evatr-9999/);
      assert.equal(result.httpStatus, 418);
    });

    it('an unreadable timestamp falls back to our clock; a missing one too', async () => {
      next = (_e, res) => send(res, 200, '{"anfrageZeitpunkt":"gestern","status":"evatr-0000"}');
      const odd = answer(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
      assert.equal(odd.answeredAt, fixedNow.toISOString());
      assert.equal(odd.upstreamTimestamp, 'gestern');
      next = (_e, res) => send(res, 200, '{"status":"evatr-0000"}');
      const missing = answer(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
      assert.equal(missing.answeredAt, '2030-01-02T03:04:05.678Z');
      assert.equal(missing.upstreamTimestamp, null);
    });

    it('supplied fields without an erg value are C; an unknown letter is D; never qualified', async () => {
      next = (_e, res) =>
        send(
          res,
          200,
          '{"anfrageZeitpunkt":"2025-07-14T10:01:02+02:00","status":"evatr-0000","ergFirmenname":"E"}',
        );
      const result = answer(
        await client().confirm({ requesterVat: 'DE1', vat: 'AT1', name: 'N', town: 'T' }),
      );
      assert.deepEqual(result.matches, { name: 'D', street: 'C', postcode: 'C', town: 'C' });
      assert.deepEqual(result.upstreamMatches, { name: 'E', street: null, postcode: null, town: null });
      assert.equal(result.category, 'valid_not_qualified');
    });

    it('a letter for a field that was not supplied still reads C', async () => {
      next = (_e, res) =>
        send(
          res,
          200,
          '{"anfrageZeitpunkt":"2025-07-14T10:01:02+02:00","status":"evatr-0000","ergFirmenname":"A","ergOrt":"A","ergPlz":"B"}',
        );
      const result = answer(
        await client().confirm({ requesterVat: 'DE1', vat: 'AT1', name: 'N', town: 'T' }),
      );
      assert.deepEqual(result.matches, { name: 'A', street: 'C', postcode: 'C', town: 'A' });
      assert.equal(result.category, 'qualified');
    });

    it('company data is taken when a response carries it', async () => {
      next = (_e, res) =>
        send(
          res,
          200,
          '{"anfrageZeitpunkt":"2025-07-14T10:01:02+02:00","status":"evatr-0000","firmenname":"Acme SA","ort":"Paris","plz":""}',
        );
      const result = answer(await client().confirm({ requesterVat: 'DE1', vat: 'FR1' }));
      assert.deepEqual(result.company, { name: 'Acme SA', street: null, postcode: null, town: 'Paris' });
    });
  });

  describe('failures', () => {
    it('maintenance HTML page → bad_response, body kept', async () => {
      const html = '<html><body><h1>Service Unavailable</h1></body></html>';
      next = (_e, res) => send(res, 503, html, 'text/html');
      const result = failure(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
      assert.equal(result.reason, 'bad_response');
      assert.equal(result.raw.httpStatus, 503);
      assert.equal(result.raw.responseBody, html);
      assert.equal(result.raw.contentType, 'text/html');
      assert.ok(result.raw.requestBody.length > 0);
    });

    it('empty body → bad_response', async () => {
      next = (_e, res) => send(res, 200, '');
      const result = failure(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
      assert.equal(result.reason, 'bad_response');
      assert.equal(result.raw.responseBody, '');
      assert.match(result.message, /empty/);
    });

    it('JSON without a status, with a non-string status, or not an object → bad_response', async () => {
      for (const body of [
        '{"anfrageZeitpunkt":"2025-07-14T10:01:02+02:00"}',
        '{"status":503}',
        '{"status":""}',
        '[]',
        'null',
      ]) {
        next = (_e, res) => send(res, 500, body);
        const result = failure(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
        assert.equal(result.reason, 'bad_response', body);
        assert.equal(result.raw.responseBody, body);
      }
    });

    it('an answer larger than any eVatR answer (over 1 MiB) → bad_response, its body not kept', async () => {
      next = (_e, res) => send(res, 200, `{"status":"evatr-0000","x":"${'a'.repeat(2 * 1024 * 1024)}"}`);
      const result = failure(await client().confirm({ requesterVat: 'DE1', vat: 'AT1' }));
      assert.equal(result.reason, 'bad_response');
      assert.match(result.message, /larger than/);
      assert.equal(result.raw.responseBody, null);
    });

    it('keeps its connection to eVatR open between calls', async () => {
      next = (_e, res) => send(res, 200, fixture('live-qualified-0000.json'));
      const c = client();
      const ports = new Set<number>();
      for (let i = 0; i < 3; i++) {
        answer(await c.confirm({ requesterVat: 'DE1', vat: 'AT1' }));
        const last = server.exchanges.at(-1);
        if (last?.remotePort !== undefined) ports.add(last.remotePort);
      }
      assert.equal(ports.size, 1, 'one connection for three calls');
    });

    it('no answer within timeoutMs → timeout', async () => {
      const hanging = await startHangingServer();
      try {
        const result = failure(
          await createEvatrClient({ baseUrl: `${hanging.url}/app`, timeoutMs: 50 }).confirm({
            requesterVat: 'DE1',
            vat: 'AT1',
          }),
        );
        assert.equal(result.reason, 'timeout');
        assert.equal(result.raw.httpStatus, null);
        assert.equal(result.raw.responseBody, null);
        assert.equal(result.raw.requestBody, '{"anfragendeUstid":"DE1","angefragteUstid":"AT1"}');
      } finally {
        await hanging.close();
      }
    });

    it("the caller's abort signal ends the call → timeout", async () => {
      const hanging = await startHangingServer();
      try {
        const controller = new AbortController();
        const pending = createEvatrClient({ baseUrl: `${hanging.url}/app`, timeoutMs: 60_000 }).confirm({
          requesterVat: 'DE1',
          vat: 'AT1',
          signal: controller.signal,
        });
        controller.abort();
        const result = failure(await pending);
        assert.equal(result.reason, 'timeout');
        assert.match(result.message, /aborted/);
      } finally {
        await hanging.close();
      }
    });

    it('connection refused → network', async () => {
      const url = await refusedUrl();
      const result = failure(
        await createEvatrClient({ baseUrl: `${url}/app`, timeoutMs: 5000 }).confirm({
          requesterVat: 'DE1',
          vat: 'AT1',
        }),
      );
      assert.equal(result.reason, 'network');
      assert.match(result.message, /ECONNREFUSED/);
    });

    it('a fetch that throws → network, never a rejected promise', async () => {
      const broken: typeof fetch = () => Promise.reject(new TypeError('fetch failed'));
      const result = failure(
        await createEvatrClient({
          baseUrl: 'http://example.invalid/app',
          timeoutMs: 5000,
          fetch: broken,
        }).confirm({
          requesterVat: 'DE1',
          vat: 'AT1',
        }),
      );
      assert.equal(result.reason, 'network');
    });
  });

  describe('recorded response bodies', () => {
    it('real simple answer to the official test pair', async () => {
      const body = fixture('live-simple-0000.json');
      next = (_e, res) => send(res, 200, body);
      const result = answer(await client().confirm({ requesterVat: 'DE123456789', vat: 'ATU12345678' }));
      assert.equal(result.status, 'evatr-0000');
      assert.equal(result.id, 'c4e53ec694b7c2a6');
      assert.equal(result.answeredAt, '2025-09-22T16:33:04.392Z');
      assert.equal(result.upstreamTimestamp, '2025-09-22T18:33:04.392335063+02:00');
      assert.equal(result.category, 'valid_not_qualified');
      assert.deepEqual(Buffer.from(result.raw.responseBody, 'utf8'), body);
    });

    it('real qualified answer to the official test pair', async () => {
      const body = fixture('live-qualified-0000.json');
      next = (_e, res) => send(res, 200, body);
      const result = answer(
        await client().confirm({
          requesterVat: 'DE123456789',
          vat: 'ATU12345678',
          name: 'Musterhaus GmbH & Co KG',
          street: 'Musterstrasse 22',
          postcode: '12345',
          town: 'musterort',
        }),
      );
      assert.equal(result.id, '5b1f4b5f03c27585');
      assert.equal(result.answeredAt, '2025-09-22T16:33:04.564Z');
      assert.deepEqual(result.matches, { name: 'A', street: 'A', postcode: 'A', town: 'A' });
      assert.equal(result.category, 'qualified');
      assert.deepEqual(Buffer.from(result.raw.responseBody, 'utf8'), body);
    });

    it('no-longer-valid answer with German dates (pretty-printed, no id)', async () => {
      const body = fixture('client-fixture-timespan-2006.json');
      next = (_e, res) => send(res, 200, body);
      const result = answer(await client().confirm({ requesterVat: 'DE123456789', vat: 'ATU12345678' }));
      assert.equal(result.status, 'evatr-2006');
      assert.equal(result.category, 'invalid');
      assert.equal(result.id, null);
      assert.equal(result.validFrom, '2024-01-01');
      assert.equal(result.validTo, '2024-12-31');
      assert.equal(result.answeredAt, '2025-07-01T08:28:01.123Z');
      assert.deepEqual(Buffer.from(result.raw.responseBody, 'utf8'), body);
    });
  });
});

describe('eVatR status table', () => {
  it('holds the 26 codes of the official list', () => {
    assert.equal(EVATR_STATUS_CODES.length, 26);
    assert.ok(!EVATR_STATUS_CODES.includes('evatr-0009'));
    for (const code of EVATR_STATUS_CODES) {
      assert.equal(EVATR_STATUSES[code]?.code, code);
      assert.ok(describeEvatrStatus(code).length > 0);
    }
  });

  it('maps every code as DESIGN says', () => {
    const groups: Record<string, string[]> = {
      valid: ['evatr-0000'],
      valid_not_qualified: ['evatr-0003', 'evatr-2008'],
      invalid: ['evatr-2001', 'evatr-2002', 'evatr-2006'],
      caller_error: ['evatr-0002', 'evatr-0005', 'evatr-0007', 'evatr-0012', 'evatr-2003'],
      requester_refused: ['evatr-0004', 'evatr-0006', 'evatr-2005'],
      session_limit: ['evatr-0008'],
      unavailable: [
        'evatr-0001',
        'evatr-0011',
        'evatr-0013',
        'evatr-1001',
        'evatr-1002',
        'evatr-1003',
        'evatr-1004',
        'evatr-2004',
        'evatr-2007',
        'evatr-2011',
        'evatr-3011',
      ],
    };
    const mapped = Object.values(groups).flat();
    assert.deepEqual([...mapped].sort(), [...EVATR_STATUS_CODES].sort());
    for (const [category, codes] of Object.entries(groups)) {
      for (const code of codes) assert.equal(EVATR_STATUS_CATEGORIES[code], category, code);
    }
  });

  it('categoriseEvatrStatus resolves 0000 by the matches and unknown codes to unavailable', () => {
    assert.equal(categoriseEvatrStatus('evatr-0000', { allSuppliedFieldsMatch: true }), 'qualified');
    assert.equal(categoriseEvatrStatus('evatr-0000'), 'valid_not_qualified');
    assert.equal(
      categoriseEvatrStatus('evatr-2008', { allSuppliedFieldsMatch: true }),
      'valid_not_qualified',
    );
    assert.equal(categoriseEvatrStatus('evatr-0008'), 'session_limit');
    assert.equal(categoriseEvatrStatus('evatr-4711'), 'unavailable');
    assert.equal(categoriseEvatrStatus('toString'), 'unavailable');
    assert.equal(categoriseEvatrStatus(''), 'unavailable');
  });
});

describe('eVatR date and time parsing', () => {
  it('normalises timestamps to ISO UTC with milliseconds', () => {
    const cases: [string, string | null][] = [
      ['2025-07-14T10:01:02.123456789+02:00', '2025-07-14T08:01:02.123Z'],
      ['2025-01-14T10:01:02.999999999+01:00', '2025-01-14T09:01:02.999Z'],
      ['2025-07-14T10:01:02.5+02:00', '2025-07-14T08:01:02.500Z'],
      ['2025-07-14T10:01:02+0200', '2025-07-14T08:01:02.000Z'],
      ['2025-07-14T10:01:02.123456Z', '2025-07-14T10:01:02.123Z'],
      ['2025-07-14T10:01:02-05:30', '2025-07-14T15:31:02.000Z'],
      ['2025-12-31T23:59:59.999999999+01:00', '2025-12-31T22:59:59.999Z'],
      // Without an offset: German local time.
      ['2025-07-14T10:01:02.123456789', '2025-07-14T08:01:02.123Z'],
      ['2025-01-14T10:01:02', '2025-01-14T09:01:02.000Z'],
      ['2025-02-30T10:01:02+01:00', null],
      ['14.07.2025 10:01', null],
      ['', null],
    ];
    for (const [input, expected] of cases) assert.equal(normaliseEvatrTimestamp(input), expected, input);
    assert.equal(normaliseEvatrTimestamp(null), null);
  });

  it('parses both date formats of gueltigAb/gueltigBis', () => {
    const cases: [unknown, string | null][] = [
      ['2025-01-31', '2025-01-31'],
      ['31.01.2025', '2025-01-31'],
      ['1.2.2025', '2025-02-01'],
      ['2025-01-31T00:00:00+01:00', '2025-01-31'],
      ['31.02.2025', null],
      ['2025-13-01', null],
      ['01/31/2025', null],
      ['', null],
      [20250131, null],
      [null, null],
    ];
    for (const [input, expected] of cases) assert.equal(parseEvatrDate(input), expected, String(input));
  });
});
