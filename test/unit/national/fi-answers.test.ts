import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpretFiCompanies } from '../../../src/registries/fi-prh.js';
import { answer, fixture, http, RECEIVED, unavailable } from './helpers.js';

describe('FI PRH/YTJ answers', () => {
  it('a running register-6 entry is registered, with the current name and street address', () => {
    const result = answer(
      interpretFiCompanies(
        http(200, fixture('fi-prh/company-vat.json')),
        '1110000-7',
        '2026-09-24',
        RECEIVED,
      ),
    );
    assert.equal(result.valid, true);
    assert.equal(result.national, '11100007');
    assert.equal(result.registerStatus, '80,82');
    assert.equal(result.name, 'Esimerkki Oyj');
    assert.deepEqual(result.address, {
      text: 'Karakaari 7\n02610 ESPOO',
      street: 'Karakaari 7',
      postcode: '02610',
      city: 'ESPOO',
      country: null,
    });
    assert.deepEqual(result.registrations[0], {
      from: '1994-06-01',
      to: null,
      kind: '80 VAT-liable for business activity',
    });
  });

  it('an ended entry, no register-6 entry and no company at all are not registered', () => {
    const ended = answer(
      interpretFiCompanies(
        http(200, fixture('fi-prh/company-vat-ended.json')),
        '1110002-3',
        '2026-09-24',
        RECEIVED,
      ),
    );
    assert.equal(ended.valid, false);
    assert.equal(ended.registrations[0]?.to, '2021-06-30');
    // On a day the entry still ran, the same answer is a registration.
    assert.equal(
      answer(
        interpretFiCompanies(
          http(200, fixture('fi-prh/company-vat-ended.json')),
          '1110002-3',
          '2021-06-30',
          RECEIVED,
        ),
      ).valid,
      true,
    );
    assert.equal(
      answer(
        interpretFiCompanies(
          http(200, fixture('fi-prh/company-no-vat.json')),
          '1110001-5',
          '2026-09-24',
          RECEIVED,
        ),
      ).valid,
      false,
    );
    const none = answer(
      interpretFiCompanies(http(200, fixture('fi-prh/not-found.json')), '1110003-1', '2026-09-24', RECEIVED),
    );
    assert.equal(none.valid, false);
    assert.equal(none.name, null);
  });

  it('an error body, another company and unexpected shapes are not answers', () => {
    const refused = unavailable(
      interpretFiCompanies(http(400, fixture('fi-prh/error-400.json')), '1110000-7', '2026-09-24', RECEIVED),
    );
    assert.equal(refused.reason, 'rejected');
    assert.equal(refused.upstreamCode, '1005');
    assert.equal(
      unavailable(
        interpretFiCompanies(
          http(200, fixture('fi-prh/company-vat.json')),
          '1110001-5',
          '2026-09-24',
          RECEIVED,
        ),
      ).reason,
      'bad_response',
    );
    assert.equal(
      unavailable(interpretFiCompanies(http(200, '{"companies":[]}'), '1110000-7', '2026-09-24', RECEIVED))
        .reason,
      'bad_response',
    );
    assert.equal(
      unavailable(
        interpretFiCompanies(
          http(404, fixture('fi-prh/not-found.json')),
          '1110000-7',
          '2026-09-24',
          RECEIVED,
        ),
      ).reason,
      'bad_response',
    );
    assert.equal(
      unavailable(interpretFiCompanies(http(429, ''), '1110000-7', '2026-09-24', RECEIVED)).reason,
      'throttled',
    );
  });
});
