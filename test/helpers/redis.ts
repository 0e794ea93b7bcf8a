import { Redis } from 'ioredis';

let probe: Promise<string | false> | undefined;
let noticed = false;

/**
 * Whether TEST_REDIS_URL names a Redis server that answers: `false` when it does, else the reason to
 * skip (printed once as a notice). With `CI=true` an absent Redis is an error, never a silent skip.
 */
export async function redisSkip(): Promise<string | false> {
  probe ??= (async () => {
    const url = process.env.TEST_REDIS_URL;
    if (!url) return 'TEST_REDIS_URL is not set';
    if (url === 'off') return 'TEST_REDIS_URL=off';
    const client = new Redis(url, { lazyConnect: true, connectTimeout: 30_000, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      await client.ping();
      return false;
    } catch (error) {
      return `Redis at TEST_REDIS_URL does not answer (${(error as Error).message})`;
    } finally {
      client.disconnect();
    }
  })();
  const skip = await probe;
  if (skip && process.env.CI === 'true') {
    throw new Error(`CI=true requires Redis, but ${skip}: start it or unset CI to skip these tests.`);
  }
  if (skip && !noticed) {
    noticed = true;
    console.log(`# notice: Redis tests skipped: ${skip}`);
  }
  return skip;
}
