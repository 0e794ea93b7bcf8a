/**
 * Resilience around every registry call: a circuit breaker and a concurrency limit per registry and
 * member state (`vies:DE`, `hmrc:GB`, `evatr`), request coalescing and jittered backoff. Each comes
 * in two stores behind one interface: in this process, or shared by every instance through Redis.
 * No domain knowledge here.
 *
 * Why hand-written rather than cockatiel (evaluated against cockatiel 3.2): cockatiel's
 * `CircuitBreakerPolicy` and `BulkheadPolicy` keep their state in process memory. The breaker can
 * be serialised (`toJSON` / `initialState`) to survive a restart, but there is no way to make N
 * processes move one breaker atomically, to let exactly one of them run the half-open trial, or to
 * count bulkhead permits across processes — which is what several instances behind a load
 * balancer need. The shared case therefore needs Redis scripts whatever the library, and cockatiel
 * would only cover the single-process case with a second, different state machine. Its policies
 * also signal a refusal by throwing (`BrokenCircuitError`, `BulkheadRejectedError`), while the
 * registry port returns every outcome as a value. Request-path cost, measured 2026-11-23 on the
 * 2-core development host (200,000 sequential calls answering at once; cockatiel installed outside
 * the project for the comparison): breaker check + report + permit here 1.5 µs per call,
 * cockatiel's `wrap(bulkhead(2), circuitBreaker(ConsecutiveBreaker(5)))` 0.45 µs; the shared Redis
 * store 113 µs (three round trips; 5,000 calls). Against a registry call of 100+ ms all three are
 * noise and cache hits reach none of them, so the deciding point is the shared state, which
 * cockatiel does not offer. One state machine (`breakerCheck`, `breakerReport`, `breakerOpen`) is
 * written once in TypeScript and mirrored in one Lua script, and the same test suite runs against
 * both.
 */
export * from './backoff.js';
export * from './breaker.js';
export * from './coalescer.js';
export * from './permit-limits.js';
export * from './permits.js';
export * from './shared-store.js';
