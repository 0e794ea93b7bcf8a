import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The ports the client's tests may listen on (127.0.0.1 only). */
const FIRST = 19400;
const LAST = 19499;
const handedOut = new Set<number>();

/**
 * Test files run in parallel processes: a port is claimed with a file of its own, created
 * exclusively and holding the claiming process's id, so two processes never hand out the same port
 * between probing it and listening on it. A claim of a process that no longer runs is taken over.
 */
const CLAIMS = join(tmpdir(), 'openvat-client-test-ports');

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function claim(port: number): boolean {
  const file = join(CLAIMS, String(port));
  const create = () => {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      return false;
    }
  };
  if (create()) return true;
  let holder = 0;
  try {
    holder = Number(readFileSync(file, 'utf8'));
  } catch {
    return create();
  }
  if (holder === process.pid || (holder > 0 && running(holder))) return false;
  rmSync(file, { force: true });
  return create();
}

function release(port: number): void {
  rmSync(join(CLAIMS, String(port)), { force: true });
}

process.once('exit', () => {
  for (const port of handedOut) release(port);
});

function tryPort(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A port of 19400–19499 free on 127.0.0.1 right now and claimed by this process (see `CLAIMS`),
 * never the same twice in this process; the search starts at a random port.
 */
export async function freePort(): Promise<number> {
  mkdirSync(CLAIMS, { recursive: true });
  const span = LAST - FIRST + 1;
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i += 1) {
    const port = FIRST + ((start + i) % span);
    if (handedOut.has(port) || !claim(port)) continue;
    if (await tryPort(port)) {
      handedOut.add(port);
      return port;
    }
    release(port);
  }
  throw new Error(`no free port in ${FIRST}-${LAST}`);
}
