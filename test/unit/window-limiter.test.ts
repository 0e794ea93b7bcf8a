import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { createWindowLimiter } from '../../src/lib/window-limiter.js';

describe('window limiter', () => {
  it('allows max requests per key and window, then says how long until the window resets', () => {
    const clock = createManualClock('2026-11-22T10:00:15.000Z');
    const limiter = createWindowLimiter({ max: 3, windowMs: 60_000, clock });
    assert.deepEqual([limiter.take('a'), limiter.take('a'), limiter.take('a')], [0, 0, 0]);
    assert.equal(limiter.take('a'), 45);
    assert.equal(limiter.take('b'), 0, 'another key has its own budget');
    clock.advance(44_500);
    assert.equal(limiter.take('a'), 1, 'never less than one second');
  });

  it('starts a new budget when the window turns', () => {
    const clock = createManualClock('2026-11-22T10:00:59.000Z');
    const limiter = createWindowLimiter({ max: 1, windowMs: 60_000, clock });
    assert.equal(limiter.take('a'), 0);
    assert.equal(limiter.take('a'), 1);
    clock.advance(1_000);
    assert.equal(limiter.take('a'), 0);
    assert.equal(limiter.take('a'), 60);
  });
});
