import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseVatNumber } from '../../../src/modules/vat-numbers/index.js';

function normalised(input: string): string {
  const r = parseVatNumber(input);
  assert.ok(r.ok, `${JSON.stringify(input)}: ${r.ok ? '' : r.message}`);
  return r.normalised;
}

describe('vat-numbers: written forms', () => {
  it('case, separators and surrounding punctuation', () => {
    const forms = [
      'DE136308783',
      'de136308783',
      'De 136 308 783',
      'DE-136-308-783',
      'DE.136.308.783',
      'DE/136/308/783',
      'DE 136,308,783',
      'DE_136_308_783',
      '  DE136308783  ',
      '\tDE136308783\n',
      ':DE136308783',
      'DE: 136308783',
      '(DE136308783)',
      '[DE 136308783]',
      '{DE136308783}',
      '"DE136308783"',
      "'DE136308783'",
      'DE;136308783',
    ];
    for (const f of forms) assert.equal(normalised(f), 'DE136308783', f);
  });

  it('Unicode spaces, dashes and full-width characters', () => {
    const forms = [
      'DE\u00a0136\u00a0308\u00a0783', // no-break space
      'DE\u202f136\u202f308\u202f783', // narrow no-break space
      'DE\u2009136\u2009308\u2009783', // thin space
      'DE\u200b136308783', // zero-width space
      '\ufeffDE136308783', // byte order mark
      'DE\u3000136308783', // ideographic space
      'DE\u2013136\u2013308\u2013783', // en dash
      'DE\u2011136308783', // non-breaking hyphen
      'DE\u2212136308783', // minus sign
      '\uff24\uff25\uff11\uff13\uff16\uff13\uff10\uff18\uff17\uff18\uff13', // full-width
      '\uff44\uff45136308783',
    ];
    for (const f of forms) assert.equal(normalised(f), 'DE136308783', JSON.stringify(f));
  });

  it('GR and EL for Greece', () => {
    const r = parseVatNumber('GR 094501040');
    assert.ok(r.ok);
    assert.equal(r.country, 'EL');
    assert.equal(r.isoCountry, 'GR');
    assert.equal(r.normalised, 'EL094501040');
    assert.equal(normalised('gr094501040'), 'EL094501040');
    assert.equal(normalised('EL 094 501 040'), 'EL094501040');
  });

  it('Swiss UID with and without the VAT suffix', () => {
    const forms = [
      'CHE-116.046.681 MWST',
      'CHE-116.046.681 TVA',
      'CHE-116.046.681 IVA',
      'CHE-116.046.681 TPV',
      'CHE-116.046.681 mwst',
      'CHE-116.046.681',
      'CHE116046681',
      'CHE116046681MWST',
      'che 116 046 681 mwst',
      'CH 116 046 681',
      'CHE\u2011116.046.681\u00a0MWST',
    ];
    for (const f of forms) {
      const r = parseVatNumber(f);
      assert.ok(r.ok, f);
      assert.equal(r.normalised, 'CHE116046681', f);
      assert.equal(r.national, '116046681');
      assert.equal(r.country, 'CH');
      assert.equal(r.isoCountry, 'CH');
    }
  });

  it('Norwegian numbers with and without MVA', () => {
    for (const f of [
      'NO 965 920 358 MVA',
      'NO965920358MVA',
      'no 965920358 mva',
      'NO965920358',
      'NO 965.920.358',
    ]) {
      const r = parseVatNumber(f);
      assert.ok(r.ok, f);
      assert.equal(r.normalised, 'NO965920358');
      assert.equal(r.national, '965920358');
    }
  });

  it('Northern Ireland and the United Kingdom', () => {
    const xi = parseVatNumber('XI 980 7806 84');
    assert.ok(xi.ok);
    assert.equal(xi.country, 'XI');
    assert.equal(xi.isoCountry, 'XI');
    assert.equal(xi.normalised, 'XI980780684');
    assert.equal(normalised('UK 980 7806 84'), 'GB980780684');
    assert.equal(normalised('GB 242 3380 87 388'), 'GB242338087388');
    assert.equal(normalised('gb gd 001'), 'GBGD001');
    assert.equal(normalised('GB GD499'), 'GBGD499');
    assert.equal(normalised('GBHA500'), 'GBHA500');
    assert.equal(normalised('XIHA999'), 'XIHA999');
    const gd = parseVatNumber('GBGD123');
    assert.ok(gd.ok);
    assert.equal(gd.national, 'GD123');
  });

  it('national forms that get completed', () => {
    assert.equal(normalised('AT 13585627'), 'ATU13585627');
    assert.equal(normalised('BE 428.759.497'), 'BE0428759497');
    assert.equal(normalised('EL 94051189'), 'EL094051189');
    assert.equal(normalised('NL 4495445 B01'), 'NL004495445B01');
  });
});
