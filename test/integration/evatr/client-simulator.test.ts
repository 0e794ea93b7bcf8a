import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createEvatrClient,
  type EvatrAnswer,
  type EvatrCategory,
  type EvatrClient,
  type EvatrRequest,
  type EvatrResult,
} from '../../../src/registries/evatr.js';
import {
  createEvatrSimulator,
  type EvatrSimulator,
  germanVatNumberWithCheckDigit,
} from '../../../src/simulators/evatr.js';
import { type RunningServer, startSimulator } from './helpers.js';

/** A requester with a valid German check digit (worked example of the research notes). */
const REQUESTER = 'DE136695976';

/** The DESIGN mapping for every code of the official list (written out here, independently of the client). */
const EXPECTED: Record<string, { http: number; category: EvatrCategory }> = {
  'evatr-0000': { http: 200, category: 'qualified' },
  'evatr-0001': { http: 400, category: 'unavailable' },
  'evatr-0002': { http: 400, category: 'caller_error' },
  'evatr-0003': { http: 400, category: 'valid_not_qualified' },
  'evatr-0004': { http: 400, category: 'requester_refused' },
  'evatr-0005': { http: 400, category: 'caller_error' },
  'evatr-0006': { http: 403, category: 'requester_refused' },
  'evatr-0007': { http: 403, category: 'caller_error' },
  'evatr-0008': { http: 403, category: 'session_limit' },
  'evatr-0011': { http: 503, category: 'unavailable' },
  'evatr-0012': { http: 400, category: 'caller_error' },
  'evatr-0013': { http: 503, category: 'unavailable' },
  'evatr-1001': { http: 503, category: 'unavailable' },
  'evatr-1002': { http: 500, category: 'unavailable' },
  'evatr-1003': { http: 500, category: 'unavailable' },
  'evatr-1004': { http: 500, category: 'unavailable' },
  'evatr-2001': { http: 404, category: 'invalid' },
  'evatr-2002': { http: 200, category: 'invalid' },
  'evatr-2003': { http: 400, category: 'caller_error' },
  'evatr-2004': { http: 500, category: 'unavailable' },
  'evatr-2005': { http: 404, category: 'requester_refused' },
  'evatr-2006': { http: 200, category: 'invalid' },
  'evatr-2007': { http: 500, category: 'unavailable' },
  'evatr-2008': { http: 200, category: 'valid_not_qualified' },
  'evatr-2011': { http: 500, category: 'unavailable' },
  'evatr-3011': { http: 500, category: 'unavailable' },
};

function answer(result: EvatrResult): EvatrAnswer {
  if (result.kind !== 'answer') assert.fail(`expected an answer, got ${result.reason}: ${result.message}`);
  return result;
}

