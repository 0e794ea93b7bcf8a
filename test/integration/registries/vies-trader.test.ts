import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { matchIdentity, verdictsFromTraderMatch } from '../../../src/modules/identity-match/index.js';
import type { RegistryAnswer, RegistryResult } from '../../../src/registries/port.js';
import { createViesClient } from '../../../src/registries/vies.js';
import { createViesSoapClient } from '../../../src/registries/vies-soap.js';
import { simulatedCompany } from '../../../src/simulators/controls.js';
import type { SimulatorServer, SimulatorUrls } from '../../../src/simulators/server.js';
import { expectedViesAnswer } from '../../../src/simulators/vies.js';
import { type FixtureServer, fixture, startFixtureServer, startSimulator } from './helpers.js';

function asAnswer(result: RegistryResult): RegistryAnswer {
  assert.equal(result.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as RegistryAnswer;
}

const json = (status: number, body: string) => ({ status, body });
const xml = (status: number, body: string) => ({
  status,
  body,
  headers: { 'content-type': 'text/xml;charset=UTF-8' },
});

const ES = { country: 'ES', national: 'B83891812' };
const RODRISA = {
  name: 'Rodrisa Automoviles',
  street: 'Avda. Reina Victoria',
  postcode: '28430',
  city: 'Madrid',
};

describe('VIES approximate matching against recorded bodies', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer(() => json(500, ''));
  });
  after(() => server.close());
  const serve = (reply: ReturnType<typeof json>) => {
    server.use(() => reply);
    server.requests.length = 0;
  };
  const rest = () => createViesClient({ baseUrl: `${server.url}/rest-api`, timeoutMs: 2_000 });
  const soap = () => createViesSoapClient({ url: `${server.url}/soap`, timeoutMs: 2_000 });

  it('REST: sends the trader fields given, trimmed, under the swagger names', async () => {
    serve(json(200, fixture('vies/valid-es-trader-match.json')));
    await rest().lookup({
      vat: ES,
      trader: {
        name: '  Rodrisa Automoviles ',
        street: '',
        postcode: '28430',
        city: 'Madrid',
        companyType: 'SL',
      },
    });
    assert.deepEqual(JSON.parse(server.requests[0]?.body ?? '{}'), {
      countryCode: 'ES',
      vatNumber: 'B83891812',
      traderName: 'Rodrisa Automoviles',
      traderCompanyType: 'SL',
      traderPostalCode: '28430',
      traderCity: 'Madrid',
    });
  });

  it('REST: reads the verdicts of the fields sent, and keeps `---` as no name and address', async () => {
    serve(json(200, fixture('vies/valid-es-trader-match.json')));
    const answer = asAnswer(await rest().lookup({ vat: ES, trader: { name: RODRISA.name, city: 'Madrid' } }));
    assert.deepEqual(answer.traderMatch, { name: 'VALID', city: 'INVALID' });
    assert.equal(answer.name, null);
    assert.equal(answer.address, null);
  });

  it('REST: an answer without trader fields sent has no traderMatch; one without verdicts an empty one', async () => {
    serve(json(200, fixture('vies/valid-cz-trader-placeholders.json')));
    const cz = { country: 'CZ', national: '12345674' };
    const plain = asAnswer(await rest().lookup({ vat: cz }));
    assert.equal('traderMatch' in plain, false);
    assert.equal(plain.address, 'Příkladná 1234/5\nPRAHA 1 - NOVÉ MĚSTO\n110 00  PRAHA 1');
    const blank = asAnswer(await rest().lookup({ vat: cz, trader: { name: '  ' } }));
    assert.equal('traderMatch' in blank, false);
    serve(json(200, fixture('vies/valid-fr.json').replace(/,"trader[A-Za-z]*Match":"NOT_PROCESSED"/g, '')));
    const old = asAnswer(
      await rest().lookup({ vat: { country: 'FR', national: '60815004395' }, trader: { name: 'X' } }),
    );
    assert.deepEqual(old.traderMatch, {});
  });

  it('SOAP: trader fields make the call checkVatApprox, in the WSDL order, the postcode as traderPostcode', async () => {
    serve(xml(200, fixture('vies/soap-approx-es-trader-match.xml')));
    await soap().lookup({ vat: ES, trader: { ...RODRISA, companyType: 'ES-1' } });
    const body = server.requests[0]?.body ?? '';
    assert.match(
      body,
      /<urn:checkVatApprox><urn:countryCode>ES<\/urn:countryCode><urn:vatNumber>B83891812<\/urn:vatNumber><urn:traderName>Rodrisa Automoviles<\/urn:traderName><urn:traderCompanyType>ES-1<\/urn:traderCompanyType><urn:traderStreet>Avda\. Reina Victoria<\/urn:traderStreet><urn:traderPostcode>28430<\/urn:traderPostcode><urn:traderCity>Madrid<\/urn:traderCity><\/urn:checkVatApprox>/,
    );
    assert.doesNotMatch(body, /requester/);
  });

  it('SOAP: a company type not in the coded form is not sent (the schema would reject the call)', async () => {
    serve(xml(200, fixture('vies/soap-approx-es-trader-match.xml')));
    await soap().lookup({ vat: ES, trader: { name: RODRISA.name, companyType: 'SL' } });
    const body = server.requests[0]?.body ?? '';
    assert.match(body, /<urn:traderName>Rodrisa Automoviles<\/urn:traderName>/);
    assert.doesNotMatch(body, /traderCompanyType/);
  });

  it('SOAP: reads matchCodes 1/2/3; a traderName equal to the one sent is not taken as the registered name', async () => {
    serve(xml(200, fixture('vies/soap-approx-es-trader-match.xml')));
    const answer = asAnswer(await soap().lookup({ vat: ES, trader: RODRISA }));
    assert.deepEqual(answer.traderMatch, {
      name: 'VALID',
      street: 'VALID',
      postcode: 'VALID',
      city: 'INVALID',
    });
    assert.equal(answer.name, null);
    assert.equal(answer.consultationNumber, null);
    assert.equal(answer.valid, true);
  });

  it('the REST client falls back to SOAP with the same trader fields', async () => {
    const soapServer = await startFixtureServer(() =>
      xml(200, fixture('vies/soap-approx-es-trader-match.xml')),
    );
    try {
      serve({ status: 503, body: '<html><body>Service unavailable</body></html>' });
      const client = createViesClient({
        baseUrl: `${server.url}/rest-api`,
        soapUrl: `${soapServer.url}/soap`,
        timeoutMs: 2_000,
      });
      const answer = asAnswer(await client.lookup({ vat: ES, trader: { name: RODRISA.name } }));
      assert.deepEqual(answer.traderMatch, { name: 'VALID' });
      assert.match(
        soapServer.requests[0]?.body ?? '',
        /<urn:traderName>Rodrisa Automoviles<\/urn:traderName>/,
      );
    } finally {
      await soapServer.close();
    }
  });
});

