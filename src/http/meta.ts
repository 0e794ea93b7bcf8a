import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived. */
    startedAt: number;
  }
}

/** Milliseconds since `startedAt` (a `performance.now()`), rounded to 0.01 ms. */
export function msSince(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 100) / 100;
}

/** Milliseconds since the request arrived, rounded to 0.01 ms. */
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