describe('eVatR client against the simulator', () => {
  let sim: EvatrSimulator;
  let server: RunningServer;
  let client: EvatrClient;

  before(async () => {
    sim = createEvatrSimulator();
    server = await startSimulator(sim);
    client = createEvatrClient({ baseUrl: `${server.url}/evatr/app`, timeoutMs: 5000 });
  });
  after(() => server.close());

  describe('every code of the official list through the magic numbers (ATU9999NNNN)', () => {
    for (const [code, expected] of Object.entries(EXPECTED)) {
      it(`${code} → HTTP ${expected.http}, ${expected.category}`, async () => {
        const digits = code.slice('evatr-'.length);
        // Data equal to the generic record, so evatr-0000 is fully qualified.
        const vat = `ATU9999${digits}`;
        const result = answer(
          await client.confirm({
            requesterVat: REQUESTER,
            vat,
            name: `Company ${vat}`,
            street: 'Main Street 1',
            postcode: '1000',
            town: 'Capital',
          }),
        );
        assert.equal(result.status, code);
        assert.equal(result.httpStatus, expected.http);
        assert.equal(result.category, expected.category);
        assert.equal(result.known, true);
        assert.match(result.id ?? '', /^[a-f0-9]{16}$/);
        assert.ok(result.description.length > 0);
      });
    }
  });

  describe('codes reached by their natural causes', () => {
    const cases: { code: string; request: EvatrRequest }[] = [
      { code: 'evatr-0002', request: { requesterVat: REQUESTER, vat: '' } },
      { code: 'evatr-0002', request: { requesterVat: '', vat: 'ATU12345678' } },
      {
        code: 'evatr-0003',
        request: { requesterVat: REQUESTER, vat: 'ATU12345678', name: 'Musterhaus GmbH & Co KG' },
      },
      { code: 'evatr-0003', request: { requesterVat: REQUESTER, vat: 'ATU12345678', town: 'musterort' } },
      { code: 'evatr-0004', request: { requesterVat: 'DE123456789', vat: 'ATU12345679' } },
      { code: 'evatr-0004', request: { requesterVat: 'LU98765432', vat: 'ATU12345678' } },
      { code: 'evatr-0005', request: { requesterVat: REQUESTER, vat: 'INVALID' } },
      { code: 'evatr-0005', request: { requesterVat: REQUESTER, vat: 'AT-U1234-5678' } },
      { code: 'evatr-0006', request: { requesterVat: 'DE123456789', vat: 'DE987654321' } },
      { code: 'evatr-0012', request: { requesterVat: REQUESTER, vat: 'ATU1234' } },
      { code: 'evatr-2003', request: { requesterVat: REQUESTER, vat: 'XX123456789' } },
      { code: 'evatr-2003', request: { requesterVat: REQUESTER, vat: 'GR123456789' } },
      {
        code: 'evatr-2005',
        request: { requesterVat: germanVatNumberWithCheckDigit('99912345'), vat: 'ATU12345678' },
      },
    ];
    for (const { code, request } of cases) {
      it(`${code} for ${JSON.stringify({ ...request })}`, async () => {
        const result = answer(await client.confirm(request));
        assert.equal(result.status, code);
        assert.equal(result.category, EXPECTED[code]?.category);
        assert.equal(result.httpStatus, EXPECTED[code]?.http);
      });
    }

    it('evatr-0003 still reports the number as valid, not qualified', async () => {
      const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'HU12345676', name: 'X' }));
      assert.equal(result.category, 'valid_not_qualified');
      assert.equal(result.matches.name, 'C');
    });

    it('evatr-0013 when the member state is marked unavailable, and the availability list says so', async () => {
      sim.control({ unavailableCountries: ['FR'] });
      try {
        const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'FRXX123456789' }));
        assert.equal(result.status, 'evatr-0013');
        assert.equal(result.category, 'unavailable');
        const states = (await (await fetch(`${server.url}/evatr/app/v1/info/eu_mitgliedstaaten`)).json()) as {
          alpha2: string;
          verfuegbar: boolean;
        }[];
        assert.equal(states.find((s) => s.alpha2 === 'FR')?.verfuegbar, false);
        assert.equal(states.find((s) => s.alpha2 === 'AT')?.verfuegbar, true);
      } finally {
        sim.control({ unavailableCountries: [] });
      }
    });

    it('evatr-0008 once the qualified requests of a requester exceed the session limit', async () => {
      const requester = germanVatNumberWithCheckDigit('27654321');
      sim.control({ qualifiedSessionLimit: 2 });
      try {
        const qualified = {
          requesterVat: requester,
          vat: 'ATU12345678',
          name: 'Musterhaus GmbH & Co KG',
          town: 'x',
        };
        assert.equal(answer(await client.confirm(qualified)).status, 'evatr-0000');
        assert.equal(answer(await client.confirm(qualified)).status, 'evatr-0000');
        const limited = answer(await client.confirm(qualified));
        assert.equal(limited.status, 'evatr-0008');
        assert.equal(limited.category, 'session_limit');
        assert.equal(limited.httpStatus, 403);
        // A simple request is still answered.
        assert.equal(
          answer(await client.confirm({ requesterVat: requester, vat: 'ATU12345678' })).status,
          'evatr-0000',
        );
      } finally {
        sim.control({ qualifiedSessionLimit: null, resetSessions: true });
      }
    });

    it('evatr-0007 for a body that is not JSON (sent without the client)', async () => {
      const res = await fetch(`${server.url}/evatr/app/v1/abfrage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"anfragendeUstid":',
      });
      assert.equal(res.status, 403);
      const body = (await res.json()) as { status: string };
      assert.equal(body.status, 'evatr-0007');
    });
  });

  describe('the official test pair', () => {
    it('simple request: evatr-0000, no qualified check, every match C', async () => {
      const result = answer(await client.confirm({ requesterVat: 'DE123456789', vat: 'ATU12345678' }));
      assert.equal(result.status, 'evatr-0000');
      assert.equal(result.category, 'valid_not_qualified');
      assert.deepEqual(result.matches, { name: 'C', street: 'C', postcode: 'C', town: 'C' });
      assert.deepEqual(result.upstreamMatches, { name: null, street: null, postcode: null, town: null });
      assert.deepEqual(Object.keys(JSON.parse(result.raw.responseBody)), [
        'id',
        'anfrageZeitpunkt',
        'status',
      ]);
    });

    it('qualified request with the documented data: all A, qualified', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: 'DE123456789',
          vat: 'ATU12345678',
          name: 'Musterhaus GmbH & Co KG',
          street: 'Musterstrasse 22',
          postcode: '12345',
          town: 'musterort',
        }),
      );
      assert.equal(result.status, 'evatr-0000');
      assert.equal(result.httpStatus, 200);
      assert.equal(result.category, 'qualified');
      assert.deepEqual(result.matches, { name: 'A', street: 'A', postcode: 'A', town: 'A' });
      assert.deepEqual(Object.keys(JSON.parse(result.raw.responseBody)), [
        'id',
        'anfrageZeitpunkt',
        'status',
        'ergFirmenname',
        'ergStrasse',
        'ergPlz',
        'ergOrt',
      ]);
    });

    it('compares case- and whitespace-insensitively', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: 'DE123456789',
          vat: 'ATU12345678',
          name: '  MUSTERHAUS  gmbh & co KG ',
          town: 'Musterort',
        }),
      );
      assert.equal(result.category, 'qualified');
      assert.deepEqual(result.matches, { name: 'A', street: 'C', postcode: 'C', town: 'A' });
    });
  });

  describe('match codes', () => {
    it('B for a field that differs: valid, not qualified', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'ATU12345678',
          name: 'Musterhaus GmbH & Co KG',
          street: 'Andere Strasse 1',
          town: 'musterort',
        }),
      );
      assert.equal(result.status, 'evatr-0000');
      assert.equal(result.category, 'valid_not_qualified');
      assert.deepEqual(result.matches, { name: 'A', street: 'B', postcode: 'C', town: 'A' });
    });

    it('D for a field the member state does not communicate: valid, not qualified', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'ESB12345674',
          name: 'Ejemplo Sociedad Limitada',
          street: 'Calle Mayor 1',
          postcode: '28013',
          town: 'Madrid',
        }),
      );
      assert.equal(result.category, 'valid_not_qualified');
      assert.deepEqual(result.matches, { name: 'A', street: 'D', postcode: 'D', town: 'A' });
    });

    it('C for fields not supplied; qualified when every supplied field is A', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'ESB12345674',
          name: 'ejemplo sociedad limitada',
          town: 'MADRID',
        }),
      );
      assert.equal(result.category, 'qualified');
      assert.deepEqual(result.matches, { name: 'A', street: 'C', postcode: 'C', town: 'A' });
      assert.equal(JSON.parse(result.raw.requestBody).strasse, undefined);
    });

    it('empty strings count as not supplied and are not sent', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'ATU12345678',
          name: 'Musterhaus GmbH & Co KG',
          street: '',
          postcode: '   ',
          town: 'musterort',
        }),
      );
      assert.deepEqual(Object.keys(JSON.parse(result.raw.requestBody)), [
        'anfragendeUstid',
        'angefragteUstid',
        'firmenname',
        'ort',
      ]);
      assert.equal(result.category, 'qualified');
    });
  });

  describe('UTF-8 names', () => {
    it('a Hungarian name with umlauts round-trips and matches', async () => {
      const result = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'HU12345676',
          name: 'Müller & Söhne Kft.',
          street: 'Fő utca 1.',
          postcode: '1011',
          town: 'Budapest',
        }),
      );
      assert.equal(result.category, 'qualified');
      assert.ok(result.raw.requestBody.includes('"firmenname":"Müller & Söhne Kft."'));
      assert.ok(result.raw.requestBody.includes('"strasse":"Fő utca 1."'));
    });

    it('a Polish town with Ł and ź round-trips and matches; a different accent is a B', async () => {
      const ok = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'PL5260001246',
          name: 'Łódzkie Zakłady Sp. z o.o.',
          town: 'Łódź',
        }),
      );
      assert.deepEqual(ok.matches, { name: 'A', street: 'C', postcode: 'C', town: 'A' });
      const accentless = answer(
        await client.confirm({
          requesterVat: REQUESTER,
          vat: 'PL5260001246',
          name: 'Łódzkie Zakłady Sp. z o.o.',
          town: 'Lodz',
        }),
      );
      assert.equal(accentless.matches.town, 'B');
      assert.equal(accentless.category, 'valid_not_qualified');
    });
  });

  describe('invalid numbers with validity periods', () => {
    it('evatr-2002 sends gueltigAb (ISO by default)', async () => {
      const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992002' }));
      assert.equal(result.category, 'invalid');
      assert.match(result.validFrom ?? '', /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(result.validTo, null);
    });
  });

  describe('info endpoints', () => {
    it('statusmeldungen lists all 26 codes with the real field names', async () => {
      const res = await fetch(`${server.url}/evatr/app/v1/info/statusmeldungen`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=UTF-8');
      const list = (await res.json()) as Record<string, unknown>[];
      assert.deepEqual(
        list.map((s) => s.status),
        Object.keys(EXPECTED),
      );
      const first = list.find((s) => s.status === 'evatr-0001');
      assert.equal(first?.httpcode, undefined);
      assert.equal(first?.feld, 'datenschutz');
      const valid = list.find((s) => s.status === 'evatr-0000');
      assert.deepEqual(valid, {
        status: 'evatr-0000',
        kategorie: 'Ergebnis',
        httpcode: 200,
        meldung: 'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig.',
      });
      for (const entry of list) {
        if (entry.httpcode !== undefined)
          assert.equal(entry.httpcode, EXPECTED[entry.status as string]?.http);
      }
    });

    it('eu_mitgliedstaaten lists the member states with alpha2, name and verfuegbar, also without /app', async () => {
      const res = await fetch(`${server.url}/evatr/v1/info/eu_mitgliedstaaten`);
      assert.equal(res.status, 200);
      const states = (await res.json()) as { alpha2: string; name: string; verfuegbar: boolean }[];
      assert.equal(states.length, 27);
      assert.deepEqual(
        states.find((s) => s.alpha2 === 'AT'),
        { alpha2: 'AT', name: 'Österreich', verfuegbar: true },
      );
      assert.ok(states.some((s) => s.alpha2 === 'EL'));
    });

    it('wrong method → 405, unknown path → 404', async () => {
      assert.equal((await fetch(`${server.url}/evatr/app/v1/abfrage`)).status, 405);
      assert.equal((await fetch(`${server.url}/evatr/app/v1/nothing`)).status, 404);
    });
  });

  describe('controls and counters', () => {
    it('maintenance answers 503 HTML, which the client reports as bad_response', async () => {
      sim.control({ maintenance: true });
      try {
        const before = sim.stats().maintenanceRejections as number;
        const result = await client.confirm({ requesterVat: REQUESTER, vat: 'ATU12345678' });
        assert.equal(result.kind, 'failure');
        assert.equal(result.kind === 'failure' && result.reason, 'bad_response');
        assert.equal(result.raw.httpStatus, 503);
        assert.match(result.raw.responseBody ?? '', /^<!DOCTYPE html>/);
        assert.equal(sim.stats().maintenanceRejections, before + 1);
        const info = await fetch(`${server.url}/evatr/app/v1/info/eu_mitgliedstaaten`);
        assert.equal(info.status, 503);
        await info.text();
      } finally {
        sim.control({ maintenance: false });
      }
    });

    it('control returns the settings; stats count calls per status', async () => {
      const before = (sim.stats().byStatus as Record<string, number>)['evatr-2001'] ?? 0;
      await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992001' });
      const settings = sim.control({ latencyMs: 0, dateFormat: 'iso' });
      assert.deepEqual(settings, {
        latencyMs: 0,
        maintenance: false,
        dateFormat: 'iso',
        qualifiedSessionLimit: null,
        unavailableCountries: [],
      });
      const stats = sim.stats() as { calls: number; abfrage: number; byStatus: Record<string, number> };
      assert.ok(stats.calls >= stats.abfrage);
      assert.equal(stats.byStatus['evatr-2001'], before + 1);
    });

    it('latency control delays the answer without changing it', async () => {
      sim.control({ latencyMs: 20 });
      try {
        const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992001' }));
        assert.equal(result.status, 'evatr-2001');
      } finally {
        sim.control({ latencyMs: 0 });
      }
    });
  });
});

describe('eVatR simulator clock, timestamps and date formats', () => {
  const summer = new Date('2025-07-14T08:01:02.123Z');
  const winter = new Date('2025-01-14T08:01:02.987Z');

  async function withSimulator(
    options: Parameters<typeof createEvatrSimulator>[0],
    run: (client: EvatrClient) => Promise<void>,
  ): Promise<void> {
    const server = await startSimulator(createEvatrSimulator(options));
    try {
      await run(createEvatrClient({ baseUrl: `${server.url}/evatr/app/`, timeoutMs: 5000 }));
    } finally {
      await server.close();
    }
  }

  it('sends nanosecond timestamps with the Berlin summer offset; the client normalises to UTC ms', async () => {
    await withSimulator({ now: () => summer }, async (client) => {
      const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU12345678' }));
      assert.match(result.upstreamTimestamp ?? '', /^2025-07-14T10:01:02\.123\d{6}\+02:00$/);
      assert.equal(result.answeredAt, '2025-07-14T08:01:02.123Z');
    });
  });

  it('uses +01:00 in winter', async () => {
    await withSimulator({ now: () => winter }, async (client) => {
      const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU12345678' }));
      assert.match(result.upstreamTimestamp ?? '', /^2025-01-14T09:01:02\.987\d{6}\+01:00$/);
      assert.equal(result.answeredAt, '2025-01-14T08:01:02.987Z');
    });
  });

  it('changes the offset at the switch to summer time (01:00 UTC on the last Sunday of March)', async () => {
    const cases: [string, RegExp][] = [
      ['2025-03-30T00:59:59.250Z', /^2025-03-30T01:59:59\.250\d{6}\+01:00$/],
      ['2025-03-30T01:00:00.250Z', /^2025-03-30T03:00:00\.250\d{6}\+02:00$/],
      ['2025-10-26T00:59:59.250Z', /^2025-10-26T02:59:59\.250\d{6}\+02:00$/],
      ['2025-10-26T01:00:00.250Z', /^2025-10-26T02:00:00\.250\d{6}\+01:00$/],
    ];
    for (const [at, shown] of cases) {
      await withSimulator({ now: () => new Date(at) }, async (client) => {
        const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU12345678' }));
        assert.match(result.upstreamTimestamp ?? '', shown);
        assert.equal(result.answeredAt, at);
      });
    }
  });

  it('2006 with ISO dates', async () => {
    await withSimulator({ now: () => summer }, async (client) => {
      const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992006' }));
      assert.equal(JSON.parse(result.raw.responseBody).gueltigAb, '2020-01-01');
      assert.equal(result.validFrom, '2020-01-01');
      assert.equal(result.validTo, '2024-12-31');
      assert.equal(result.category, 'invalid');
      assert.equal(result.httpStatus, 200);
    });
  });

  it('2006 and 2002 with German dates', async () => {
    await withSimulator({ now: () => summer, dateFormat: 'german' }, async (client) => {
      const expired = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992006' }));
      assert.equal(JSON.parse(expired.raw.responseBody).gueltigBis, '31.12.2024');
      assert.equal(expired.validFrom, '2020-01-01');
      assert.equal(expired.validTo, '2024-12-31');
      const notYet = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992002' }));
      assert.equal(JSON.parse(notYet.raw.responseBody).gueltigAb, '13.08.2025');
      assert.equal(notYet.validFrom, '2025-08-13');
      assert.equal(notYet.validTo, null);
    });
  });

  it('the date format can be switched through control', async () => {
    const sim = createEvatrSimulator({ now: () => summer });
    const server = await startSimulator(sim);
    try {
      const client = createEvatrClient({ baseUrl: `${server.url}/evatr/app`, timeoutMs: 5000 });
      sim.control({ dateFormat: 'german' });
      const result = answer(await client.confirm({ requesterVat: REQUESTER, vat: 'ATU99992006' }));
      assert.equal(JSON.parse(result.raw.responseBody).gueltigAb, '01.01.2020');
      assert.equal(result.validFrom, '2020-01-01');
    } finally {
      await server.close();
    }
  });
});
