import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ratesFromTedbRows } from '../../../src/modules/rates/tedb-rules.js';
import {
  buildTedbRequest,
  createTedbClient,
  parseTedbResponse,
  type TedbOutcome,
  type TedbRateRow,
} from '../../../src/registries/tedb.js';
import type { SimulatorServer, SimulatorUrls } from '../../../src/simulators/server.js';
import { recordedTedb, recordedTedbAnswer } from '../../fakes/tedb-recorded.js';
import { type FixtureServer, startFixtureServer, startSimulator } from './helpers.js';

const EU = ['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'GR', 'ES', 'FI', 'FR', 'HR', 'HU', 'IE', 'IT'];

function rowsOf(outcome: TedbOutcome): TedbRateRow[] {
  assert.equal(outcome.kind, 'rates', JSON.stringify(outcome));
  return outcome.kind === 'rates' ? outcome.rows : [];
}

function ratesFor(outcome: TedbOutcome, country: string) {
  const result = ratesFromTedbRows(rowsOf(outcome).filter((row) => row.country === country));
  assert.equal(result.kind, 'rates', JSON.stringify(result));
  return result.kind === 'rates' ? result.rates : null;
}

describe('TEDB client against the simulator', () => {
  let simulator: SimulatorServer;
  let urls: SimulatorUrls;

  before(async () => {
    ({ sim: simulator, urls } = await startSimulator());
  });
  after(() => simulator.close());
  beforeEach(() => {
    simulator.control({ tedb: { reset: true } });
  });

  const client = () => createTedbClient({ url: urls.OPENVAT_TEDB_URL, timeoutMs: 5_000 });

  it('sends the mandatory SOAPAction and the types namespace; without the header TEDB answers a bare 404', async () => {
    const outcome = await client().retrieveVatRates({ countries: ['DE'], situationOn: '2026-11-27' });
    assert.deepEqual(outcome.kind === 'rates' && outcome.countries, ['DE']);
    assert.deepEqual(ratesFor(outcome, 'DE'), {
      standard_rate: 19,
      reduced_rates: [7],
      super_reduced_rate: null,
      parking_rate: null,
    });
    const bare = await fetch(urls.OPENVAT_TEDB_URL, { method: 'POST', body: '<x/>' });
    assert.equal(bare.status, 404);
    assert.equal(await bare.text(), '');
  });

  it('answers in the shape of the recorded answers: an empty additionalInformation, every row of a situation dated from its start', async () => {
    const response = await fetch(urls.OPENVAT_TEDB_URL, {
      method: 'POST',
      headers: {
        'content-type': 'text/xml;charset=UTF-8',
        soapaction: 'urn:ec.europa.eu:taxud:tedb:services:v1:VatRetrievalService/RetrieveVatRates',
      },
      body: buildTedbRequest({ countries: ['AT', 'DE'], situationOn: '2026-11-27' }),
    });
    const body = await response.text();
    const recorded = recordedTedbAnswer('stub-response.xml.gz');
    // The same envelope as the recording's, up to the first row (whitespace between elements aside).
    const opening = (xml: string) =>
      xml.slice(0, xml.indexOf('<vatRateResults>')).replace(/>\s+</g, '><').replace(/\s+/g, ' ').trim();
    assert.equal(opening(body), opening(recorded));
    assert.doesNotMatch(body, /<countries>/);
    const outcome = parseTedbResponse(response.status, body);
    // Austria's situation began when its super-reduced 4.9% did: its 20% is dated from then too.
    assert.deepEqual(
      [...new Set(rowsOf(outcome).map((row) => `${row.country} ${row.situationOn}`))],
      ['AT 2026-07-01', 'DE 2021-01-01'],
    );
  });

  it('asks for Greece as EL and reports it as GR; dates with an offset are read as the day', async () => {
    const outcome = await client().retrieveVatRates({ countries: ['GR'], situationOn: '2026-11-27' });
    const rows = rowsOf(outcome);
    assert.ok(rows.length > 0);
    assert.ok(rows.every((row) => row.country === 'GR'));
    assert.ok(rows.every((row) => /^\d{4}-\d{2}-\d{2}$/.test(row.situationOn)));
    assert.deepEqual(outcome.kind === 'rates' && outcome.countries, ['GR']);
    // 13 comes labelled super-reduced and the island rates as REGION rows: the classic table's 6/13.
    assert.deepEqual(ratesFor(outcome, 'GR'), {
      standard_rate: 24,
      reduced_rates: [6, 13],
      super_reduced_rate: null,
      parking_rate: null,
    });
  });

  it("keeps Spain's standard rate at 21 beside the Canary Islands' 7, and Austria's regional 19 out of its reduced rates", async () => {
    const outcome = await client().retrieveVatRates({ countries: ['ES', 'AT'], situationOn: '2026-11-27' });
    const spain = rowsOf(outcome).filter((row) => row.country === 'ES' && row.type === 'STANDARD');
    assert.deepEqual(spain.map((row) => row.value).sort(), [21, 7].sort());
    assert.equal(ratesFor(outcome, 'ES')?.standard_rate, 21);
    assert.deepEqual(ratesFor(outcome, 'AT'), {
      standard_rate: 20,
      reduced_rates: [10, 13],
      super_reduced_rate: 4.9,
      parking_rate: 13,
    });
  });

  it('drops exempt, out-of-scope and not-applicable rows that carry 0.0', async () => {
    const outcome = await client().retrieveVatRates({ countries: ['DK', 'SK'], situationOn: '2026-11-27' });
    assert.ok(rowsOf(outcome).some((row) => row.rateType === 'EXEMPTED' && row.value === 0));
    assert.deepEqual(ratesFor(outcome, 'DK'), {
      standard_rate: 25,
      reduced_rates: [],
      super_reduced_rate: null,
      parking_rate: null,
    });
    assert.deepEqual(ratesFor(outcome, 'SK')?.reduced_rates, [5, 19]);
  });

  it('maps labels by value as the classic table does: PL 8 and PT 6 are reduced rates, LU 14 a parking rate only', async () => {
    const outcome = await client().retrieveVatRates({
      countries: ['PL', 'PT', 'LU', 'FR'],
      situationOn: '2026-11-27',
    });
    assert.deepEqual(ratesFor(outcome, 'PL')?.reduced_rates, [5, 8]);
    assert.equal(ratesFor(outcome, 'PL')?.super_reduced_rate, null);
    assert.deepEqual(ratesFor(outcome, 'PT'), {
      standard_rate: 23,
      reduced_rates: [6, 13],
      super_reduced_rate: null,
      parking_rate: 13,
    });
    assert.deepEqual(ratesFor(outcome, 'LU'), {
      standard_rate: 17,
      reduced_rates: [8],
      super_reduced_rate: 3,
      parking_rate: 14,
    });
    // One category with several rates (pharmaceuticals at 2.1, 5.5 and 10) adds no band.
    assert.deepEqual(ratesFor(outcome, 'FR'), {
      standard_rate: 20,
      reduced_rates: [5.5, 10],
      super_reduced_rate: 2.1,
      parking_rate: null,
    });
  });

  it('answers a range with every situation in it, each row dated from the day its situation began, so announced changes can be found', async () => {
    simulator.control({ tedb: { announce: { country: 'FI', from: '2027-03-01', standard: 26 } } });
    const range = await client().retrieveVatRates({
      countries: ['FI'],
      from: '2026-11-27',
      to: '2027-11-27',
    });
    const standards = rowsOf(range).filter((row) => row.type === 'STANDARD');
    assert.deepEqual(
      standards.map((row) => [row.situationOn, row.value]),
      [
        ['2026-01-01', 25.5],
        ['2027-03-01', 26],
      ],
    );
    const before = await client().retrieveVatRates({ countries: ['FI'], situationOn: '2027-02-28' });
    const on = await client().retrieveVatRates({ countries: ['FI'], situationOn: '2027-03-01' });
    assert.equal(ratesFor(before, 'FI')?.standard_rate, 25.5);
    assert.equal(ratesFor(on, 'FI')?.standard_rate, 26);
  });

  it('reports faults, non-XML, empty answers and outages as failures, never as rates', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ fault: 'soap' }, 'fault', /TEDB-ERR-1/],
      [{ fault: 'not_xml' }, 'bad_response', /HTML page/],
      [{ fault: 'empty' }, 'bad_response', /empty body/],
      [{ fault: null, serviceDown: true }, 'bad_response', /HTTP 503/],
    ];
    for (const [command, reason, message] of cases) {
      simulator.control({ tedb: { reset: true } });
      simulator.control({ tedb: command });
      const outcome = await client().retrieveVatRates({ countries: EU, situationOn: '2026-11-27' });
      assert.equal(outcome.kind, 'failure', JSON.stringify(command));
      if (outcome.kind === 'failure') {
        assert.equal(outcome.reason, reason);
        assert.match(outcome.message, message);
      }
    }
  });

  it('a partial answer has rows for fewer member states than asked', async () => {
    simulator.control({ tedb: { fault: 'partial' } });
    const outcome = await client().retrieveVatRates({ countries: EU, situationOn: '2026-11-27' });
    assert.equal(outcome.kind, 'rates');
    if (outcome.kind === 'rates') assert.equal(outcome.countries.length, EU.length - 3);
  });

  it('a hanging service is a timeout', async () => {
    simulator.control({ tedb: { hang: true } });
    const outcome = await createTedbClient({ url: urls.OPENVAT_TEDB_URL, timeoutMs: 200 }).retrieveVatRates({
      countries: ['DE'],
      situationOn: '2026-11-27',
    });
    assert.equal(outcome.kind, 'failure');
    if (outcome.kind === 'failure') assert.equal(outcome.reason, 'timeout');
    simulator.control({ tedb: { hang: false } });
  });
});

