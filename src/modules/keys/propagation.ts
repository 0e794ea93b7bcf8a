import type { Redis } from 'ioredis';
import type { KeysService } from './service.js';
import type { KeyChange } from './writes.js';

/**
 * Changes to keys and accounts made on one instance, told to every instance: this one forgets what
 * it remembers of them at once, and, with Redis, the others within the time a pub/sub message takes
 * (each subscribes to one channel). Without Redis, other instances see a change within
 * `OPENVAT_KEY_CACHE_MS`.
 */
export function createKeyPropagation(options: {
  keys: Pick<KeysService, 'forget'>;
  redis: Redis | null;
  /** Prefix of the Redis keys (`OPENVAT_REDIS_PREFIX`). */
  redisPrefix: string;
  onError?: (error: unknown) => void;
}) {
  const { keys, redis } = options;
  const channel = `${options.redisPrefix}key-changes`;
  let subscriber: Redis | null = null;
  const onError = options.onError ?? (() => {});

  return {
    async announce(change: KeyChange): Promise<void> {
      keys.forget(change);
      if (redis) await redis.publish(channel, JSON.stringify(change)).catch(onError);
    },

    /** Starts listening to the other instances' changes. */
    async start(): Promise<void> {
      if (!redis || subscriber) return;
      subscriber = redis.duplicate();
      subscriber.on('error', onError);
      subscriber.on('message', (from: string, message: string) => {
        if (from !== channel) return;
        try {
          keys.forget(JSON.parse(message) as KeyChange);
        } catch (error) {
          onError(error);
        }
      });
      // A copy of the service's client, which connects lazily and queues nothing while offline.
      if (subscriber.status === 'wait') await subscriber.connect();
      await subscriber.subscribe(channel);
    },

    close(): void {
      subscriber?.disconnect();
      subscriber = null;
    },
  };
}

export type KeyPropagation = ReturnType<typeof createKeyPropagation>;
