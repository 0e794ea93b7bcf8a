import { pino } from 'pino';
import type { Config } from '../config.js';
import type { Container } from '../container.js';
import { openExistingDatabase } from './database.js';

/**
 * The whole container for a command that prints what it did, on a database that exists (a missing
 * SQLite file is refused, not created empty), with the service's log lines silent: they would only
 * repeat what the command prints.
 */
async function openQuietContainer(config: Config): Promise<Container> {
  await openExistingDatabase(config.databaseUrl).close();
  const { createContainer } = await import('../container.js');
  return createContainer(config, { log: pino({ level: 'silent' }) });
}

/** Runs `use` on a quiet container and closes the container after, however `use` ends. */
export async function withQuietContainer<T>(
  config: () => Config,
  use: (container: Container) => Promise<T>,
): Promise<T> {
  const container = await openQuietContainer(config());
  try {
    return await use(container);
  } finally {
    await container.close();
  }
}
