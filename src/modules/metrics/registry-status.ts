import type { StatusSnapshot } from '../status/index.js';
import type { RegistryState } from './service.js';

/**
 * The one adapter between the metrics and the registry resilience layer: maps the snapshot that
 * `GET /v1/status` answers (breaker phase, calls in flight and queued per registry and member
 * state) to the metrics' registry states.
 */
export function registryStatusFrom(snapshot: () => Promise<StatusSnapshot>): () => Promise<RegistryState[]> {
  return async () =>
    (await snapshot()).registries.map((row) => ({
      registry: row.registry,
      country: row.country ?? '',
      breaker: row.breaker,
      in_flight: row.in_flight,
      queued: row.queued,
      concurrency_limit: row.concurrency_limit,
    }));
}
