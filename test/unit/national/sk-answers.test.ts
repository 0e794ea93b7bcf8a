import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dottedDay } from '../../../src/registries/national-common.js';
import type { NationalUnavailable } from '../../../src/registries/national-port.js';
import { interpretSkSearch, type SkRows } from '../../../src/registries/sk-financnasprava.js';
import { fixture, http, RECEIVED } from './helpers.js';

const unavailable = (result: SkRows): NationalUnavailable => {
  assert.equal(result.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as NationalUnavailable;
};

const rows = (result: SkRows) => {
  assert.equal(result.kind, 'rows', `expected rows, got ${JSON.stringify(result)}`);
  return result.kind === 'rows' ? result.rows : [];
};

describe('SK Financial Administration list answers', () => {
  it('reads the recorded ds_dphs entry of the number asked', () => {
    const found = rows(
      interpretSkSearch(
        http(200, fixture('sk-financnasprava/search-ds_dphs-found.json')),
        'ds_dphs',
        'SK2120000003',
        RECEIVED,
      ),
    );
    assert.equal(found.length, 1);
    assert.equal(found[0]?.druh_reg_dph, '§4');
    assert.equal(found[0]?.nazov_ds, 'Vzorová obchodná, spol. s r.o.');
  });

  it('the recorded miss (404 "Page doesn\'t exists") and an empty page are no entry', () => {
    assert.deepEqual(
      rows(
        interpretSkSearch(
          http(404, fixture('sk-financnasprava/search-miss-404.json')),
          'ds_dphs',
          'SK2120000036',
          RECEIVED,
        ),
      ),
      [],
    );
    const empty = JSON.stringify({ page: 1, pages: 1, itemsCount: 0, itemsPerPage: 1000, data: [] });
    assert.deepEqual(rows(interpretSkSearch(http(200, empty), 'ds_dphs', 'SK2120000036', RECEIVED)), []);
  });

  it('any other 404, a refused key, a refused search, throttling and errors are unavailable', () => {
    const cases: [number, string, string][] = [
      [404, fixture('sk-financnasprava/list-not-found-404.json'), 'bad_response'],
      [404, '<html><body><h1>404 Not Found</h1></body></html>', 'bad_response'],
      [404, '{"status":"error","code":"404","message":"Page doesn\'t exists","extra":1}', 'bad_response'],
      [401, '', 'rejected'],
      [403, '{"message":"Forbidden"}', 'rejected'],
      [400, '{"status":"error","code":"400","message":"Minimum search len is 5"}', 'rejected'],
      [429, '', 'throttled'],
      [500, '', 'down'],
      [503, '<html><body>Údržba</body></html>', 'down'],
      [504, '', 'timeout'],
    ];
    for (const [status, body, reason] of cases) {
      const result = unavailable(interpretSkSearch(http(status, body), 'ds_dphs', 'SK2120000036', RECEIVED));
      assert.equal(result.reason, reason, `${status} ${body}`);
      assert.equal(result.source, 'sk_financnasprava');
    }
    assert.equal(
      unavailable(interpretSkSearch(http(401, ''), 'ds_dphs', 'SK2120000036', RECEIVED)).upstreamCode,
      'HTTP_401',
    );
  });

  it('a page that is not the envelope, another number or a truncated body is unavailable', () => {
    const envelope = JSON.parse(fixture('sk-financnasprava/search-ds_dphs-found.json'));
    const bodies = [
      '<html><body>Service Unavailable</body></html>',
      '',
      fixture('sk-financnasprava/search-ds_dphs-found.json').slice(0, 120),
      JSON.stringify({ ...envelope, itemsCount: 0 }),
      JSON.stringify({ ...envelope, page: 2 }),
      JSON.stringify({ ...envelope, data: 'none' }),
      JSON.stringify({ ...envelope, itemsPerPage: '1000' }),
    ];
    for (const body of bodies) {
      assert.equal(
        unavailable(interpretSkSearch(http(200, body), 'ds_dphs', 'SK2120000003', RECEIVED)).reason,
        'bad_response',
        body.slice(0, 60),
      );
    }
    const other = unavailable(
      interpretSkSearch(
        http(200, fixture('sk-financnasprava/search-ds_dphs-found.json')),
        'ds_dphs',
        'SK2120000014',
        RECEIVED,
      ),
    );
    assert.match(other.message, /other numbers/);
  });

  it('dates are DD.MM.YYYY', () => {
    assert.equal(dottedDay('11.10.2000'), '2000-10-11');
    assert.equal(dottedDay('1.2.2024'), '2024-02-01');
    assert.equal(dottedDay('31.02.2024'), null);
    assert.equal(dottedDay('2024-02-01'), null);
    assert.equal(dottedDay(null), null);
  });
});
