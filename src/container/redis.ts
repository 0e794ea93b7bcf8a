import type { Redis } from 'ioredis';
import { ConfigError } from '../config.js';
import { withTimeout } from '../registries/resilience.js';

/** Connects to `REDIS_URL` at start; one that does not answer is a start-up error naming it. */
export async function connectRedis(url: string): Promise<Redis> {
  // Loaded here, not at start: a command on a database without REDIS_URL never needs it.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    maxRetriesPerRequest: 2,
    // Every user of this client falls back when a command fails (per-key limits pass, registry
    // limits count locally), so a command must fail fast rather than wait: at once while the
    // connection is down (no offline queue, whose reconnect retries reach seconds per command),
    // after 1 s when Redis hangs (without it a keyed request would wait for ever).
    enableOfflineQueue: false,
    commandTimeout: 1_000,
    lazyConnect: true,
    connectTimeout: 3_000,
  });
  // Connection errors surface through the commands that fail (logged once a minute), not as events.
  client.on('error', () => {});
  try {
    await withTimeout(
      client.connect().then(() => client.ping()),
      5_000,
    );
    return client;
  } catch (error) {
    client.disconnect();
    const shown = url.replace(/\/\/[^@/]*@/, '//***@');
    throw new ConfigError(
      `REDIS_URL ${shown} does not answer (${(error as Error).message}); start Redis or unset REDIS_URL to keep limits per instance.`,
    );
  }
}
