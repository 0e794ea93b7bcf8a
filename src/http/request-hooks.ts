import type { FastifyInstance } from 'fastify';
import { errors } from './api-error.js';

/**
 * The hooks every request goes through: its start time, its id in the answer's headers, the
 * refusal of a NUL in its query, and the closing of a connection whose body was not read.
 * `onClosing` is told when the server starts closing.
 */
export function registerRequestHooks(app: FastifyInstance, options: { onClosing: () => void }): void {
  app.addHook('preClose', (done) => {
    options.onClosing();
    done();
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('answeredFromCache', false);
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = performance.now();
    // `X-Request-Id` too: the hosted API's clients read the id from it.
    reply.header('service-request-id', request.id).header('x-request-id', request.id);
    // A query's NUL could not be stored as given either (see `unstorableText` for bodies); a lone
    // surrogate cannot reach a query (percent-encoded, it is not UTF-8 and is not decoded).
    const query = request.url.indexOf('?');
    if (query !== -1 && request.url.includes('%00', query)) {
      done(errors.invalidRequest('Query parameters may not contain the NUL character (%00).'));
      return;
    }
    done();
  });
  // An answer sent before its request's body was received (a refusal at authentication, a
  // too-large Content-Length) closes the connection: otherwise Node would keep reading the rest of
  // the body for the next request, and a client trickling it would hold the socket past every
  // request timeout (that timeout ends once the response is sent).
  // (A request without a body may not be marked complete yet when a quick answer is sent: only
  // requests that announce a body are considered.)
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    const announcesBody =
      (raw.headers['content-length'] ?? '0') !== '0' || raw.headers['transfer-encoding'] !== undefined;
    if (announcesBody && !raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });
}
