/** The OpenAPI description of `registryStatusBreakersInFlightCallsLastSuccessAndFailure`. */
export const registryStatusDescription =
  'Per registry and member state seen since start: the circuit breaker, calls in flight and waiting, and the last success and failure. Public, no key; answers are reused for about two seconds.';
