import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  deriveParticipantIds,
  MAX_PARTICIPANT_VALUE_LENGTH,
  PARTICIPANT_SCHEMES_SOURCE,
  type PeppolIdentifierResult,
  parseParticipantId,
  parsePeppolIdentifier,
  participantScheme,
  participantSchemes,
  vatSchemeTable,
} from '../../../src/modules/peppol/index.js';
import {
  getVatNumberRule,
  parseVatNumber,
  SUPPORTED_PREFIXES,
} from '../../../src/modules/vat-numbers/index.js';
import { VALID } from '../vat-numbers/fixtures.js';

/** The identifiers derived from a VAT number, as `ICD:value`. */
function derived(vatNumber: string, includeRemoved = false): string[] {
  const vat = parseVatNumber(vatNumber);
  assert.ok(vat.ok, vatNumber);
  return deriveParticipantIds(vat, { includeRemoved }).map((p) => p.id);
}

function asParticipant(result: PeppolIdentifierResult) {
  assert.ok(result.ok && result.kind === 'participant', JSON.stringify(result));
  return result.participant;
}

describe('peppol identifiers: the code list the mapping is made from', () => {
  it('is the participant identifier schemes list 9.7, with its states', () => {
    assert.equal(PARTICIPANT_SCHEMES_SOURCE.version, '9.7');
    assert.equal(participantSchemes().length, 105);
    assert.deepEqual(participantScheme('0208'), {
      icd: '0208',
      schemeId: 'BE:EN',
      country: 'BE',
      name: "Numero d'entreprise / ondernemingsnummer / Unternehmensnummer",
      state: 'active',
      deprecatedIn: null,
      removalDate: null,
    });
    assert.equal(participantScheme('9909')?.state, 'deprecated');
    assert.deepEqual(
      [participantScheme('9906')?.state, participantScheme('9906')?.removalDate],
      ['removed', '2023-05-24'],
    );
    assert.equal(participantScheme('1234'), undefined);
  });

  it('every rule of the mapping names a scheme of the code list and shows an example that parses', () => {
    const table = vatSchemeTable();
    assert.ok(table.length >= 40);
    for (const row of table) {
      assert.equal(participantScheme(row.icd)?.schemeId, row.schemeId);
      const parsed = parseParticipantId(row.example);
      assert.ok(parsed.ok, `${row.prefix} ${row.example}: ${parsed.ok ? '' : parsed.message}`);
    }
  });

  it('covers every VAT scheme the code list defines for a country with supported VAT numbers', () => {
    const isoOf = new Map(SUPPORTED_PREFIXES.map((p) => [getVatNumberRule(p).isoCountry, p]));
    const vatSchemes = participantSchemes().filter(
      (s) => s.schemeId.endsWith(':VAT') && s.state !== 'removed' && isoOf.has(s.country),
    );
    assert.ok(vatSchemes.length >= 26, `${vatSchemes.length} VAT schemes`);
    for (const scheme of vatSchemes) {
      const prefix = isoOf.get(scheme.country) as (typeof SUPPORTED_PREFIXES)[number];
      const icds = derived(getVatNumberRule(prefix).example).map((id) => id.slice(0, 4));
      assert.ok(icds.includes(scheme.icd), `${scheme.schemeId} (${scheme.icd}) for ${prefix}`);
    }
    for (const icd of ['9925', '9930', '9957', '9944', '9932', '9927', '9909']) {
      assert.ok(
        vatSchemes.some((s) => s.icd === icd),
        `${icd} is a VAT scheme of the list`,
      );
    }
  });
});

