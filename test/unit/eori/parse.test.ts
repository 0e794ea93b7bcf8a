import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EORI_COUNTRIES,
  type EoriFormatFailure,
  EU_EORI_COUNTRIES,
  type ParsedEori,
  parseEori,
  serviceForEoriCountry,
} from '../../../src/modules/eori/index.js';

function parsed(input: string): ParsedEori {
  const result = parseEori(input);
  assert.ok(result.ok, `${JSON.stringify(input)}: ${result.ok ? '' : result.message}`);
  return result;
}

function failed(input: unknown): EoriFormatFailure {
  const result = parseEori(input);
  assert.equal(result.ok, false, `${JSON.stringify(input)} was accepted as ${JSON.stringify(result)}`);
  return result as EoriFormatFailure;
}

describe('EORI numbers: normalisation', () => {
  it('reads case, spaces, dots, dashes, slashes and other separators people type', () => {
    const forms = [
      'DE123456789012345',
      'de123456789012345',
      'De 1234 5678 9012 345',
      'DE-123456789-012345',
      'DE.123.456.789.012.345',
      'DE/123456789/012345',
      '  DE123456789012345\n',
      '"DE123456789012345"',
      '(DE 123456789012345)',
      'DE:123456789012345',
      'DE\u00a0123\u202f456\u2009789012345',
      'DE\u2013123456789012345',
      '\uff24\uff25123456789012345',
    ];
    for (const form of forms) assert.equal(parsed(form).eori, 'DE123456789012345', JSON.stringify(form));
  });

  it('keeps letters of EU identifiers, upper-cased', () => {
    const result = parsed('ie 1234567 wa');
    assert.equal(result.eori, 'IE1234567WA');
    assert.equal(result.national, '1234567WA');
    assert.equal(parsed('atEOS1000012345').eori, 'ATEOS1000012345');
  });

  it('reads the Greek VAT prefix EL as GR and UK as GB', () => {
    const greek = parsed('EL 094019245');
    assert.equal(greek.country, 'GR');
    assert.equal(greek.eori, 'GR094019245');
    assert.equal(parsed('GR094019245').eori, 'GR094019245');
    const uk = parsed('uk 123456789000');
    assert.equal(uk.country, 'GB');
    assert.equal(uk.eori, 'GB123456789000');
  });
});

describe('EORI numbers: which service answers', () => {
  it('EOS for the 27 member states and XI, HMRC for GB', () => {
    assert.equal(EU_EORI_COUNTRIES.length, 27);
    assert.equal(EORI_COUNTRIES.length, 29);
    for (const country of EU_EORI_COUNTRIES) {
      assert.equal(serviceForEoriCountry(country), 'eos', country);
      assert.equal(parsed(`${country}12345678`).service, 'eos', country);
    }
    assert.equal(parsed('XI123456789000').service, 'eos');
    assert.equal(parsed('GB123456789000').service, 'hmrc');
    assert.equal(serviceForEoriCountry('EL'), null, 'EL is only an alias, read as GR');
    assert.equal(serviceForEoriCountry('CH'), null);
  });
});

describe('EORI numbers: the local format check', () => {
  it('EU: 1 to 15 letters and digits after the country code', () => {
    assert.equal(parsed('FR1').eori, 'FR1');
    assert.equal(parsed('FR301272811').eori, 'FR301272811');
    assert.equal(parsed('FR30127281100037').eori, 'FR30127281100037');
    assert.equal(parsed('NL123456789012345').national.length, 15);
    const long = failed('NL1234567890123456');
    assert.equal(long.reason, 'length');
    assert.equal(long.country, 'NL');
    assert.match(long.message, /at most 15 characters.*16/);
    const empty = failed('FR');
    assert.equal(empty.reason, 'length');
    assert.match(empty.message, /nothing after the country code FR/);
  });

  it('EU: a character that is neither a letter nor a digit', () => {
    for (const input of ['DE1234+5678', 'DE1234*5678', 'DE12é45678', 'DE12#4']) {
      const failure = failed(input);
      assert.equal(failure.reason, 'characters', input);
      assert.equal(failure.country, 'DE');
    }
    assert.match(failed('DE12#4').message, /"#"/);
  });

  it('GB and XI: 12 to 15 digits, as HMRC checks them', () => {
    for (const input of ['GB123456789000', 'GB123456789000123', 'XI123456789000', 'XI123456789000123']) {
      assert.equal(parsed(input).eori, input);
    }
    const vatNumber = failed('GB123456789');
    assert.equal(vatNumber.reason, 'length');
    assert.equal(vatNumber.country, 'GB');
    assert.match(vatNumber.message, /12 to 15 digits.*VAT number and 000.*has 9/);
    assert.equal(failed('GB1234567890001234').reason, 'length');
    assert.equal(failed('XI12345678900').reason, 'length');
    const letters = failed('GBGD123456789000');
    assert.equal(letters.reason, 'characters');
    assert.match(letters.message, /only digits after GB; "G"/);
    assert.equal(failed('XI12345678900A').reason, 'characters');
  });

  it('country: missing, unknown, or a country that issues no EORI numbers', () => {
    const none = failed('123456789');
    assert.equal(none.reason, 'country');
    assert.equal(none.country, null);
    const unknown = failed('QQ123456');
    assert.equal(unknown.reason, 'country');
    assert.equal(unknown.country, null);
    assert.match(unknown.message, /not a country code/);
    const swiss = failed('CH123456789');
    assert.equal(swiss.reason, 'country');
    assert.equal(swiss.country, 'CH');
    assert.match(swiss.message, /CH does not issue EORI numbers/);
    assert.equal(failed('').reason, 'country');
    assert.equal(failed('   ').reason, 'country');
    assert.equal(failed(12345).reason, 'country');
    assert.equal(failed(null).reason, 'country');
  });

  it('a far too long input is refused before it is read', () => {
    const failure = failed(`DE${'1'.repeat(200)}`);
    assert.equal(failure.reason, 'length');
  });

  it('never throws, whatever the input', () => {
    const inputs: unknown[] = [undefined, {}, [], 'GB', 'X', '\u0000\u0000', 'DE\ud800', '🇩🇪123', 'GB 1'];
    for (const input of inputs) assert.doesNotThrow(() => parseEori(input));
  });
});
