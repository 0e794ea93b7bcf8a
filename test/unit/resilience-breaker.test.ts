import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createManualClock } from '../../src/lib/clock.js';
import { outcomeOf } from '../../src/modules/validation/registry-outcomes.js';
import type { RegistryResult, UnavailableReason } from '../../src/registries/port.js';
import {
  type BreakerStore,
  createLocalBreaker,
  createRedisBreaker,
  type RedisLike,
} from '../../src/registries/resilience.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();
const OPTIONS = { failureThreshold: 3, openMs: 30_000, trialMs: 10_000 };

let redis: Redis | undefined;
after(() => redis?.disconnect());

type Make = (now: () => number) => BreakerStore;
const stores: Array<{ name: string; make: Make; skip: string | false }> = [
  { name: 'in this process', make: (now) => createLocalBreaker({ ...OPTIONS, now }), skip: false },
  {
    name: 'shared through Redis',
    skip,
    make: (now) => {
      redis ??= new Redis(process.env.TEST_REDIS_URL as string);
      return createRedisBreaker({
        ...OPTIONS,
        now,
        redis: redis as unknown as RedisLike,
        prefix: redisPrefix('breaker'),
        onDegraded: (error) => {
          throw error;
        },
      });
    },
  },
];

for (const store of stores) {
  describe(`circuit breaker state machine, ${store.name}`, { skip: store.skip }, () => {
    const setup = () => {
      const clock = createManualClock('2026-11-23T10:00:00.000Z');
      return { clock, breaker: store.make(() => clock.millis()) };
    };
    const phase = async (b: BreakerStore, key = 'vies:DE') => (await b.snapshot()).find((v) => v.key === key);
    const open = async (b: BreakerStore) => {
      for (let i = 0; i < OPTIONS.failureThreshold; i++) {
        assert.equal((await b.check('vies:DE')).allowed, true);
        await b.report('vies:DE', 'failure', null);
      }
    };

    it('closed: failures below the threshold keep it closed, and a success resets the count', async () => {
      const { breaker } = setup();
      await breaker.report('vies:DE', 'failure', null);
      await breaker.report('vies:DE', 'failure', null);
      await breaker.report('vies:DE', 'success', null);
      await breaker.report('vies:DE', 'failure', null);
      await breaker.report('vies:DE', 'failure', null);
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: true, trial: null });
      assert.equal((await phase(breaker))?.phase, 'closed');
    });

    it('closed → open at the threshold: calls are refused with the seconds left', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: false, retryAfterSeconds: 30 });
      clock.advance(20_500);
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: false, retryAfterSeconds: 10 });
      const view = await phase(breaker);
      assert.equal(view?.phase, 'open');
      assert.equal(view?.lastFailureAt, Date.parse('2026-11-23T10:00:00.000Z'));
      assert.deepEqual(
        await breaker.check('hmrc:GB'),
        { allowed: true, trial: null },
        'other keys stay closed',
      );
    });

    it('open → half-open after the open period: exactly one trial passes', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      assert.equal((await phase(breaker))?.phase, 'half_open');
      const trial = await breaker.check('vies:DE');
      assert.equal(trial.allowed, true);
      assert.ok(trial.allowed && typeof trial.trial === 'string');
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: false, retryAfterSeconds: 1 });
    });

    it('half-open trial success → closed', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      const trial = await breaker.check('vies:DE');
      assert.ok(trial.allowed);
      await breaker.report('vies:DE', 'success', trial.trial);
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: true, trial: null });
      assert.equal((await phase(breaker))?.phase, 'closed');
      assert.equal((await phase(breaker))?.lastSuccessAt, clock.millis());
    });

    it('half-open trial failure → open for another full period', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      const trial = await breaker.check('vies:DE');
      assert.ok(trial.allowed);
      await breaker.report('vies:DE', 'failure', trial.trial);
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: false, retryAfterSeconds: 30 });
      clock.advance(30_000);
      assert.equal((await breaker.check('vies:DE')).allowed, true, 'and half-open again after it');
    });

    it('half-open trial with a neutral outcome (not configured, aborted) → the trial is handed back', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      const trial = await breaker.check('vies:DE');
      assert.ok(trial.allowed);
      await breaker.report('vies:DE', 'neutral', trial.trial);
      const next = await breaker.check('vies:DE');
      assert.equal(next.allowed, true, 'the next call is the trial at once');
      assert.ok(next.allowed && next.trial !== null && next.trial !== trial.trial);
      assert.equal((await phase(breaker))?.phase, 'half_open');
    });

    it('half-open trial never reported (its caller died) → another trial after trialMs', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      assert.equal((await breaker.check('vies:DE')).allowed, true);
      clock.advance(OPTIONS.trialMs - 1);
      assert.equal((await breaker.check('vies:DE')).allowed, false);
      clock.advance(1);
      assert.equal((await breaker.check('vies:DE')).allowed, true);
    });

    it('a neutral report that is not the trial changes nothing; a stale trial token cannot hand back a newer trial', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      const first = await breaker.check('vies:DE');
      assert.ok(first.allowed);
      clock.advance(OPTIONS.trialMs);
      const second = await breaker.check('vies:DE');
      assert.ok(second.allowed);
      await breaker.report('vies:DE', 'neutral', first.trial);
      await breaker.report('vies:DE', 'neutral', null);
      assert.equal((await breaker.check('vies:DE')).allowed, false, 'the second trial still runs');
    });

    it('a failure reported in half-open by a call that was not the trial reopens it', async () => {
      const { clock, breaker } = setup();
      await open(breaker);
      clock.advance(30_000);
      await breaker.report('vies:DE', 'failure', null);
      assert.deepEqual(await breaker.check('vies:DE'), { allowed: false, retryAfterSeconds: 30 });
    });

    it('opened from outside (status endpoint): open for the given time, then half-open', async () => {
      const { clock, breaker } = setup();
      await breaker.open('vies:FR', 5_000);
      assert.deepEqual(await breaker.check('vies:FR'), { allowed: false, retryAfterSeconds: 5 });
      clock.advance(5_000);
      const trial = await breaker.check('vies:FR');
      assert.ok(trial.allowed && trial.trial !== null);
      await breaker.report('vies:FR', 'success', trial.trial);
      assert.equal((await phase(breaker, 'vies:FR'))?.phase, 'closed');
    });
  });
}

describe('registry results → breaker outcomes', () => {
  const unavailable = (reason: UnavailableReason): RegistryResult => ({
    kind: 'unavailable',
    source: 'vies',
    reason,
    retryable: true,
    message: reason,
  });
  it('answers, throttling and refusals say the registry is up; down, timeout and bad answers are failures', () => {
    const answer: RegistryResult = {
      kind: 'answer',
      source: 'vies',
      valid: false,
      name: null,
      address: null,
      consultationNumber: null,
      checkedAt: new Date(),
    };
    assert.equal(outcomeOf(answer), 'success');
    assert.equal(outcomeOf({ ...answer, valid: true }), 'success');
    assert.equal(outcomeOf(unavailable('throttled')), 'success');
    assert.equal(outcomeOf(unavailable('rejected')), 'success');
    assert.equal(outcomeOf(unavailable('not_configured')), 'neutral');
    assert.equal(outcomeOf(unavailable('down')), 'failure');
    assert.equal(outcomeOf(unavailable('timeout')), 'failure');
    assert.equal(outcomeOf(unavailable('bad_response')), 'failure');
  });
});