describe('peppol identifiers: derived from a VAT number', () => {
  it('Belgium: the enterprise number under 0208, then the VAT number under 9925', () => {
    assert.deepEqual(derived('BE 0677.424.046'), ['0208:0677424046', '9925:be0677424046']);
    const vat = parseVatNumber('BE0677424046');
    assert.ok(vat.ok);
    const [enterprise] = deriveParticipantIds(vat);
    assert.equal(enterprise?.scheme.schemeId, 'BE:EN');
    assert.match(enterprise?.basis ?? '', /enterprise number/);
  });

  it('the national identifiers inside VAT numbers: DK CVR, NO organisation number, SE organisation number, FR SIREN', () => {
    assert.deepEqual(derived('DK28107773'), ['0184:28107773', '0198:dk28107773']);
    assert.deepEqual(derived('NO965920358MVA'), ['0192:965920358', '9909:no965920358mva']);
    assert.deepEqual(derived('SE556043606401'), ['0007:5560436064']);
    assert.deepEqual(derived('FR40303265045'), ['9957:fr40303265045', '0002:303265045', '0225:303265045']);
  });

  it('the other countries: each VAT scheme with its prefix, and the national schemes that equal the VAT number', () => {
    assert.deepEqual(derived('DE136308783'), ['9930:de136308783', '0246:de136308783']);
    assert.deepEqual(derived('NL002455799B11'), ['9944:nl002455799b11']);
    assert.deepEqual(derived('ATU13585627'), ['9914:atu13585627']);
    assert.deepEqual(derived('IT00743110157'), ['0211:it00743110157']);
    assert.deepEqual(derived('EL094501040'), ['9933:el094501040']);
    assert.deepEqual(derived('GB980780684'), ['9932:gb980780684']);
    assert.deepEqual(derived('XI980780684'), ['9932:gb980780684']);
    assert.deepEqual(derived('CHE-116.281.710 MWST'), ['9927:che116281710', '0183:che116281710']);
    assert.deepEqual(derived('FI20774740'), ['0216:003720774740']);
    assert.deepEqual(derived('SK2022749619'), ['9950:sk2022749619', '0245:2022749619']);
    assert.deepEqual(derived('LV40003521600'), ['9939:lv40003521600', '0218:40003521600']);
  });

  it('a Latvian VAT number of a person holds no registration number', () => {
    // A personal code (python-stdnum stdnum/lv/pvn.py's example): a birth date, not a company.
    assert.deepEqual(derived('LV16117519997'), ['9939:lv16117519997']);
  });

  it('Italy: 0211 (IT:IVA), the scheme that replaced the removed 9906', () => {
    assert.equal(participantScheme('0211')?.schemeId, 'IT:IVA');
    assert.deepEqual(derived('IT00743110157'), ['0211:it00743110157']);
  });

  it('schemes the code list removed are derived only when asked for', () => {
    assert.deepEqual(derived('IT00743110157', true), ['0211:it00743110157', '9906:it00743110157']);
    assert.deepEqual(derived('SE556043606401', true), ['0007:5560436064', '9955:se556043606401']);
    assert.deepEqual(derived('BE0677424046', true), [
      '0208:0677424046',
      '9925:be0677424046',
      '9956:0677424046',
    ]);
    const vat = parseVatNumber('IT00743110157');
    assert.ok(vat.ok);
    const removed = deriveParticipantIds(vat, { includeRemoved: true }).find((p) => p.icd === '9906');
    assert.equal(removed?.scheme.state, 'removed');
  });

  it('every published VAT number of every country derives identifiers that parse back to themselves', () => {
    for (const prefix of SUPPORTED_PREFIXES) {
      for (const input of VALID[prefix]) {
        const vat = parseVatNumber(input);
        assert.ok(vat.ok, input);
        const ids = deriveParticipantIds(vat, { includeRemoved: true });
        assert.ok(ids.length >= 1, `${input} derives an identifier`);
        for (const id of ids) {
          const again = parseParticipantId(`iso6523-actorid-upis::${id.id.toUpperCase()}`);
          assert.ok(again.ok, `${input} → ${id.id}: ${again.ok ? '' : again.message}`);
          assert.equal(again.id, id.id);
        }
      }
    }
  });
});

