import { LRUCache } from 'lru-cache';

/**
 * A least-recently-used cache of at most `entries` entries that takes memory as it fills.
 * (`LRUCache`'s `max` allocates its lists for every entry at once: about 2.8 MB for 100,000, held
 * by an idle instance that has cached nothing. Counting each entry as size 1 against `maxSize`
 * bounds it the same way without that.)
 */
export function boundedCache<K extends {}, V extends {}>(
  entries: number,
  options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: () => 1 });
}
