import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';

/** How the service tells a request's client address: Fastify's `trustProxy` and the same rule for raw requests. */
export interface ClientAddress {
  /** Fastify's `trustProxy` option: whether the address at hop `i` (0 = the connection's peer) is a trusted proxy. */
  readonly trustProxy: ((address: string, hop: number) => boolean) | false;
  /** The client address of a raw request (what `request.ip` is for the same request). */
  address(request: IncomingMessage): string;
}

/**
 * The client address of a request: the connection's peer, or, when that peer is one of the trusted
 * proxies (listed, or the nearest N hops), the nearest address in `X-Forwarded-For` that is not (proxy-addr's rule, which Fastify
 * applies to `request.ip`). A header sent by anyone else is ignored.
 */
export function clientAddress(trusted: readonly string[] | number): ClientAddress {
  if (trusted === 0 || (typeof trusted !== 'number' && trusted.length === 0)) {
    return { trustProxy: false, address: (request) => request.socket.remoteAddress ?? '' };
  }
  // A hop count trusts the nearest `trusted` addresses (the peer first), whatever they are: for a
  // service that every request reaches through exactly that many proxies.
  const trust =
    typeof trusted === 'number'
      ? (_address: string, hop: number) => hop < trusted
      : proxyaddr.compile([...trusted]);
  return { trustProxy: trust, address: (request) => proxyaddr(request, trust) };
}