describe('peppol identifiers: parsing a participant identifier', () => {
  it('reads ICD:value and iso6523-actorid-upis::ICD:value, case-insensitively', () => {
    for (const input of [
      '0208:0677424046',
      'iso6523-actorid-upis::0208:0677424046',
      '  ISO6523-ACTORID-UPIS::0208:0677424046 ',
    ]) {
      const p = asParticipant(parsePeppolIdentifier(input));
      assert.equal(p.id, '0208:0677424046');
      assert.equal(p.icd, '0208');
      assert.equal(p.scheme.schemeId, 'BE:EN');
    }
    assert.equal(asParticipant(parsePeppolIdentifier('9925:BE0677424046')).id, '9925:be0677424046');
    assert.equal(asParticipant(parsePeppolIdentifier('0088:5798000000001')).value, '5798000000001');
  });

  it('refuses another identifier scheme, a missing ICD, an ICD outside the code list', () => {
    const cases: [string, string, RegExp][] = [
      ['busdox-docid-qns::0208:0677424046', 'scheme', /iso6523-actorid-upis/],
      ['iso6523-actorid-upis::0208', 'syntax', /4-digit ICD/],
      ['208:0677424046', 'syntax', /4-digit ICD/],
      ['9999:0677424046', 'icd', /9999 is not/],
    ];
    for (const [input, reason, message] of cases) {
      const result = parseParticipantId(input);
      assert.ok(!result.ok, input);
      assert.equal(result.reason, reason, input);
      assert.match(result.message, message, input);
    }
  });

  it('takes values of 1 to 130 characters of letters, digits and - . _ ~ (Policy 4.4)', () => {
    const longest = `0088:${'a'.repeat(MAX_PARTICIPANT_VALUE_LENGTH)}`;
    assert.ok(parseParticipantId(longest).ok);
    assert.ok(parseParticipantId('0088:a-b.c_d~e').ok);
    for (const bad of [`${longest}a`, '0088:', '0088:a b', '0088:a/b', '0088:é', '0088:a:b']) {
      const result = parseParticipantId(bad);
      assert.ok(!result.ok, bad);
      assert.equal(result.reason, 'value', bad);
    }
  });

  it('holds the value of a mapped scheme to its form: 0208 without BE, 9925 with it', () => {
    const withPrefix = parseParticipantId('0208:BE0677424046');
    assert.ok(!withPrefix.ok);
    assert.match(withPrefix.message, /0208 \(BE:EN\) values are written like 0208:\d{10}/);
    const withoutPrefix = parseParticipantId('9925:0677424046');
    assert.ok(!withoutPrefix.ok);
    assert.match(withoutPrefix.message, /9925:BE\d{10}/);
    assert.ok(
      !parseParticipantId('0007:556043606401').ok,
      'the SE VAT digits are not an organisation number',
    );
    assert.ok(parseParticipantId('0002:30326504500013').ok, 'a SIRET is a SIRENE value too');
    assert.ok(parseParticipantId('0216:003720774740TST01').ok, 'an OVT code may have a suffix');
  });

  it('a VAT number goes through the vat-numbers parser, check digits included', () => {
    const wrong = parsePeppolIdentifier('BE0677424047');
    assert.ok(!wrong.ok && wrong.kind === 'vat_number');
    assert.equal(wrong.failure.reason, 'checksum');
    const unsupported = parsePeppolIdentifier('US123456789');
    assert.ok(!unsupported.ok && unsupported.kind === 'vat_number');
    assert.equal(unsupported.failure.reason, 'unsupported_country');
    const good = parsePeppolIdentifier('be0677424046');
    assert.ok(good.ok && good.kind === 'vat_number');
    assert.equal(good.vat.normalised, 'BE0677424046');
    assert.deepEqual(
      good.participants.map((p) => p.id),
      ['0208:0677424046', '9925:be0677424046'],
    );
  });
});
