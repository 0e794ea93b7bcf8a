import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createManualClock, systemClock } from '../../src/lib/clock.js';
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
      repository: { find: async () => undefined },
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

describe('live answers: exceptions and aborts resolve the breaker', () => {
  const options = (client: RegistryClient, clock = createManualClock('2026-11-23T10:00:00Z')) => ({
    clientFor: () => client,
    repository: { find: async () => undefined },
    clock,
    cache: { validTtlSeconds: 60, invalidTtlSeconds: 60, degradedWindowSeconds: 60 },
    concurrencyPerCountry: 2,
    deadlineMs: 0,
    backoffBaseMs: 1,
    breaker: { failureThreshold: 2, openMs: 1_000 },
  });
  const query = (signal?: AbortSignal, number = 'DE136695976') => ({
    vat: vat(number),
    requester: null,
    useCache: false,
    ...(signal ? { signal } : {}),
  });

  it('a client that throws gives unavailable (never an exception, never invalid) and counts as a failure', async () => {
    let calls = 0;
    const client: RegistryClient = {
      source: 'vies',
      countries: ['DE'],
      lookup: async () => {
        calls += 1;
        throw new TypeError('socket exploded at 10.0.0.1');
      },
    };
    const live = createLiveAnswers(options(client));
    const first = await live.answer(query());
    assert.equal(first.kind, 'unavailable');
    assert.ok(first.kind === 'unavailable' && !first.message.includes('10.0.0.1'), 'no internal detail');
    await live.answer(query());
    assert.equal(calls, 2);
    assert.equal((await live.answer(query())).kind, 'unavailable');
    assert.equal(calls, 2, 'two exceptions opened the breaker');
  });

  it('a half-open trial cut short by its caller hands the trial back', async () => {
    const clock = createManualClock('2026-11-23T10:00:00Z');
    const controller = new AbortController();
    let calls = 0;
    const client: RegistryClient = {
      source: 'vies',
      countries: ['DE'],
      lookup: async (request) => {
        calls += 1;
        if (calls === 1) {
          // The trial hangs until its caller gives up.
          await new Promise((resolve) => request.signal?.addEventListener('abort', resolve, { once: true }));
          return {
            kind: 'unavailable',
            source: 'vies',
            reason: 'timeout',
            retryable: true,
            message: 'aborted',
          };
        }
        return {
          kind: 'answer',
          source: 'vies',
          valid: true,
          name: null,
          address: null,
          consultationNumber: null,
          checkedAt: new Date(),
        };
      },
    };
    const live = createLiveAnswers(options(client, clock));
    await live.breaker.open('vies:DE', 1_000);
    clock.advance(1_000);
    const trial = live.answer(query(controller.signal));
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(calls, 1, 'the trial is running');
    const other = await live.answer(query(undefined, 'DE129273398'));
    assert.equal(other.kind, 'unavailable', 'other numbers are refused meanwhile');
    assert.equal(calls, 1);
    controller.abort();
    assert.equal((await trial).kind, 'unavailable');
    const next = await live.answer(query());
    assert.equal(next.kind, 'answer', 'the next call is a trial at once, and it closes the breaker');
    assert.equal(calls, 2);
  });
});

describe('live answers: memory holds only committed answers', () => {
  it('a fresh answer is served as stored only after it was remembered (after its commit)', async () => {
    let calls = 0;
    const client: RegistryClient = {
      source: 'vies',
      countries: ['DE'],
      async lookup(): Promise<RegistryResult> {
        calls += 1;
        return {
          kind: 'answer',
          source: 'vies',
          valid: true,
          name: 'ACME',
          address: null,
          consultationNumber: null,
          checkedAt: new Date('2026-11-23T10:00:00Z'),
        };
      },
    };
    const live = createLiveAnswers({
      clientFor: () => client,
      // Nothing reaches the database in this test: the answer exists only if it is remembered.
      repository: { find: async () => undefined },
      clock: createManualClock('2026-11-23T10:00:05Z'),
      cache: { validTtlSeconds: 60, invalidTtlSeconds: 60, degradedWindowSeconds: 60 },
      concurrencyPerCountry: 2,
      deadlineMs: 0,
      backoffBaseMs: 1,
      breaker: { failureThreshold: 5, openMs: 1_000 },
    });
    const ask = () => live.answer({ vat: vat('DE136695976'), requester: null, useCache: true });
    const first = await ask();
    assert.equal(first.kind, 'answer');
    assert.ok(first.kind === 'answer' && first.fresh, 'a live answer carries the row to store');
    assert.equal((await ask()).kind, 'answer');
    assert.equal(calls, 2, 'an answer that was never committed is not served from memory');
    live.remember([first.fresh]);
    const third = await ask();
    assert.ok(third.kind === 'answer' && third.sourceStatus === 'cached');
    assert.equal(calls, 2, 'once remembered, it is served from memory');
  });
});
