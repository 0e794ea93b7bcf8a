import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLiveAnswers } from '../../src/modules/validation/live.js';
import { parseVatNumber } from '../../src/modules/vat-numbers/index.js';
import { createCoalescer } from '../../src/registries/resilience.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';

function vat(text: string) {
  const parsed = parseVatNumber(text);
  assert.ok(parsed.ok, `${text} parses`);
  return parsed;
}

/** Lets every pending promise step run (the callers reach the shared call). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('coalesced calls and callers that leave', () => {
  it('the shared task is cancelled only when every caller with a signal has left', async () => {
    const coalescer = createCoalescer();
    let taskSignal: AbortSignal | null = null;
    let finish: (value: string) => void = () => {};
    const task = (signal: AbortSignal) => {
      taskSignal = signal;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    };
    const a = new AbortController();
    const b = new AbortController();
    const first = coalescer.run('k', task, a.signal);
    const second = coalescer.run('k', task, b.signal);
    a.abort(new Error('a left'));
    await assert.rejects(first, /a left/);
    assert.equal((taskSignal as AbortSignal | null)?.aborted, false, 'b still waits');
    b.abort(new Error('b left'));
    await assert.rejects(second, /b left/);
    assert.equal((taskSignal as AbortSignal | null)?.aborted, true, 'nobody waits: cancelled');
    finish('late');
    // A later caller starts afresh rather than joining the cancelled call.
    const third = coalescer.run('k', async () => 'fresh');
    assert.equal(await third, 'fresh');
  });

  it('a caller without a signal keeps the shared call alive', async () => {
    const coalescer = createCoalescer();
    let taskSignal: AbortSignal | null = null;
    let finish: (value: string) => void = () => {};
    const task = (signal: AbortSignal) => {
      taskSignal = signal;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    };
    const a = new AbortController();
    const leaving = coalescer.run('k', task, a.signal);
    const background = coalescer.run('k', task);
    a.abort(new Error('gone'));
    await assert.rejects(leaving, /gone/);
    assert.equal((taskSignal as AbortSignal | null)?.aborted, false);
    finish('answer');
    assert.equal(await background, 'answer');
  });

  it('live answers: the registry call stops when its only caller leaves, not while another waits', async () => {
    const fake = createFakeRegistry(['DE']);
    const live = createLiveAnswers({
      clientFor: (prefix) => fake.ports.clientForPrefix(prefix),
      repository: { find: async () => undefined },
      clock: systemClock,
      cache: { validTtlSeconds: 60, invalidTtlSeconds: 60, degradedWindowSeconds: 60 },
      concurrencyPerCountry: 1,
      deadlineMs: 0,
      backoffBaseMs: 1,
      breaker: { failureThreshold: 5, openMs: 1_000 },
    });
    fake.hold();
    const ask = (signal?: AbortSignal) =>
      live.answer({
        vat: vat('DE136695976'),
        requester: null,
        useCache: false,
        clientWaiting: true,
        ...(signal ? { signal } : {}),
      });
    const a = new AbortController();
    const b = new AbortController();
    const first = ask(a.signal);
    const second = ask(b.signal);
    await settle();
    assert.equal(fake.calls.length, 1, 'one shared call');
    a.abort(new Error('client gone'));
    const left = await first;
    assert.equal(left.kind, 'unavailable');
    await settle();
    assert.deepEqual(fake.aborted, [], 'the other caller still waits: the call goes on');
    fake.releaseAll();
    const answered = await second;
    assert.equal(answered.kind, 'answer');

    fake.hold();
    const c = new AbortController();
    const alone = ask(c.signal);
    await settle();
    c.abort(new Error('client gone'));
    assert.equal((await alone).kind, 'unavailable');
    await settle();
    assert.deepEqual(fake.aborted, ['DE136695976'], 'nobody waits: the call is aborted');
  });
});

describe('registry bounds and the server timeouts', () => {
  it('refuses an idle timeout shorter than the registry work it must wait for, naming the settings', () => {
    assert.throws(
      () =>
        loadConfig({
          OPENVAT_IDLE_TIMEOUT_MS: '5000',
          OPENVAT_REGISTRY_TIMEOUT_MS: '4000',
          OPENVAT_REGISTRY_PERMIT_WAIT_MS: '1000',
          OPENVAT_REGISTRY_DEADLINE_MS: '0',
          OPENVAT_NATIONAL_FALLBACKS: 'none',
        }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /OPENVAT_IDLE_TIMEOUT_MS \(5000\)/.test(error.message) &&
        /OPENVAT_REGISTRY_PERMIT_WAIT_MS \(1000\)/.test(error.message) &&
        /OPENVAT_REGISTRY_DEADLINE_MS \(0\)/.test(error.message) &&
        /OPENVAT_REGISTRY_TIMEOUT_MS \(4000\)/.test(error.message) &&
        /= 7000/.test(error.message),
    );
    assert.throws(() => loadConfig({ OPENVAT_REGISTRY_DEADLINE_MS: '600000' }), /OPENVAT_IDLE_TIMEOUT_MS/);
  });

  it('counts the national register asked after VIES failed in the registry work', () => {
    const settings = {
      OPENVAT_IDLE_TIMEOUT_MS: '9000',
      OPENVAT_REGISTRY_TIMEOUT_MS: '4000',
      OPENVAT_REGISTRY_PERMIT_WAIT_MS: '1000',
      OPENVAT_REGISTRY_DEADLINE_MS: '0',
      OPENVAT_NATIONAL_TIMEOUT_MS: '3000',
    };
    assert.throws(
      () => loadConfig(settings),
      (error: unknown) =>
        error instanceof ConfigError &&
        /OPENVAT_NATIONAL_TIMEOUT_MS \(3000\)/.test(error.message) &&
        /= 10000/.test(error.message),
    );
    assert.doesNotThrow(() => loadConfig({ ...settings, OPENVAT_NATIONAL_FALLBACKS: 'none' }));
  });

  it('accepts the defaults, a matching idle timeout, and no idle timeout at all', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.registries.permitWaitMs, 5_000);
    assert.ok(defaults.connections.idleTimeoutMs >= 8_000 + 10_000 + 2_000);
    assert.doesNotThrow(() =>
      loadConfig({
        OPENVAT_IDLE_TIMEOUT_MS: '7000',
        OPENVAT_REGISTRY_TIMEOUT_MS: '4000',
        OPENVAT_REGISTRY_PERMIT_WAIT_MS: '1000',
        OPENVAT_REGISTRY_DEADLINE_MS: '0',
        OPENVAT_NATIONAL_FALLBACKS: 'none',
      }),
    );
    assert.doesNotThrow(() =>
      loadConfig({ OPENVAT_IDLE_TIMEOUT_MS: '0', OPENVAT_REGISTRY_DEADLINE_MS: '600000' }),
    );
  });
});
