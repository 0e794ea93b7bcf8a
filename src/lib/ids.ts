import { randomFillSync } from 'node:crypto';

/** Port for identifiers, so tests can make them predictable. */
export interface IdGenerator {
  /** A time-ordered UUID v7 (RFC 9562). */
  uuid(): string;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const DIGIT = Array.from({ length: 16 }, (_, i) => i.toString(16));
const POOL_BYTES = 8 * 1024;

/**
 * UUID v7 generator (RFC 9562 §5.7) with the 12-bit `rand_a` field as a counter within the
 * millisecond (§6.2, method 1), so ids from one process sort in creation order. The counter starts
 * at a random value below 2048 each millisecond; if it runs out, the timestamp moves on by one.
 * `rand_b` comes from a pool of CSPRNG bytes refilled 8 KiB at a time. Every request gets an id,
 * so this is on the hot path: about a fifth of the cost of the `uuid` package's v7.
 */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  const pool = Buffer.allocUnsafe(POOL_BYTES);
  let offset = POOL_BYTES;
  let lastMs = -1;
  let counter = 0;
  let prefix = '';

  /** Offset of `n` unused random bytes in the pool, refilling it when too few are left. */
  function take(n: number): number {
    if (offset + n > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    offset += n;
    return offset - n;
  }

  /** A counter start below 2048, so a millisecond has room for at least 2048 more ids. */
  function seed(): number {
    const o = take(2);
    return (((pool[o] as number) & 0x07) << 8) | (pool[o + 1] as number);
  }

  return {
    uuid() {
      let ms = now();
      if (ms > lastMs) {
        counter = seed();
      } else {
        ms = lastMs;
        counter++;
        if (counter > 0xfff) {
          ms++;
          counter = seed();
        }
      }
      if (ms !== lastMs) {
        // 48 bits as two integers: `Number#toString(16)` on a value this large takes V8's slow
        // floating-point path, which costs more than the rest of the id.
        const high = Math.floor(ms / 0x1000000);
        const low = ms - high * 0x1000000;
        prefix =
          (HEX[(high >>> 16) & 0xff] as string) +
          HEX[(high >>> 8) & 0xff] +
          HEX[high & 0xff] +
          HEX[low >>> 16] +
          '-' +
          HEX[(low >>> 8) & 0xff] +
          HEX[low & 0xff] +
          '-7';
        lastMs = ms;
      }
      const p = pool;
      const o = take(8);
      return (
        prefix +
        DIGIT[counter >> 8] +
        HEX[counter & 0xff] +
        '-' +
        HEX[0x80 | ((p[o] as number) & 0x3f)] +
        HEX[p[o + 1] as number] +
        '-' +
        HEX[p[o + 2] as number] +
        HEX[p[o + 3] as number] +
        HEX[p[o + 4] as number] +
        HEX[p[o + 5] as number] +
        HEX[p[o + 6] as number] +
        HEX[p[o + 7] as number]
      );
    },
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
