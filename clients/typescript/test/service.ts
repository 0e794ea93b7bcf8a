import type { AddressInfo } from 'node:net';
import { createSimulatorServer, type SimulatorServer } from '../../../src/simulators/server.js';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js';
import { freePort } from './ports.js';

/** A German requester with a valid check digit (eVatR confirmations). */
export const REQUESTER = 'DE136695976';

export interface RunningService {
  /** `http://127.0.0.1:PORT` of the real app, listening with its workers started. */
  baseUrl: string;
  t: TestApp;
  simulator: SimulatorServer;
  close(): Promise<void>;
}

/**
 * The real service on a real socket (127.0.0.1, a port of 19400–19499), its registries being the project's
 * simulators on another local socket, its webhook and batch workers running; in-memory SQLite.
 */
export async function startService(env: Record<string, string> = {}): Promise<RunningService> {
  const simulator = createSimulatorServer();
  const { urls } = await simulator.listen(await freePort(), '127.0.0.1');
  const t = await buildTestApp({
    ...urls,
    OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    OPENVAT_WEBHOOK_BACKOFF_MS: '200',
    OPENVAT_CONFIRM_BURST: '1000',
    ...env,
  });
  t.container.start();
  await t.app.listen({ port: await freePort(), host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    t,
    simulator,
    async close() {
      await t.close();
      await simulator.close();
    },
  };
}
