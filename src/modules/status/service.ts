import type { Clock } from '../../lib/clock.js';
import type { BreakerPhase, BreakerStore, Permits } from '../../registries/resilience.js';
import type { InstancesRepository } from './repository.js';

export type RegistryName = 'vies' | 'hmrc' | 'bfs' | 'brreg' | 'evatr' | 'eos' | 'hmrc_eori';

export interface RegistryStatusRow {
  registry: RegistryName;
  /** VAT prefix the limit and breaker apply to; `null` for a registry without member states (eVatR). */
  country: string | null;
  breaker: BreakerPhase;
  in_flight: number;
  queued: number;
  /** Calls allowed at once now: the configured limit, or fewer while the registry throttles. */
  concurrency_limit: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  retry_after_seconds: number | null;
}

export interface StatusSnapshot {
  /** Whether registry limits and breakers are shared through Redis right now. */
  shared: boolean;
  /** Instances alive by their heartbeat; `null` before the first heartbeat or when it fails. */
  instances: number | null;
  registries: RegistryStatusRow[];
}

/** How often an instance writes its heartbeat, and how old one may be to count as alive. */
export const HEARTBEAT_MS = 10_000;
const ALIVE_MS = 3 * HEARTBEAT_MS;

const REGISTRIES = new Set<string>(['vies', 'hmrc', 'bfs', 'brreg', 'evatr', 'eos', 'hmrc_eori']);

/**
 * The operator's view of the registries (breaker, in-flight and waiting calls, last success and
 * failure per registry and member state) and of the instances sharing the database.
 */
export function createStatusService(deps: {
  clock: Clock;
  instanceId: string;
  repository: InstancesRepository;
  breaker: BreakerStore;
  permits: Permits;
  /** The configured calls at once per registry and member state (`OPENVAT_REGISTRY_CONCURRENCY`). */
  concurrencyLimit: number;
  /** Whether a Redis client is configured at all. */
  redisConfigured: boolean;
  /** How long a snapshot is reused (ms). */
  cacheMs?: number;
  onWarning: (message: string) => void;
}) {
  const { clock, repository } = deps;
  const startedAt = clock.now().toISOString();
  let instances: number | null = null;
  let warned = false;
  let cached: { at: number; value: Promise<StatusSnapshot> } | null = null;

  async function build(): Promise<StatusSnapshot> {
    const [breakers, permits] = await Promise.all([deps.breaker.snapshot(), deps.permits.snapshot()]);
    const rows = new Map<string, RegistryStatusRow>();
    const row = (key: string): RegistryStatusRow | null => {
      const [registry, country] = key.split(':');
      if (!registry || !REGISTRIES.has(registry)) return null;
      let r = rows.get(key);
      if (!r) {
        r = {
          registry: registry as RegistryName,
          country: country ? country : null,
          breaker: 'closed',
          in_flight: 0,
          queued: 0,
          concurrency_limit: deps.concurrencyLimit,
          last_success_at: null,
          last_failure_at: null,
          retry_after_seconds: null,
        };
        rows.set(key, r);
      }
      return r;
    };
    for (const b of breakers) {
      const r = row(b.key);
      if (!r) continue;
      r.breaker = b.phase;
      r.retry_after_seconds = b.retryAfterSeconds;
      r.last_success_at = b.lastSuccessAt ? new Date(b.lastSuccessAt).toISOString() : null;
      r.last_failure_at = b.lastFailureAt ? new Date(b.lastFailureAt).toISOString() : null;
    }
    for (const p of permits) {
      const r = row(p.key);
      if (!r) continue;
      r.in_flight = p.inFlight;
      r.queued = p.queued;
      r.concurrency_limit = p.limit;
    }
    const registries = [...rows.values()].sort(
      (a, b) => a.registry.localeCompare(b.registry) || (a.country ?? '').localeCompare(b.country ?? ''),
    );
    return { shared: deps.redisConfigured && deps.permits.shared(), instances, registries };
  }

  return {
    /** The snapshot, reused for `cacheMs` (default 2 s) so polling it costs nothing. */
    snapshot(): Promise<StatusSnapshot> {
      const now = clock.millis();
      if (!cached || now - cached.at >= (deps.cacheMs ?? 2_000)) {
        const value = build();
        cached = { at: now, value };
        value.catch(() => {
          cached = null;
        });
      }
      return cached.value;
    },
    /** Instances alive by the last heartbeat (`null` until one was read). */
    instances: () => instances,
    /** Warnings an operator should see on `/ready`. */
    warnings(): string[] {
      return !deps.redisConfigured && instances !== null && instances > 1
        ? [perInstanceWarning(instances)]
        : [];
    },
    /** Writes this instance's heartbeat and reads how many are alive; warns once when limits are per instance. */
    async heartbeat(): Promise<void> {
      const now = clock.now();
      await repository.beat(deps.instanceId, startedAt, now.toISOString());
      instances = await repository.countAlive(new Date(now.getTime() - ALIVE_MS).toISOString());
      await repository.purgeOlderThan(new Date(now.getTime() - 86_400_000).toISOString());
      const [warning] = this.warnings();
      if (warning && !warned) {
        warned = true;
        deps.onWarning(warning);
      }
      if (!warning) warned = false;
    },
    async stop(): Promise<void> {
      await repository.remove(deps.instanceId);
    },
  };
}

export function perInstanceWarning(instances: number): string {
  return `${instances} instances share this database but REDIS_URL is not set: registry concurrency limits, circuit breakers and coalescing are per instance, so a registry may see ${instances} times OPENVAT_REGISTRY_CONCURRENCY calls per member state. Set REDIS_URL on every instance to share them.`;
}

export type StatusService = ReturnType<typeof createStatusService>;
