import type { Redis } from 'ioredis';
import { type Config, registryAnswerBoundMs } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { createEoriLiveAnswers } from '../modules/eori/live.js';
import { parseEori } from '../modules/eori/parse.js';
import { createEoriAnswersRepository, type EoriAnswersRepository } from '../modules/eori/repository.js';
import { createEoriService, type EoriCheckService } from '../modules/eori/service.js';
import { createEoriTestAnswers } from '../modules/eori/test-answers.js';
import type { Metrics } from '../modules/metrics/service.js';
import { createEosClient } from '../registries/eos.js';
import { createHmrcEoriClient } from '../registries/hmrc-eori.js';
import {
  type BreakerStore,
  type Coalescer,
  createCoalescer,
  createSharedCoalescer,
  type Permits,
  type RedisLike,
} from '../registries/resilience.js';

/** A coalesced request's result as it crossed Redis: its answers' dates back to `Date`s. */
function decodeCallResult(text: string): unknown {
  const value = JSON.parse(text) as {
    kind: string;
    results?: Array<{ kind: string; checkedAt?: string | Date }>;
  };
  for (const result of value.results ?? []) {
    if (result.kind === 'answer' && typeof result.checkedAt === 'string')
      result.checkedAt = new Date(result.checkedAt);
  }
  return value;
}

/**
 * EORI numbers: the EOS and HMRC clients from the configured URLs, behind the same breaker store
 * and permits as the VAT registries (keys `eos` and `hmrc_eori`) and a coalescer of their own,
 * shared through Redis when it is configured; the stored answers; the check service over the live
 * and the test-mode sources.
 */
export function createEoriChecks(deps: {
  config: Config;
  db: Db;
  clock: Clock;
  redis: Redis | null;
  metrics: Metrics;
  guards: { breaker: BreakerStore; permits: Permits };
  onDegraded(error: unknown): void;
}): {
  eori: EoriCheckService;
  eoriAnswers: EoriAnswersRepository;
  /** Whether a live key's `GET /v1/eori/{number}` would be answered from the store (the monthly quota serves it then). */
  wouldBeCached(input: string, useCache: boolean): Promise<boolean>;
} {
  const { config, db, clock, redis, metrics, guards } = deps;
  const registries = config.registries;
  const now = () => clock.now();
  const clients = {
    eos: createEosClient({ url: registries.eosUrl, timeoutMs: registries.timeoutMs, now }),
    hmrc: createHmrcEoriClient({ baseUrl: registries.hmrcUrl, timeoutMs: registries.timeoutMs, now }),
  };
  const coalescer: Coalescer = redis
    ? createSharedCoalescer({
        redis: redis as unknown as RedisLike,
        prefix: config.redisPrefix,
        onDegraded: deps.onDegraded,
        lockMs: registryAnswerBoundMs(registries) + 1_000,
        encode: (value) => JSON.stringify(value),
        decode: decodeCallResult,
      })
    : createCoalescer();
  const eoriAnswers = createEoriAnswersRepository(db.kysely);
  const live = createEoriLiveAnswers({
    clients,
    repository: eoriAnswers,
    clock,
    cache: config.cache,
    stores: { ...guards, coalescer },
    permitWaitMs: registries.permitWaitMs,
    deadlineMs: registries.deadlineMs,
    backoffMs: registries.backoffMs,
    observer: metrics.observer,
  });
  const eori = createEoriService({ clock, sources: { live, test: createEoriTestAnswers({ clock }) } });
  async function wouldBeCached(input: string, useCache: boolean): Promise<boolean> {
    const parsed = parseEori(input);
    return useCache && parsed.ok && (await live.hasFresh(parsed.eori));
  }
  return { eori, eoriAnswers, wouldBeCached };
}
