import { createServer } from 'node:net';

/** The ports the client's tests may listen on (127.0.0.1 only). */
const FIRST = 19400;
const LAST = 19499;
const handedOut = new Set<number>();

function tryPort(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A port of 19400–19499 free on 127.0.0.1 right now, never the same twice in this process; the
 * search starts at a random port so that two test files running at once rarely probe the same one.
 */
export async function freePort(): Promise<number> {
  const span = LAST - FIRST + 1;
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i += 1) {
    const port = FIRST + ((start + i) % span);
    if (handedOut.has(port)) continue;
    if (await tryPort(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${FIRST}-${LAST}`);
}
