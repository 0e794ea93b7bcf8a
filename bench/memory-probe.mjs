/**
 * Preloaded into a benchmarked service (`node --expose-gc --import bench/memory-probe.mjs …`, with
 * an IPC channel): answers `{ type: 'memory', id, gc }` with the process's own view of its memory
 * (`process.memoryUsage()`), after a full garbage collection when `gc` is set. The service's code is
 * unchanged; the channel is unreferenced, so it never keeps the process alive.
 */
if (process.send) {
  process.on('message', (message) => {
    if (message?.type !== 'memory') return;
    if (message.gc && typeof globalThis.gc === 'function') globalThis.gc();
    const usage = process.memoryUsage();
    process.send?.({
      type: 'memory',
      id: message.id,
      gc: Boolean(message.gc && typeof globalThis.gc === 'function'),
      heapUsed: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
    });
  });
  process.channel?.unref();
}
