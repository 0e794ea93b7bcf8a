import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { MetricsObserver } from '../modules/metrics/service.js';
import { createParticipantFetch } from '../modules/peppol/fetch.js';
import { createPeppolAnswersRepository } from '../modules/peppol/repository.js';
import { createPeppolService, type PeppolService } from '../modules/peppol/service.js';
import { checkHost, checkUrlSyntax, type DnsResolver } from '../modules/webhooks/url-guard.js';
import { createSmlClient, type SmlClient } from '../registries/peppol-sml.js';
import { createSmpClient, type SmpUrlGuard } from '../registries/peppol-smp.js';
import {
  type BreakerStore,
  type Coalescer,
  createCoalescer,
  createSharedCoalescer,
  type RedisLike,
} from '../registries/resilience.js';

/**
 * The guard of SMP addresses, which come from DNS and are not trusted: the rules of webhook URLs
 * (https, public addresses only), lifted by `PEPPOL_ALLOW_PRIVATE_SMP`.
 */
export function smpUrlGuard(options: { allowPrivate: boolean; dns: DnsResolver }): SmpUrlGuard {
  return {
    async isAllowed(url) {
      const syntax = checkUrlSyntax(url, options.allowPrivate);
      if (!syntax.ok) return { allowed: false, reason: syntax.reason };
      const refusal = await checkHost(syntax.hostname, options);
      return refusal ? { allowed: false, reason: refusal } : { allowed: true };
    },
  };
}

/** The Peppol look-up: the SML client (DNS), the guarded SMP client, the store and coalescing. */
export function createPeppol(deps: {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  redis: Redis | null;
  dns: DnsResolver;
  onDegraded: (error: unknown) => void;
  observer: Pick<MetricsObserver, 'registryCall'>;
  /** The registries' breakers (shared through Redis when configured): the SML's and each SMP's. */
  breaker: BreakerStore;
}): { peppol: PeppolService; sml: SmlClient } {
  const { config, log, db, clock, redis } = deps;
  const settings = config.peppol;
  if (settings.allowPrivateSmp) {
    log.warn(
      'PEPPOL_ALLOW_PRIVATE_SMP is on: SMPs at private addresses and over plain http are called (simulators and private networks only)',
    );
  }
  const sml = createSmlClient({
    zone: settings.smlZone,
    ...(settings.dnsServers ? { servers: settings.dnsServers } : {}),
    timeoutMs: settings.dnsTimeoutMs,
  });
  const smp = createSmpClient({
    guard: smpUrlGuard({ allowPrivate: settings.allowPrivateSmp, dns: deps.dns }),
    timeoutMs: settings.smpTimeoutMs,
    now: () => clock.now(),
  });
  // A look-up asks the SML (each server in turn, twice at least) and then the SMP twice.
  const boundMs = settings.dnsTimeoutMs * 4 + settings.smpTimeoutMs * 2 + 1_000;
  const coalescer: Coalescer = redis
    ? createSharedCoalescer({
        redis: redis as unknown as RedisLike,
        prefix: config.redisPrefix,
        onDegraded: deps.onDegraded,
        lockMs: boundMs,
        encode: (value) => JSON.stringify(value),
        decode: (text) => JSON.parse(text) as unknown,
      })
    : createCoalescer();
  const peppol = createPeppolService({
    repository: createPeppolAnswersRepository(db.kysely),
    fetchParticipant: createParticipantFetch({
      sml,
      smp,
      observer: deps.observer,
      breaker: deps.breaker,
    }),
    coalescer,
    clock,
    zone: sml.zone,
    breaker: deps.breaker,
  });
  return { peppol, sml };
}
