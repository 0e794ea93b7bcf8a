import { writeSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { type Container, createContainer } from './container.js';

export interface RunningServer {
  app: FastifyInstance;
  container: Container;
  address: string;
  /** The admin listener's address when it has one of its own (`OPENVAT_ADMIN_PORT`), else null. */
  adminAddress: string | null;
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
  stop(): Promise<void>;
}

/** Starts the service: migrations, first-run test key, HTTP listener. */
export async function startServer(
  config: Config,
  // A direct write rather than console.log: pushing the banner through process.stdout's stream
  // machinery before the first request was measured to leave Node's shared stream code on slower
  // paths for the life of the process (a third more instructions per request).
  print: (line: string) => void = (line) => writeSync(1, `${line}\n`),
): Promise<RunningServer> {
  const container = await createContainer(config);
  if (config.admin.key !== null) await container.admin.ensureKey(config.admin.key, 'OPENVAT_ADMIN_KEY');
  const firstStart = (await container.keys.countKeys()) === 0;
  if (firstStart && (await container.admin.countKeys()) === 0) {
    const created = await container.admin.createKey('first-run', 'admin');
    const where = config.admin.listener ?? config;
    print('');
    print('  First start: created an admin key. It is shown only this once:');
    print('');
    print(`    ${created.key}`);
    print('');
    print(`  Admin console (sign in with it): http://${where.host}:${where.port}/admin/`);
    print(`  Admin API: http://${where.host}:${where.port}/admin/v1 (reference: /admin/docs)`);
  }
  if (firstStart) {
    const created = await container.keys.createKey({
      plan: 'business',
      mode: 'test',
      accountName: 'first-run',
    });
    print('');
    print('  First start: created a Business-plan test key. It is shown only this once:');
    print('');
    print(`    ${created.key}`);
    print('');
    print(
      `  Try: curl -H "Authorization: Bearer ${created.key}" "http://${config.host}:${config.port}/v1/rates/de"`,
    );
    print(`  API reference and playground: http://${config.host}:${config.port}/docs`);
    print(`  Dashboard (sign in with a key): http://${config.host}:${config.port}/dashboard`);
    print('  More keys: npx openvat keys create --plan business --mode live');
    print('');
  }
  const app = await buildApp(container);
  let address: string;
  try {
    address = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await app.close().catch(() => {});
    await container.close().catch(() => {});
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`HOST, PORT: cannot listen on ${config.host}:${config.port} (${reason})`, {
      cause: error,
    });
  }
  const listener = config.admin.listener;
  const adminApp = listener ? await buildApp(container, { surface: 'admin' }) : null;
  // A listen options object of its own: Fastify adds to it, and the configuration is frozen.
  const adminAddress =
    adminApp && listener ? await adminApp.listen({ host: listener.host, port: listener.port }) : null;
  container.start();
  let stopping: Promise<void> | null = null;
  return {
    app,
    container,
    address,
    adminAddress,
    stop() {
      stopping ??= (async () => {
        // Keep-alive connections become idle once their in-flight request is answered; close them as
        // they do, so shutdown does not wait for the keep-alive timeout.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
        try {
          await Promise.all([app.close(), adminApp?.close()]);
        } finally {
          clearInterval(sweep);
        }
        await container.close();
      })();
      return stopping;
    },
  };
}

/** Runs until SIGTERM/SIGINT, then shuts down gracefully (in-flight requests finish). */
export async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  const shutdown = (signal: string) => {
    server.container.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      server.container.log.error('shutdown took longer than 15 s; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        server.container.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
