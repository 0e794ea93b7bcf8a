import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compareNames,
  fold,
  LEGAL_FORMS,
  matchIdentity,
  NAME_MATCH_THRESHOLD,
  normaliseName,
  normalisePostcode,
  normaliseStreet,
  parseAddress,
  splitLegalForm,
  verdictsFromTraderMatch,
} from '../../../src/modules/identity-match/index.js';

describe('fold', () => {
  it('writes German, Nordic and Polish letters the way their registries spell them in ASCII', () => {
    assert.equal(fold('Straße Grüß Äpfel Öl'), 'strasse gruess aepfel oel');
    assert.equal(fold('Møller Åse Ærø'), 'moeller aase aeroe');
    assert.equal(fold('Łódź Spółka'), 'lodz spolka');
    assert.equal(fold('Ştefan Ţară Čapek Ő'), 'stefan tara capek o');
  });

  it('transliterates Greek by ELOT 743 and Bulgarian by the Streamlined System', () => {
    assert.equal(fold('ΧΑΛΚΙΔΑ Ξάνθη Θεσσαλονίκη ΨΥΧΙΚΟ'), 'chalkida xanthi thessaloniki psychiko');
    assert.equal(fold('ΜΑΡΟΥΣΙ Ευρώπη ΝΑΥΤΙΛΙΑΚΗ Ευαγγελισμός'), 'marousi evropi naftiliaki evangelismos');
    assert.equal(fold('ЩИТ ЪГЪЛ ХАСКОВО София България'), 'shtit agal haskovo sofia balgaria');
  });

  it('turns punctuation, full-width letters and ligatures into plain words', () => {
    assert.equal(fold("  BANCA D'ITALIA, S.p.A. — Ｒｏｍａ ﬁliale "), 'banca d italia s p a roma filiale');
    assert.equal(fold('---'), '');
  });
});

describe('legal forms', () => {
  it('are data: every entry has a canonical token and names, and no name is given to two forms', () => {
    const owner = new Map<string, string>();
    for (const { form, names } of LEGAL_FORMS) {
      assert.ok(form !== '' && names.length > 0, form);
      for (const name of [form, ...names]) {
        const key = fold(name).replace(/ /g, '');
        assert.ok(!owner.has(key) || owner.get(key) === form, `${name}: ${owner.get(key)} and ${form}`);
        owner.set(key, form);
      }
    }
  });

  it('are read at the end or at the start of a name, never taking the whole name', () => {
    assert.deepEqual(splitLegalForm(fold('Acme Holding GmbH & Co. KG').split(' ')), {
      words: ['acme', 'holding'],
      form: 'gmbh & co kg',
    });
    assert.deepEqual(splitLegalForm(fold('SA DANONE').split(' ')), { words: ['danone'], form: 'sa' });
    assert.deepEqual(splitLegalForm(fold('AB Volvo').split(' ')), { words: ['volvo'], form: 'ab' });
    assert.deepEqual(splitLegalForm(['ag']), { words: ['ag'], form: null });
    // A single letter is not the Greek Α.Ε. spelled loosely.
    assert.deepEqual(splitLegalForm(fold('Plan A').split(' ')), { words: ['plan', 'a'], form: null });
  });

  it('take the form written out in full, with or without its accents', () => {
    assert.equal(normaliseName('Acme Gesellschaft mit beschrankter Haftung').form, 'gmbh');
    assert.equal(normaliseName('Przykład Spolka z ograniczona odpowiedzialnoscia').form, 'sp z oo');
    assert.equal(normaliseName('ЕТ Иван Петров').form, 'et');
  });
});

describe('names', () => {
  it('ignore word order, joining words and the article', () => {
    assert.equal(compareNames('Smith & Jones Ltd', 'JONES AND SMITH LIMITED').match, true);
    assert.equal(compareNames('The Coca-Cola Company', 'COCA COLA COMPANY').match, true);
  });

  it('a look-alike keeps its high score but is a mismatch; the verdict needs identical words', () => {
    const lookAlike = compareNames('Schmitt Logistik GmbH', 'Schmidt Logistik GmbH');
    assert.ok(lookAlike.score > NAME_MATCH_THRESHOLD);
    assert.equal(lookAlike.match, false);
  });

  it('a name of nothing but a legal form matches only the same', () => {
    assert.deepEqual(compareNames('GmbH', 'Acme GmbH'), { score: 0, match: false });
  });
});

describe('streets and postcodes', () => {
  it('read house numbers apart from the street name, leading zeros and number words dropped', () => {
    assert.deepEqual(normaliseStreet('Kerkstraat 00010 A'), {
      words: ['kerkstr'],
      typeWords: [false],
      numbers: ['10a'],
    });
    assert.deepEqual(normaliseStreet('ul. Długa nr 5').numbers, ['5']);
    assert.deepEqual(normaliseStreet('ul. Długa nr 5').typeWords, [true, false]);
  });

  it('compare postcodes without spaces, dashes, case or country prefix', () => {
    assert.equal(normalisePostcode(' lv-1050 '), '1050');
    assert.equal(normalisePostcode('D02 X285'), 'D02X285');
    assert.equal(normalisePostcode('VLT 1117'), 'VLT1117');
  });
});

