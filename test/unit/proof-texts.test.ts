import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitsWinAnsi } from '../../src/modules/proofs/pdf.js';
import { uuidV7Time } from '../../src/modules/proofs/service.js';
import { chooseLanguage, formatTime, PROOF_TEXTS } from '../../src/modules/proofs/texts.js';

describe('the language of a proof', () => {
  it("follows the requester's country without a preference", () => {
    for (const requester of ['DE136695976', 'ATU12345678', 'CHE116281710', 'LI12345']) {
      assert.equal(chooseLanguage({}, requester), 'de', requester);
    }
    for (const requester of ['FR40303265045', 'NL123456789B01', 'GB123456789', null]) {
      assert.equal(chooseLanguage({}, requester), 'en', String(requester));
    }
  });

  it('takes ?lang= first, then the first Accept-Language a proof exists in', () => {
    assert.equal(chooseLanguage({ lang: 'en', acceptLanguage: 'de' }, 'DE136695976'), 'en');
    assert.equal(chooseLanguage({ acceptLanguage: 'fr-CH, de;q=0.9, en;q=0.8' }, 'FR40303265045'), 'de');
    assert.equal(chooseLanguage({ acceptLanguage: 'en;q=0.2, de-AT;q=0.7' }, null), 'de');
    assert.equal(chooseLanguage({ acceptLanguage: 'de;q=0, en' }, 'DE136695976'), 'en');
    // `*` and languages without a proof name none: the requester's country decides.
    assert.equal(chooseLanguage({ acceptLanguage: '*' }, 'DE136695976'), 'de');
    assert.equal(chooseLanguage({ acceptLanguage: 'fr, it;q=0.5' }, 'DE136695976'), 'de');
    assert.equal(chooseLanguage({ lang: 'fr' }, 'DE136695976'), 'de');
  });
});

describe('proof text helpers', () => {
  it('tells which text the standard fonts can show (WinAnsi)', () => {
    assert.equal(fitsWinAnsi('Musterstraße 22, Wörgl – „Gesellschaft“ € § ø'), true);
    assert.equal(fitsWinAnsi('Spółka'), false);
    assert.equal(fitsWinAnsi('ΔΟΚΙΜΗ'), false);
    assert.equal(fitsWinAnsi('ООО Ромашка'), false);
    // Every word the proofs print themselves needs no embedded font.
    for (const texts of Object.values(PROOF_TEXTS)) {
      const words = [
        ...Object.values(texts.title),
        texts.subtitle,
        texts.testMode,
        ...Object.values(texts.sections),
        ...Object.values(texts.fields),
        ...Object.values(texts.grid),
        ...Object.values(texts.match),
        ...Object.values(texts.authorities),
        ...texts.steps.confirmation('id', 1, 2),
        ...texts.steps.confirmation('id', 1, null),
        texts.domesticScope,
        ...texts.steps.validation('id', 'then', { consultation: true, register: true }),
      ];
      for (const word of words) assert.ok(fitsWinAnsi(word), word);
    }
  });

  it('reads the time of a UUID v7 and formats UTC times', () => {
    assert.equal(uuidV7Time('01a22052-9657-7190-9e43-53880986979b'), '2026-11-28T04:03:33.079Z');
    assert.equal(uuidV7Time('0190b2a4-1c2d-4e3f-8a9b-0c1d2e3f4a5b'), null);
    assert.equal(formatTime('2026-11-28T04:03:33.079Z', '—'), '2026-11-28 04:03:33.079 UTC');
    assert.equal(
      formatTime('2025-09-22T18:33:04.392335063+02:00', '—'),
      '2025-09-22T18:33:04.392335063+02:00',
    );
    assert.equal(formatTime(null, '—'), '—');
  });
});
