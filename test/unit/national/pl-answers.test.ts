import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { secondsUntilMidnight, zoneDate } from '../../../src/registries/national-common.js';
import {
  interpretPlBatch,
  interpretPlSearch,
  parseRequestDateTime,
  plAddress,
} from '../../../src/registries/pl-whitelist.js';
import { answer, fixture, http, RECEIVED, unavailable } from './helpers.js';

describe('PL white list answers', () => {
  it('Czynny is registered, with the requestId as the consultation number and Warsaw time', () => {
    const result = answer(
      interpretPlSearch(http(200, fixture('pl-whitelist/search-nip-active.json')), '1110000007', RECEIVED),
    );
    assert.equal(result.valid, true);
    assert.equal(result.source, 'pl_whitelist');
    assert.equal(result.registrationScope, 'domestic');
    assert.equal(result.registerStatus, 'Czynny');
    assert.equal(result.consultationNumber, 'MVRqg-98jk3i1');
    assert.deepEqual(result.identifiers, {
      nip: '1110000007',
      requestId: 'MVRqg-98jk3i1',
      regon: '610188201',
      krs: '0000028860',
    });
    assert.equal(result.name, 'TESTOWA SPÓŁKA AKCYJNA');
    assert.deepEqual(result.address, {
      text: 'CHEMIKÓW 7, 09-411 PŁOCK',
      street: 'CHEMIKÓW 7',
      postcode: '09-411',
      city: 'PŁOCK',
      country: null,
    });
    // 24-09-2026 02:36:01 in Warsaw (CEST, UTC+2).
    assert.equal(result.checkedAt.toISOString(), '2026-09-24T00:36:01.000Z');
    assert.deepEqual(result.registrations, [{ from: '1993-07-05', to: null, kind: 'registration' }]);
  });

  it('Zwolniony and Niezarejestrowany are not registered; a NIP not on the list is not either', () => {
    const exempt = answer(
      interpretPlSearch(http(200, fixture('pl-whitelist/search-nip-exempt.json')), '1110000013', RECEIVED),
    );
    assert.equal(exempt.valid, false);
    assert.equal(exempt.registerStatus, 'Zwolniony');
    assert.equal(exempt.address?.street, 'ul/ Prosta 49');
    assert.equal(exempt.address?.city, 'Warszawa');
    const removed = answer(
      interpretPlSearch(http(200, fixture('pl-whitelist/search-nip-removed.json')), '1110000036', RECEIVED),
    );
    assert.equal(removed.valid, false);
    assert.equal(removed.registerStatus, 'Niezarejestrowany');
    assert.deepEqual(removed.registrations, [{ from: '1993-07-05', to: '2026-03-31', kind: 'registration' }]);
    const unlisted = answer(
      interpretPlSearch(
        http(200, fixture('pl-whitelist/search-nip-not-listed.json')),
        '1110000042',
        RECEIVED,
      ),
    );
    assert.equal(unlisted.valid, false);
    assert.equal(unlisted.registerStatus, null);
    assert.equal(unlisted.name, null);
    assert.equal(unlisted.consultationNumber, 'h1zOr-98jk3jj');
  });

  it('an answer about another NIP, an unknown statusVat or a result without subject is not an answer', () => {
    const other = interpretPlSearch(
      http(200, fixture('pl-whitelist/search-nip-active.json')),
      '1110000013',
      RECEIVED,
    );
    assert.equal(unavailable(other).reason, 'bad_response');
    for (const word of ['Aktywny', 'constructor', 'toString']) {
      const odd = fixture('pl-whitelist/search-nip-active.json').replace('"Czynny"', `"${word}"`);
      assert.equal(
        unavailable(interpretPlSearch(http(200, odd), '1110000007', RECEIVED)).reason,
        'bad_response',
        word,
      );
    }
    assert.equal(
      unavailable(interpretPlSearch(http(200, '{"result":{}}'), '1110000007', RECEIVED)).reason,
      'bad_response',
    );
  });

  it('maps the error codes: refusals, the daily limit until Warsaw midnight, maintenance', () => {
    for (const name of ['error-400-wl103-future-date.json', 'error-400-wl118-old-date.json']) {
      assert.equal(
        unavailable(interpretPlSearch(http(400, fixture(`pl-whitelist/${name}`)), '1110000007', RECEIVED))
          .reason,
        'rejected',
      );
    }
    const route = unavailable(
      interpretPlSearch(
        http(404, fixture('pl-whitelist/error-404-wl190-unknown-route.json')),
        '1110000007',
        RECEIVED,
      ),
    );
    assert.equal(route.reason, 'rejected');
    assert.equal(route.upstreamCode, 'WL-190');
    const limit = unavailable(
      interpretPlSearch(
        http(400, fixture('pl-whitelist/error-400-wl191-daily-limit.json')),
        '1110000007',
        RECEIVED,
      ),
    );
    assert.equal(limit.reason, 'throttled');
    // 10:00Z is 12:00 in Warsaw: twelve hours to midnight.
    assert.equal(limit.retryAfterSeconds, 12 * 3600);
    const maintenance = unavailable(
      interpretPlSearch(http(503, fixture('pl-whitelist/maintenance-http-503.json')), '1110000007', RECEIVED),
    );
    assert.equal(maintenance.reason, 'down');
    assert.equal(maintenance.upstreamCode, 'HTTP-503');
    const nested = unavailable(
      interpretPlSearch(http(400, '{"exception":{"code":"WL-196","message":"x"}}'), '1110000007', RECEIVED),
    );
    assert.equal(nested.upstreamCode, 'WL-196');
    assert.equal(nested.reason, 'down');
  });

  it('reads a batch answer by identifier, whatever its order', () => {
    const nips = ['1110000007', '1110000036', '1110000042', '1110000008'];
    const results = interpretPlBatch(
      http(200, fixture('pl-whitelist/search-nips-mixed.json')),
      nips,
      RECEIVED,
    );
    assert.equal(answer(results[0]).valid, true);
    assert.equal(answer(results[0]).consultationNumber, 'MgWii-98jk3j7');
    assert.equal(answer(results[1]).registerStatus, 'Niezarejestrowany');
    assert.equal(answer(results[2]).valid, false);
    assert.equal(unavailable(results[3]).upstreamCode, 'WL-115');
    const missing = interpretPlBatch(
      http(200, fixture('pl-whitelist/search-nips-mixed.json')),
      ['1110000013'],
      RECEIVED,
    );
    assert.equal(unavailable(missing[0]).reason, 'bad_response');
  });

  it('splits both address renderings and reads Warsaw times across the clock change', () => {
    assert.equal(plAddress('no postcode here')?.street, null);
    assert.equal(plAddress(null), null);
    assert.equal(
      parseRequestDateTime('24-01-2026 10:00:00', RECEIVED).toISOString(),
      '2026-01-24T09:00:00.000Z',
    );
    assert.equal(parseRequestDateTime('garbage', RECEIVED), RECEIVED);
    // A time ahead of the arrival (a skewed clock) is not kept.
    assert.equal(parseRequestDateTime('24-09-2027 10:00:00', RECEIVED), RECEIVED);
    assert.equal(zoneDate('Europe/Warsaw', new Date('2026-09-23T22:30:00Z')), '2026-09-24');
    // Midnight starting 29 March 2026 in Warsaw: that day has 23 hours (summer time from 02:00).
    assert.equal(secondsUntilMidnight('Europe/Warsaw', new Date('2026-03-28T23:00:00Z')), 23 * 3600);
  });
});
