import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpretRoAnswer } from '../../../src/registries/ro-anaf.js';
import { answer, fixture, http, RECEIVED, unavailable } from './helpers.js';

describe('RO ANAF answers', () => {
  it('scpTVA true is registered, with the registered office and the VAT periods', () => {
    const [result] = interpretRoAnswer(
      http(200, fixture('ro-anaf/found-registered.json')),
      [18547290],
      RECEIVED,
    );
    const payer = answer(result);
    assert.equal(payer.valid, true);
    assert.equal(payer.registerStatus, 'scpTVA=true');
    assert.equal(payer.name, 'test S.R.L.');
    assert.deepEqual(payer.address, {
      text: 'test adresa',
      street: 'Str. Avram Iancu 46',
      postcode: '540090',
      city: 'Mun. Târgu Mureş',
      country: null,
    });
    assert.deepEqual(payer.identifiers, { cui: '18547290', tradeRegisterNumber: 'J26/1234/2007' });
    assert.deepEqual(payer.registrations, [{ from: '2012-01-01', to: null, kind: null }]);
    assert.deepEqual(payer.flags, []);
  });

  it('notFound and scpTVA false are not registered; an inactive taxpayer is flagged', () => {
    for (const status of [200, 404]) {
      const [missing] = interpretRoAnswer(
        http(status, fixture('ro-anaf/not-found.json')),
        [18547290],
        RECEIVED,
      );
      assert.equal(answer(missing).valid, false);
    }
    const [inactive] = interpretRoAnswer(
      http(200, fixture('ro-anaf/found-inactive-deregistered.json')),
      [11100021],
      RECEIVED,
    );
    const payer = answer(inactive);
    assert.equal(payer.valid, false);
    assert.deepEqual(payer.flags, [
      { code: 'inactive_taxpayer', since: '2021-06-01', registerValue: 'true' },
    ]);
    assert.equal(payer.registrations[0]?.to, '2021-06-30');
  });

  it('the firewall page, another CUI and an answer without found/notFound are not answers', () => {
    const rejected = unavailable(
      interpretRoAnswer(http(200, fixture('ro-anaf/firewall-rejected.html.txt')), [18547290], RECEIVED)[0],
    );
    assert.equal(rejected.reason, 'throttled');
    assert.match(rejected.message, /8096782510241224773/);
    assert.equal(
      unavailable(
        interpretRoAnswer(http(200, fixture('ro-anaf/found-registered.json')), [11100005], RECEIVED)[0],
      ).reason,
      'bad_response',
    );
    assert.equal(
      unavailable(interpretRoAnswer(http(200, '{"cod":200,"message":"SUCCESS"}'), [18547290], RECEIVED)[0])
        .reason,
      'bad_response',
    );
    const noFlag = fixture('ro-anaf/found-registered.json').replace('"scpTVA":true', '"scpTVA":"true"');
    assert.equal(
      unavailable(interpretRoAnswer(http(200, noFlag), [18547290], RECEIVED)[0]).reason,
      'bad_response',
    );
    assert.equal(
      unavailable(interpretRoAnswer(http(502, fixture('ro-anaf/not-found.json')), [18547290], RECEIVED)[0])
        .reason,
      'down',
    );
  });
});
