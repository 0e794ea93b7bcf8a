import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer, type Ports } from '../../src/container.js';
import type { Mode, Plan } from '../../src/modules/keys/plans.js';

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  /** Creates a key and returns the bearer header for it. */
  key(
    plan: Plan,
    mode?: Mode,
    options?: { defaultRequesterVat?: string; accountId?: string },
  ): Promise<TestKey>;
  close(): Promise<void>;
}

export interface TestKey {
  id: string;
  accountId: string;
  key: string;
  headers: { authorization: string };
}

/** The real app on an in-memory SQLite database (or the given ports), quiet logs. */
export async function buildTestApp(env: Record<string, string> = {}, ports: Ports = {}): Promise<TestApp> {
  // Tests never ask the Commission's TEDB: a test that syncs names the simulator.
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    LOG_LEVEL: 'silent',
    OPENVAT_TEDB_URL: 'off',
    // Tests keep VIES's answers: a test of the national fallbacks turns them on.
    OPENVAT_NATIONAL_FALLBACKS: 'none',
    ...env,
  });
  const container = await createContainer(config, ports);
  const app = await buildApp(container);
  return {
    app,
    container,
    async key(plan, mode = 'test', options = {}) {
      const created = await container.keys.createKey({
        plan,
        mode,
        defaultRequesterVat: options.defaultRequesterVat ?? null,
        ...(options.accountId ? { accountId: options.accountId } : {}),
      });
      return {
        id: created.id,
        accountId: created.accountId,
        key: created.key,
        headers: { authorization: `Bearer ${created.key}` },
      };
    },
    async close() {
      await app.close();
      await container.close();
    },
  };
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isUuidV7(value: unknown): boolean {
  return typeof value === 'string' && UUID_V7.test(value);
}
