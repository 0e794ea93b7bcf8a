import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived. */
    startedAt: number;
  }
}

/**
 * Whole milliseconds since `startedAt` (a `performance.now()`): the hosted contract types
 * `latency_ms` as an integer, and an integer is also the spec's "number".
 */
export function msSince(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}

/** Whole milliseconds since the request arrived. */
export function latencyMs(reply: FastifyReply): number {
  return msSince(reply.request.startedAt);
}

/** The `meta` every response carries. */
export function baseMeta(
  request: FastifyRequest,
  reply: FastifyReply,
): { request_id: string; latency_ms: number } {
  return { request_id: request.id, latency_ms: latencyMs(reply) };
}