describe('TEDB client against recorded answers', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer(() => ({ status: 200, body: '' }));
  });
  after(() => server.close());

  it('a namespace mistake is answered with fault TEDB-ERR-2, reported with its code', async () => {
    server.use(() => ({
      status: 500,
      headers: { 'content-type': 'text/xml' },
      body:
        '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><env:Fault><faultcode>env:Client</faultcode>' +
        '<faultstring>The XSD validation failed</faultstring><detail><ns0:retrieveVatRatesFaultMsg xmlns:ns0="urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService" xmlns="urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService:types">' +
        '<error><code>TEDB-ERR-2</code><description>The XSD validation failed</description></error></ns0:retrieveVatRatesFaultMsg></detail></env:Fault></env:Body></env:Envelope>',
    }));
    const outcome = await createTedbClient({ url: server.url, timeoutMs: 2_000 }).retrieveVatRates({
      countries: ['DE'],
      situationOn: '2026-11-27',
    });
    assert.deepEqual(outcome, {
      kind: 'failure',
      reason: 'fault',
      message: 'TEDB answered a SOAP fault: TEDB-ERR-2 The XSD validation failed',
    });
    const request = server.requests.at(-1);
    assert.equal(
      request?.headers.soapaction,
      'urn:ec.europa.eu:taxud:tedb:services:v1:VatRetrievalService/RetrieveVatRates',
    );
    assert.match(
      request?.body ?? '',
      /xmlns:t="urn:ec\.europa\.eu:taxud:tedb:services:v1:IVatRetrievalService:types"/,
    );
    assert.match(request?.body ?? '', /<t:isoCode>DE<\/t:isoCode>/);
  });

  it("reads which member states answered from the rows: HMRC's recorded answer for the 27 and Northern Ireland has an empty additionalInformation", async () => {
    const recording = recordedTedbAnswer('stub-response.xml.gz');
    assert.match(recording, /<additionalInformation\/>/);
    server.use(() => ({ status: 200, headers: { 'content-type': 'text/xml' }, body: recording }));
    const all = [...EU, 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK', 'XI'];
    const outcome = await createTedbClient({ url: server.url, timeoutMs: 5_000 }).retrieveVatRates({
      countries: all,
      from: '2021-01-01',
      to: '2024-04-26',
    });
    const rows = rowsOf(outcome);
    assert.equal(rows.length, 8803);
    assert.deepEqual(outcome.kind === 'rates' && [...outcome.countries].sort(), [...all].sort());
    assert.ok(rows.every((row) => row.category === null && row.comment === null));
    // Every row of a situation is dated from the day that situation began: Germany's 19% since 2021 too.
    const germany = rows.filter((row) => row.country === 'DE' && row.type === 'STANDARD');
    assert.deepEqual(
      [...new Set(germany.map((row) => row.situationOn))],
      ['2021-01-01', '2021-07-01', '2022-01-01', '2022-07-01', '2023-01-01', '2023-07-01', '2024-01-01'],
    );
    // A zero rate labelled as a band (Italy's super-reduced 0.0) is no band of Italy's.
    const italy = rows.filter((row) => row.country === 'IT' && row.situationOn === '2024-01-01');
    assert.ok(italy.some((row) => row.rateType === 'SUPER_REDUCED_RATE' && row.value === 0));
    assert.deepEqual(ratesFromTedbRows(italy), {
      kind: 'rates',
      rates: { standard_rate: 22, reduced_rates: [5, 10], super_reduced_rate: 4, parking_rate: null },
    });
  });

  it("reads recorded rows with their CN codes, categories and comments (HMRC's example answer for Austria)", async () => {
    const recording = recordedTedb(recordedTedbAnswer('example-response-at.xml.gz'));
    server.use((request) => ({
      status: 200,
      headers: { 'content-type': 'text/xml' },
      body: recording.answer(request.body),
    }));
    const outcome = await createTedbClient({ url: server.url, timeoutMs: 5_000 }).retrieveVatRates({
      countries: ['AT'],
      situationOn: '2024-06-01',
    });
    const rows = rowsOf(outcome);
    assert.equal(rows.length, 30);
    assert.deepEqual(outcome.kind === 'rates' && outcome.countries, ['AT']);
    const regional = rows.find((row) => row.value === 19);
    assert.equal(regional?.category?.identifier, 'REGION');
    assert.equal(regional?.comment, 'Jungholz, Mittelberg');
    // TEDB labels Austria's 13% a reduced rate only: no parking rate, unlike the classic table.
    assert.deepEqual(ratesFor(outcome, 'AT'), {
      standard_rate: 20,
      reduced_rates: [10, 13],
      super_reduced_rate: null,
      parking_rate: null,
    });
  });

  it('a connection that fails before any answer is tried once more (the query only reads); twice is a failure', async () => {
    let calls = 0;
    server.use(() => {
      calls += 1;
      return calls === 1
        ? 'reset'
        : {
            status: 200,
            headers: { 'content-type': 'text/xml' },
            body: recordedTedb(recordedTedbAnswer('example-response-at.xml.gz')).answer(
              '<isoCode>AT</isoCode><situationOn>2024-06-01</situationOn>',
            ),
          };
    });
    const client = createTedbClient({ url: server.url, timeoutMs: 5_000 });
    const outcome = await client.retrieveVatRates({ countries: ['AT'], situationOn: '2024-06-01' });
    assert.equal(rowsOf(outcome).length, 30);
    assert.equal(calls, 2);
    server.use(() => 'reset');
    const before = server.requests.length;
    const failed = await client.retrieveVatRates({ countries: ['AT'], situationOn: '2024-06-01' });
    assert.equal(failed.kind === 'failure' && failed.reason, 'network');
    assert.equal(server.requests.length - before, 2);
  });

  it('a row whose rate is not a percentage makes the whole answer unusable', async () => {
    server.use(() => ({
      status: 200,
      headers: { 'content-type': 'text/xml' },
      body:
        '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><ns0:retrieveVatRatesRespMsg xmlns:ns0="urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService" xmlns="urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService:types">' +
        '<vatRateResults><memberState>DE</memberState><type>STANDARD</type><rate><type>DEFAULT</type><value>nineteen</value></rate><situationOn>2021-01-01+01:00</situationOn></vatRateResults>' +
        '</ns0:retrieveVatRatesRespMsg></env:Body></env:Envelope>',
    }));
    const outcome = await createTedbClient({ url: server.url, timeoutMs: 2_000 }).retrieveVatRates({
      countries: ['DE'],
      situationOn: '2026-11-27',
    });
    assert.equal(outcome.kind, 'failure');
    if (outcome.kind === 'failure') assert.equal(outcome.reason, 'bad_response');
  });
});
