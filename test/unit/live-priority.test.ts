import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../src/lib/clock.js';
import { createLiveAnswers } from '../../src/modules/validation/live.js';
import { parseVatNumber } from '../../src/modules/vat-numbers/index.js';
import type { RegistryClient, RegistryLookup, RegistryResult } from '../../src/registries/port.js';

function vat(text: string) {
  const parsed = parseVatNumber(text);
  assert.ok(parsed.ok, `${text} parses`);
  return parsed;
}

describe('live answers: background callers wait behind interactive ones', () => {
  it('a background validation takes the registry permit only when no interactive one waits', async () => {
    const asked: string[] = [];
    const pending: Array<() => void> = [];
    const client: RegistryClient = {
      source: 'vies',
      countries: ['DE'],
      lookup(request: RegistryLookup): Promise<RegistryResult> {
        asked.push(request.vat.national);
        return new Promise((resolve) =>
          pending.push(() =>
            resolve({
              kind: 'answer',
              source: 'vies',
              valid: true,
              name: null,
              address: null,
              consultationNumber: null,
              checkedAt: new Date(),
            }),
          ),
        );
      },
    };
    const live = createLiveAnswers({
      clientFor: () => client,
      repository: { find: async () => undefined, upsert: async () => {} },
      clock: systemClock,
      cache: { validTtlSeconds: 60, invalidTtlSeconds: 60, degradedWindowSeconds: 60 },
      concurrencyPerCountry: 1,
      deadlineMs: 1_000,
      backoffBaseMs: 1,
      breaker: { failureThreshold: 5, openMs: 1_000 },
    });
    const ask = (number: string, priority?: 'interactive' | 'background') =>
      live.answer({ vat: vat(number), requester: null, useCache: false, ...(priority ? { priority } : {}) });
    const first = ask('DE136695976');
    const background = ask('DE129273398', 'background');
    const interactive = ask('DE129274202');
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(asked, ['136695976'], 'one permit: one call at a time');
    pending.shift()?.();
    await first;
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(asked, ['136695976', '129274202'], 'the interactive caller, who came later, goes first');
    pending.shift()?.();
    await interactive;
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(asked, ['136695976', '129274202', '129273398']);
    pending.shift()?.();
    assert.equal((await background).kind, 'answer');
  });
});
