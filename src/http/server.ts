import {
  createServer,
  type ServerOptions as HttpServerOptions,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { FastifyServerFactory } from 'fastify';

/** Answers a request outright and returns true, or returns false to leave it to the framework. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * A Fastify server factory for an HTTP/1 server that offers each request to `fastPath` before the
 * framework sees it. The server is configured as Fastify configures its own (keep-alive, request and
 * connection timeouts, requests per socket), so the two answer with the same headers.
 */
export function serverWithFastPath(fastPath: FastPath): FastifyServerFactory {
  return (handler, opts) => {
    // Fastify hands over its options with the server defaults filled in.
    const options = opts as {
      http?: HttpServerOptions;
      keepAliveTimeout: number;
      requestTimeout: number;
      connectionTimeout: number;
      maxRequestsPerSocket: number | null;
    };
    const server = createServer(options.http ?? {}, (request, response) => {
      if (!fastPath(request, response)) handler(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}
