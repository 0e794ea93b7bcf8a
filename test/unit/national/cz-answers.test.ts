import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpretCzStatus } from '../../../src/registries/cz-adis.js';
import { answer, fixture, http, RECEIVED, unavailable } from './helpers.js';

describe('CZ register of VAT payers answers', () => {
  it('NE is a reliable payer with name and address; NENALEZEN in the same answer is not a payer', () => {
    const [registered, missing] = interpretCzStatus(
      http(200, fixture('cz-adis/status-rozsireny.xml')),
      ['11100001', '11100028'],
      RECEIVED,
    );
    const payer = answer(registered);
    assert.equal(payer.valid, true);
    assert.equal(payer.registerStatus, 'NE');
    assert.deepEqual(payer.flags, []);
    assert.equal(payer.name, 'TESTOVACÍ OBCHOD A.S.');
    assert.deepEqual(payer.address, {
      text: 'Testovací 1522/53\nHOLEŠOVICE (PRAHA 7)\n17000 PRAHA 7',
      street: 'Testovací 1522/53',
      postcode: '17000',
      city: 'PRAHA 7',
      country: 'Česká republika',
    });
    assert.deepEqual(payer.identifiers, { dic: '11100001', taxOffice: '13' });
    const notPayer = answer(missing);
    assert.equal(notPayer.valid, false);
    assert.equal(notPayer.registerStatus, 'NENALEZEN');
  });

  it('ANO is a registered payer flagged unreliable since the published date', () => {
    const [result] = interpretCzStatus(
      http(200, fixture('cz-adis/status-nespolehlivy.xml')),
      ['699001234'],
      RECEIVED,
    );
    const payer = answer(result);
    assert.equal(payer.valid, true);
    assert.deepEqual(payer.flags, [{ code: 'unreliable_payer', since: '2024-03-01', registerValue: 'ANO' }]);
    assert.equal(payer.name, 'JAN NOVÁK');
  });

  it('maintenance, the service unavailable, a fault and another DIČ are not answers', () => {
    const odstavka = unavailable(
      interpretCzStatus(
        http(200, fixture('cz-adis/status-odstavka.xml')),
        ['11100001'],
        new Date('2026-09-25T22:04:00Z'),
      )[0],
    );
    assert.equal(odstavka.reason, 'down');
    assert.equal(odstavka.upstreamCode, 'statusCode 2');
    // 00:04 in Prague: six minutes to the end of the maintenance.
    assert.equal(odstavka.retryAfterSeconds, 360);
    assert.equal(
      unavailable(
        interpretCzStatus(http(200, fixture('cz-adis/status-nedostupna.xml')), ['11100001'], RECEIVED)[0],
      ).reason,
      'down',
    );
    const fault = unavailable(
      interpretCzStatus(http(500, fixture('cz-adis/fault.xml')), ['11100001'], RECEIVED)[0],
    );
    assert.equal(fault.reason, 'down');
    assert.equal(fault.upstreamCode, 'Internal Error');
    assert.equal(
      unavailable(
        interpretCzStatus(http(200, fixture('cz-adis/status-rozsireny.xml')), ['27082440'], RECEIVED)[0],
      ).reason,
      'bad_response',
    );
    for (const word of ['ne', 'constructor', '']) {
      const odd = fixture('cz-adis/status-rozsireny.xml').replace(
        'nespolehlivyPlatce="NE"',
        `nespolehlivyPlatce="${word}"`,
      );
      assert.equal(
        unavailable(interpretCzStatus(http(200, odd), ['11100001'], RECEIVED)[0]).reason,
        'bad_response',
        word,
      );
    }
    assert.equal(
      unavailable(interpretCzStatus(http(503, '<html><body>down</body></html>'), ['11100001'], RECEIVED)[0])
        .reason,
      'down',
    );
    assert.equal(
      unavailable(
        interpretCzStatus(http(500, fixture('cz-adis/status-rozsireny.xml')), ['11100001'], RECEIVED)[0],
      ).reason,
      'down',
    );
  });
});
