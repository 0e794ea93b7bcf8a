import type { FastifyReply, FastifyRequest } from 'fastify';

/** The reason a request's work is cancelled when its client closed the connection. */
export class ClientGone extends Error {
  constructor() {
    super('The client closed the connection before the answer was written.');
    this.name = 'ClientGone';
  }
}

/** Whether the connection of `reply` can no longer carry an answer (the client has gone). */
export function clientGone(reply: FastifyReply): boolean {
  const raw = reply.raw;
  return raw.destroyed || raw.socket === null || raw.socket.destroyed;
}

/**
 * A signal that aborts when the client closes its connection before the answer was written, so the
 * work done for it (registry calls) can stop. Already aborted when the client went before the
 * handler ran.
 */
export function clientSignal(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const raw = reply.raw;
  if (clientGone(reply) || request.raw.destroyed) {
    controller.abort(new ClientGone());
    return controller.signal;
  }
  raw.once('close', () => {
    if (!raw.writableFinished) controller.abort(new ClientGone());
  });
  return controller.signal;
}
