import module from 'node:module';

/** `module.enableCompileCache`'s answer (Node >= 22.1; @types/node 20 does not declare it). */
type EnableCompileCache = (directory?: string) => { status: number; message?: string };

/**
 * Turns on Node's module compile cache for this process, where Node has one (22.1 and later; a no-op
 * on Node 20): the code V8 compiles for each module is kept on disk, and a later run of openvat
 * reads it instead of compiling the module again. The directory is Node's own choice,
 * `NODE_COMPILE_CACHE` or else `node-compile-cache` under the OS temp directory, never the
 * install's (which may be read-only); `NODE_DISABLE_COMPILE_CACHE=1` turns it off. A directory that
 * cannot be written leaves the cache off, and the command runs as without it.
 */
export function enableCompileCache(): void {
  const enable = (module as unknown as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== 'function') return;
  try {
    enable();
  } catch {
    // Never a reason not to run: the cache only saves compile time.
  }
}