/** The first 9-digit number (from 100000001 up) the simulator answers as valid or not. */
function findNumber(country: string, valid: boolean): string {
  for (let n = 100_000_001; ; n++) {
    const expected = expectedViesAnswer(country, String(n));
    if ('valid' in expected && expected.valid === valid) return String(n);
  }
}

describe('VIES approximate matching against the simulator', () => {
  let sim: SimulatorServer;
  let urls: SimulatorUrls;
  let close: () => Promise<void>;
  before(async () => {
    ({ sim, urls, close } = await startSimulator({ seed: 7 }));
  });
  after(() => close());
  beforeEach(() => {
    sim.control({ vies: { reset: true } });
  });

  const clients = () =>
    [
      ['REST', createViesClient({ baseUrl: urls.VIES_URL, timeoutMs: 2_000 })],
      ['SOAP', createViesSoapClient({ url: urls.VIES_SOAP_URL, timeoutMs: 2_000 })],
    ] as const;

  it('answers VALID for the registered data and INVALID for other data, on REST and SOAP', async () => {
    const national = findNumber('FR', true);
    const company = simulatedCompany('FR', national);
    for (const [label, client] of clients()) {
      const answer = asAnswer(
        await client.lookup({
          vat: { country: 'FR', national },
          trader: {
            name: company.name.toLowerCase(),
            street: company.street,
            postcode: company.postcode,
            city: 'Lyonville',
          },
        }),
      );
      assert.deepEqual(
        answer.traderMatch,
        { name: 'VALID', street: 'VALID', postcode: 'VALID', city: 'INVALID' },
        label,
      );
      assert.equal(answer.name, company.name, label);
    }
  });

  it('Spain compares though it discloses nothing; Germany answers NOT_PROCESSED; so does an invalid number', async () => {
    const es = findNumber('ES', true);
    const esCompany = simulatedCompany('ES', es);
    const de = findNumber('DE', true);
    const deCompany = simulatedCompany('DE', de);
    const invalid = findNumber('FR', false);
    for (const [label, client] of clients()) {
      const spain = asAnswer(
        await client.lookup({ vat: { country: 'ES', national: es }, trader: { name: esCompany.name } }),
      );
      assert.deepEqual(spain.traderMatch, { name: 'VALID' }, label);
      assert.equal(spain.name, null, label);
      const germany = asAnswer(
        await client.lookup({
          vat: { country: 'DE', national: de },
          trader: { name: deCompany.name, city: deCompany.town },
        }),
      );
      assert.deepEqual(germany.traderMatch, { name: 'NOT_PROCESSED', city: 'NOT_PROCESSED' }, label);
      const notValid = asAnswer(
        await client.lookup({ vat: { country: 'FR', national: invalid }, trader: { name: 'X' } }),
      );
      assert.equal(notValid.valid, false, label);
      assert.deepEqual(notValid.traderMatch, { name: 'NOT_PROCESSED' }, label);
    }
  });

  it('answers in the recorded shapes: REST trader echo fields `---`, SOAP the name sent for Spain and matchCodes', async () => {
    const es = findNumber('ES', true);
    const company = simulatedCompany('ES', es);
    const restBody = await (
      await fetch(`${urls.VIES_URL}/check-vat-number`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          countryCode: 'ES',
          vatNumber: es,
          traderName: company.name,
          traderCity: 'Nowhere',
        }),
      })
    ).json();
    assert.equal(restBody.name, '---');
    assert.equal(restBody.traderName, '---');
    assert.equal(restBody.traderNameMatch, 'VALID');
    assert.equal(restBody.traderCityMatch, 'INVALID');
    assert.equal(restBody.traderStreetMatch, 'NOT_PROCESSED');
    const envelope =
      '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:urn="urn:ec.europa.eu:taxud:vies:services:checkVat:types">' +
      `<soapenv:Body><urn:checkVatApprox><urn:countryCode>ES</urn:countryCode><urn:vatNumber>${es}</urn:vatNumber>` +
      `<urn:traderName>${company.name}</urn:traderName><urn:traderCity>Nowhere</urn:traderCity></urn:checkVatApprox></soapenv:Body></soapenv:Envelope>`;
    const soapBody = await (
      await fetch(urls.VIES_SOAP_URL, {
        method: 'POST',
        headers: { 'content-type': 'text/xml;charset=UTF-8' },
        body: envelope,
      })
    ).text();
    assert.match(soapBody, new RegExp(`<ns2:traderName>${company.name}</ns2:traderName>`));
    assert.match(
      soapBody,
      /<ns2:traderCity>Nowhere<\/ns2:traderCity><ns2:traderNameMatch>1<\/ns2:traderNameMatch><ns2:traderCompanyTypeMatch>3<\/ns2:traderCompanyTypeMatch><ns2:traderStreetMatch>3<\/ns2:traderStreetMatch><ns2:traderPostcodeMatch>3<\/ns2:traderPostcodeMatch><ns2:traderCityMatch>2<\/ns2:traderCityMatch><ns2:requestIdentifier><\/ns2:requestIdentifier>/,
    );
  });

  it('the identity match reads a Spanish answer by the registry verdict, a French one by its own score', async () => {
    const es = findNumber('ES', true);
    const esCompany = simulatedCompany('ES', es);
    const fr = findNumber('FR', true);
    const frCompany = simulatedCompany('FR', fr);
    const [, client] = clients()[0];
    const spain = asAnswer(
      await client.lookup({ vat: { country: 'ES', national: es }, trader: { name: esCompany.name } }),
    );
    const spainMatch = matchIdentity(
      { name: esCompany.name },
      { name: spain.name, address: spain.address, country: 'ES' },
      verdictsFromTraderMatch(spain.traderMatch),
    );
    assert.deepEqual(spainMatch?.name, { result: 'match', score: null, registry_result: 'match' });
    const claimed = {
      name: `${frCompany.name.split(' ').slice(0, -1).join(' ')} Ltd`,
      city: frCompany.town.toLowerCase(),
    };
    const france = asAnswer(await client.lookup({ vat: { country: 'FR', national: fr }, trader: claimed }));
    const franceMatch = matchIdentity(
      claimed,
      { name: france.name, address: france.address, country: 'FR' },
      verdictsFromTraderMatch(france.traderMatch),
    );
    assert.equal(franceMatch?.city?.result, 'match');
    assert.equal(franceMatch?.city?.registry_result, 'match');
    assert.equal(typeof franceMatch?.name?.score, 'number');
  });
});
