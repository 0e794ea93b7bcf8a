import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateCZ } from '../../../src/modules/vat-numbers/countries/cz.js';
import { validateFI } from '../../../src/modules/vat-numbers/countries/fi.js';
import { validatePL } from '../../../src/modules/vat-numbers/countries/pl.js';
import { validateRO } from '../../../src/modules/vat-numbers/countries/ro.js';
import { validateSI } from '../../../src/modules/vat-numbers/countries/si.js';
import {
  czDic,
  fiBusinessId,
  lvVatNumber,
  plNip,
  roCui,
  siTaxNumber,
  skIcDph,
} from '../../../src/registries/national-ids.js';

/** A deterministic spread of numbers over a range (no randomness: the run is the same every time). */
function sweep(count: number, digits: number, start = 0): string[] {
  const span = 10 ** digits;
  const step = Math.floor((span - start) / count) + 7;
  return Array.from({ length: count }, (_, i) => String((start + i * step) % span).padStart(digits, '0'));
}

const accepted = (result: unknown) => typeof result === 'string';

describe('the identifiers the national registers are asked by', () => {
  it('PL: the NIP is the 10 digits with a valid check digit', () => {
    assert.deepEqual(plNip('7740001454'), { ok: true, id: '7740001454' });
    assert.deepEqual(plNip('PL 774-000-14-54'), { ok: true, id: '7740001454' });
    const wrong = plNip('7740001455');
    assert.equal(wrong.ok, false);
    assert.match(wrong.ok ? '' : wrong.message, /check digit/);
    assert.equal(plNip('774000145').ok, false);
    // A weighted sum of remainder 10 is never issued, whatever the last digit.
    assert.equal(plNip('1000000000').ok, false);
  });

  it('CZ: 8 digits carry the IČO check digit; 9 and 10 digits are sent as they are', () => {
    assert.deepEqual(czDic('27082440'), { ok: true, id: '27082440' });
    assert.deepEqual(czDic('CZ27082440'), { ok: true, id: '27082440' });
    assert.equal(czDic('27082441').ok, false);
    assert.deepEqual(czDic('699001234'), { ok: true, id: '699001234' });
    assert.deepEqual(czDic('8001011234'), { ok: true, id: '8001011234' });
    assert.equal(czDic('1234567').ok, false);
    assert.equal(czDic('12345678901').ok, false);
  });

  it('RO: the CUI is sent as a number; a 13-digit personal code is not looked up', () => {
    assert.deepEqual(roCui('18547290'), { ok: true, id: 18547290 });
    assert.deepEqual(roCui('RO18547290'), { ok: true, id: 18547290 });
    assert.equal(roCui('18547291').ok, false);
    assert.equal(roCui('018547290').ok, false);
    const personal = roCui('1800101221144');
    assert.equal(personal.ok, false);
    assert.match(personal.ok ? '' : personal.message, /personal numeric code/);
  });

  it('FI: the Y-tunnus is the 8 digits with a hyphen before a valid check digit', () => {
    assert.deepEqual(fiBusinessId('01120389'), { ok: true, id: '0112038-9' });
    assert.deepEqual(fiBusinessId('FI 0112038-9'), { ok: true, id: '0112038-9' });
    assert.equal(fiBusinessId('01120388').ok, false);
    assert.equal(fiBusinessId('0112038').ok, false);
  });

  it('accepts exactly the numbers the offline check accepts (PL, RO and FI; CZ legal persons)', () => {
    for (const n of sweep(20_000, 10)) assert.equal(plNip(n).ok, accepted(validatePL(n, 'PL')), `PL${n}`);
    for (const n of sweep(20_000, 8))
      assert.equal(fiBusinessId(n).ok, accepted(validateFI(n, 'FI')), `FI${n}`);
    for (const n of sweep(20_000, 8, 10_000_000)) {
      if (n.startsWith('9')) continue; // 8-digit CZ numbers never start with 9: the offline check's rule
      assert.equal(czDic(n).ok, accepted(validateCZ(n, 'CZ')), `CZ${n}`);
    }
    for (const n of sweep(20_000, 10, 1_000_000_000)) {
      assert.equal(roCui(n).ok, accepted(validateRO(n, 'RO')), `RO${n}`);
      const short = String(Number(n.slice(0, 6)));
      assert.equal(roCui(short).ok, accepted(validateRO(short, 'RO')), `RO${short}`);
    }
  });

  it('SK: the lists are searched by SK and the 10 digits', () => {
    assert.deepEqual(skIcDph('2020317068'), { ok: true, id: 'SK2020317068' });
    assert.deepEqual(skIcDph('SK 2020317068'), { ok: true, id: 'SK2020317068' });
    assert.equal(skIcDph('0020317068').ok, false);
    assert.equal(skIcDph('202031706').ok, false);
  });

  it('SI: the 8 digits of the tax number with a valid check digit', () => {
    assert.deepEqual(siTaxNumber('10000658'), { ok: true, id: '10000658' });
    assert.deepEqual(siTaxNumber('SI10489568'), { ok: true, id: '10489568' });
    assert.equal(siTaxNumber('10000659').ok, false);
    assert.equal(siTaxNumber('01000658').ok, false);
    for (const n of sweep(20_000, 8))
      assert.equal(siTaxNumber(n).ok, accepted(validateSI(n, 'SI')), `SI${n}`);
  });

  it('LV: LV and the 11 digits, as the file writes them', () => {
    assert.deepEqual(lvVatNumber('40003032949'), { ok: true, id: 'LV40003032949' });
    assert.deepEqual(lvVatNumber('LV40003032949'), { ok: true, id: 'LV40003032949' });
    assert.equal(lvVatNumber('4000303294').ok, false);
  });
});
