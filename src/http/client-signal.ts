import type { ServerResponse } from 'node:http';
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
  whenClosedUnwritten(raw, () => controller.abort(new ClientGone()));
  return controller.signal;
}

/**
 * Calls `then` once if the connection of `raw` closes before the whole answer was handed to the
 * operating system. The answer counts as written on its `finish` event, not by `writableFinished`
 * at close time: that also waits for the socket's own buffer, which an in-process connection (as
 * `inject` gives) never drains, so every answer there would look unwritten.
 */
export function whenClosedUnwritten(raw: ServerResponse, then: () => void): void {
  let written = false;
  raw.once('finish', () => {
    written = true;
  });
  raw.once('close', () => {
    if (!written && !raw.writableFinished) then();
  });
}
