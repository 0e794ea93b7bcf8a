import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EORI_NUMBERS_PER_CALL, planEoriBatch } from '../../../src/modules/eori/index.js';
import { eosRefusal } from '../../../src/registries/eos.js';
import { hmrcEoriRefusal } from '../../../src/registries/hmrc-eori.js';

describe('EORI batches', () => {
  it('reads each input alone: a malformed one fails alone and is in no upstream call', () => {
    const plan = planEoriBatch(['DE123456', 'GB123', 'XI123456789000', 'nonsense', 'GB123456789000']);
    assert.deepEqual(
      plan.items.map((item) => item.parsed.ok),
      [true, false, true, false, true],
    );
    assert.deepEqual(plan.calls, [
      { service: 'eos', eoris: ['DE123456', 'XI123456789000'] },
      { service: 'hmrc', eoris: ['GB123456789000'] },
    ]);
    const sent = plan.calls.flatMap((call) => call.eoris);
    assert.ok(!sent.includes('GB123'));
  });

  it('asks each number once, however it was written', () => {
    const plan = planEoriBatch(['de 123456', 'DE123456', 'DE-123-456', 'gb123456789000', 'GB 123456789 000']);
    assert.deepEqual(plan.calls, [
      { service: 'eos', eoris: ['DE123456'] },
      { service: 'hmrc', eoris: ['GB123456789000'] },
    ]);
    assert.equal(plan.items.length, 5);
  });

  it('cuts each service into calls of at most 10 numbers', () => {
    assert.equal(EORI_NUMBERS_PER_CALL, 10);
    const eu = Array.from({ length: 23 }, (_, i) => `FR${1000 + i}`);
    const gb = Array.from({ length: 11 }, (_, i) => `GB${String(123456789000 + i)}`);
    const plan = planEoriBatch([...gb, ...eu]);
    assert.deepEqual(
      plan.calls.map((call) => [call.service, call.eoris.length]),
      [
        ['eos', 10],
        ['eos', 10],
        ['eos', 3],
        ['hmrc', 10],
        ['hmrc', 1],
      ],
    );
    assert.deepEqual(
      plan.calls.filter((call) => call.service === 'eos').flatMap((call) => call.eoris),
      eu,
    );
  });

  it('an empty batch plans no call', () => {
    assert.deepEqual(planEoriBatch([]), { items: [], calls: [] });
  });

  it('the clients send every number the rules accept for their service, and refuse what the rules refuse', () => {
    const accepted = [
      'DE123456789012345',
      'FR1',
      'GR094019245',
      'IE1234567WA',
      'XI123456789000',
      'GB123456789000123',
    ];
    for (const input of accepted) {
      const [call] = planEoriBatch([input]).calls;
      assert.ok(call, input);
      const refusal =
        call.service === 'eos' ? eosRefusal(call.eoris[0] ?? '') : hmrcEoriRefusal(call.eoris[0] ?? '');
      assert.equal(refusal, undefined, `${input}: ${refusal}`);
    }
    for (const eori of ['GB123456789', 'GB12345678900A', 'XI123456789000']) {
      assert.match(hmrcEoriRefusal(eori) ?? '', /not sent to HMRC/, eori);
    }
    for (const eori of ['GB123456789000', 'EL094019245', 'CH123', 'DE1234567890123456', 'DE12+3']) {
      assert.match(eosRefusal(eori) ?? '', /not sent to EOS/, eori);
    }
  });
});
