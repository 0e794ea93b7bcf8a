/**
 * Runs `deleteBatch` (which deletes at most `batchSize` rows) until it deletes fewer, yielding to the
 * event loop between batches so that requests are never held up for long; returns the rows deleted.
 */
export async function deleteInBatches(
  batchSize: number,
  deleteBatch: () => Promise<number>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < batchSize) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