describe('addresses', () => {
  it('read towns written before the postcode, and a postcode on its own line', () => {
    assert.deepEqual(parseAddress('Brīvības iela 1, Rīga, LV-1050', 'LV'), {
      street: 'Brīvības iela 1',
      postcode: 'LV-1050',
      city: 'Rīga',
      streetCandidates: ['Brīvības iela 1'],
    });
    const ni = parseAddress('1 MAIN STREET\nBELFAST\nBT1 1AA', 'XI');
    assert.equal(ni.city, 'BELFAST');
    assert.equal(ni.postcode, 'BT1 1AA');
    assert.equal(ni.street, '1 MAIN STREET');
  });

  it('read a Greek line with its dash before the town', () => {
    const el = parseAddress('ΛΕΩΦ ΣΥΓΓΡΟΥ 340 17673 - ΚΑΛΛΙΘΕΑ', 'EL');
    assert.deepEqual([el.street, el.postcode, el.city], ['ΛΕΩΦ ΣΥΓΓΡΟΥ 340', '17673', 'ΚΑΛΛΙΘΕΑ']);
  });
});

describe('matchIdentity', () => {
  const registered = { name: "BANCA D'ITALIA", address: 'VIA NAZIONALE 91 \n00184 ROMA RM\n', country: 'IT' };

  it('answers only the fields asked, and nothing when none is', () => {
    const match = matchIdentity({ name: "Banca d'Italia", city: 'Roma', street: ' ' }, registered);
    assert.deepEqual(Object.keys(match ?? {}).sort(), ['city', 'name', 'overall']);
    assert.equal(matchIdentity({ name: '', city: null }, registered), null);
  });

  it('reads the whole recorded address: every field matches', () => {
    const match = matchIdentity(
      { name: "Banca d'Italia", street: 'Via Nazionale 91', postcode: '00184', city: 'Roma' },
      registered,
    );
    assert.deepEqual(match?.overall, { result: 'match', score: 1, registry_result: null });
  });

  it('takes a register’s own street, postcode and town before what it reads out of the address', () => {
    const match = matchIdentity(
      { street: 'Marszałkowska 1', postcode: '00-001', city: 'Warszawa' },
      {
        address: 'something else\n99-999 ELSEWHERE',
        street: 'ul. Marszałkowska 1',
        postcode: '00-001',
        city: 'WARSZAWA',
      },
    );
    assert.equal(match?.overall.result, 'match');
  });

  it('is unavailable where the registry gave `---` and no verdict (Germany)', () => {
    const match = matchIdentity(
      { name: 'Acme GmbH', city: 'Berlin' },
      { name: '---', address: '---', country: 'DE' },
      {
        name: 'not_processed',
        city: 'not_processed',
      },
    );
    assert.deepEqual(match, {
      overall: { result: 'unavailable', score: null, registry_result: 'not_processed' },
      name: { result: 'unavailable', score: null, registry_result: 'not_processed' },
      city: { result: 'unavailable', score: null, registry_result: 'not_processed' },
    });
  });

  it("follows the registry's verdict where it gave nothing to compare (Spain)", () => {
    const match = matchIdentity(
      { name: 'Rodrisa Automoviles', postcode: '28430', city: 'Madrid' },
      { name: null, address: null, country: 'ES' },
      verdictsFromTraderMatch({ name: 'VALID', postcode: 'VALID', city: 'INVALID' }),
    );
    assert.deepEqual(match?.name, { result: 'match', score: null, registry_result: 'match' });
    assert.deepEqual(match?.overall, { result: 'mismatch', score: null, registry_result: 'mismatch' });
  });

  it("keeps openvat's own result and the registry's verdict side by side when they differ", () => {
    const match = matchIdentity(
      { name: 'Acme GmbH' },
      { name: 'ACME Gesellschaft mit beschränkter Haftung' },
      {
        name: 'mismatch',
      },
    );
    assert.deepEqual(match?.name, { result: 'match', score: 1, registry_result: 'mismatch' });
    assert.deepEqual(match?.overall, { result: 'match', score: 1, registry_result: 'mismatch' });
  });

  it('overall: a matched name with the address unavailable is a match; an address alone does not replace the name', () => {
    const nameOnly = matchIdentity({ name: 'Acme GmbH', city: 'Berlin' }, { name: 'ACME GMBH' });
    assert.equal(nameOnly?.overall.result, 'match');
    assert.equal(nameOnly?.city?.result, 'unavailable');
    const addressOnly = matchIdentity({ name: 'Acme GmbH', city: 'Berlin' }, { name: null, city: 'BERLIN' });
    assert.equal(addressOnly?.overall.result, 'unavailable');
    const noName = matchIdentity({ city: 'Berlin', postcode: '10115' }, { city: 'BERLIN' });
    assert.equal(noName?.overall.result, 'match');
  });

  it('overall score is the weighted mean of the fields compared', () => {
    const match = matchIdentity(
      { name: 'Acme GmbH', city: 'Frankfurt' },
      { name: 'ACME GMBH', city: 'FRANKFURT AM MAIN' },
    );
    assert.equal(match?.city?.score, 0.6);
    assert.deepEqual(match?.overall, { result: 'mismatch', score: 0.943, registry_result: null });
  });

  it('maps the VIES verdict words and ignores anything else', () => {
    assert.deepEqual(
      verdictsFromTraderMatch({ name: 'VALID', street: 'INVALID', city: 'NOT_PROCESSED', postcode: 'MAYBE' }),
      {
        name: 'match',
        street: 'mismatch',
        city: 'not_processed',
      },
    );
    assert.deepEqual(verdictsFromTraderMatch(undefined), {});
  });
});
