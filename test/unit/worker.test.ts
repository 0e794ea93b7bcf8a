import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorker, type Timers } from '../../src/jobs/worker.js';

/** Timers that run only when told, remembering each delay asked for. */
function manualTimers() {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  const asked: number[] = [];
  let next = 0;
  const timers: Timers = {
    setTimeout(callback, ms) {
      asked.push(ms);
      const id = next++;
      pending.set(id, { callback, ms });
      return id;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
  };
  return {
    timers,
    asked,
    pendingDelays: () => [...pending.values()].map((p) => p.ms),
    /** Runs the due timers, as the event loop would. */
    async fire() {
      const due = [...pending.entries()];
      pending.clear();
      for (const [, { callback }] of due) callback();
      await new Promise((r) => setImmediate(r));
    },
  };
}

async function worker(refillDelayMs: number | undefined) {
  const clock = manualTimers();
  const queue = [1, 2, 3, 4, 5, 6];
  const finish: Array<() => void> = [];
  const claims: number[] = [];
  const w = createWorker<number>({
    name: 'test',
    claim: async (limit) => {
      const items = queue.splice(0, Math.min(limit, 3));
      claims.push(items.length);
      return items;
    },
    handle: () => new Promise<void>((resolve) => finish.push(resolve)),
    concurrency: 3,
    idleDelayMs: 1_000,
    ...(refillDelayMs === undefined ? {} : { refillDelayMs }),
    onError: (error) => assert.fail(String(error)),
    timers: clock.timers,
  });
  return { w, clock, finish, claims };
}

describe('worker refill', () => {
  it('claims again as soon as an item finishes by default', async () => {
    const { w, clock, finish, claims } = await worker(undefined);
    w.start();
    await clock.fire();
    assert.deepEqual(claims, [3]);
    finish.shift()?.();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(clock.pendingDelays(), [0]);
    for (const done of finish.splice(0)) done();
    await w.stop();
  });

  it('waits refillDelayMs after a finished item, so one claim refills what several freed', async () => {
    const { w, clock, finish, claims } = await worker(20);
    w.start();
    await clock.fire();
    assert.deepEqual(claims, [3], 'the first poll claims at once');
    finish.shift()?.();
    finish.shift()?.();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(clock.pendingDelays(), [20], 'one refill, 20 ms after the first finished item');
    await clock.fire();
    assert.deepEqual(claims, [3, 2], 'the refill claims both freed slots at once');
    for (const done of finish.splice(0)) done();
    await w.stop();
  });
});
