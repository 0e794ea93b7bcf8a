import type { Config } from './config.js';
import { startKeyPropagation } from './container/administration.js';
import { createCoreContainer } from './container/core.js';
import type { Container, Ports } from './container/types.js';

export type { Container, Ports };
export { createCoreContainer };

/**
 * What a running service uses, made at its start rather than on its first request: a setting that
 * does not check (a rates overrides file, `OPENVAT_TSA_ROOTS`) stops the start, not a request.
 * The workers are made by `start()`.
 */
const SERVICE_PARTS = [
  'keys',
  'admin',
  'playground',
  'usage',
  'rates',
  'audits',
  'events',
  'metrics',
  'liveAnswers',
  'validation',
  'monthlyQuota',
  'decide',
  'peppol',
  'eori',
  'confirmations',
  'webhooks',
  'outbox',
  'ratesUpdates',
  'batch',
  'monitors',
  'publicLimiter',
  'requireKey',
  'requireAdmin',
  'sendRecorded',
] as const satisfies readonly (keyof Container)[];

/**
 * The container of a running service: every service made and wired, key changes of other
 * instances subscribed to, and what earlier rates syncs learnt loaded. A command that needs only
 * some parts uses `createCoreContainer`, which makes each on first use.
 */
export async function createContainer(config: Config, ports: Ports = {}): Promise<Container> {
  const container = await createCoreContainer(config, ports);
  try {
    for (const name of SERVICE_PARTS) void container[name];
    await startKeyPropagation(container.keyPropagation, container.log);
    // What earlier syncs learnt is served from the first request on.
    await container.ratesUpdates.reload();
  } catch (error) {
    await container.close().catch(() => {});
    throw error;
  }
  return container;
}
