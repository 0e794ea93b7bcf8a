import { writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createFirstStartKeys, FIRST_START_ACCOUNT, type FirstStartKeys } from './container/first-start.js';
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

/** `http://HOST:PORT` of a listening app: the configured host, the port it got (`PORT=0` included). */
function origin(app: FastifyInstance, host: string): string {
  return `http://${host}:${(app.server.address() as AddressInfo).port}`;
}

/** Listens on `host:port`; a failure names the settings (`names`) and the reason. */
async function listenOn(app: FastifyInstance, host: string, port: number, names: string): Promise<string> {
  try {
    // A listen options object of its own: Fastify adds to it, and the configuration is frozen.
    return await app.listen({ host, port });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`${names}: cannot listen on ${host}:${port} (${reason})`, { cause: error });
  }
}

/** The first start's banner: each key, shown only this once, and where to use it. */
function printFirstStart(
  created: FirstStartKeys,
  urls: { public: string; admin: string },
  print: (line: string) => void,
): void {
  if (created.admin !== null) {
    print('');
    print('  First start: created an admin key. It is shown only this once:');
    print('');
    print(`    ${created.admin}`);
    print('');
    print(`  Admin console (sign in with it): ${urls.admin}/admin/`);
    print(`  Admin API: ${urls.admin}/admin/v1 (reference: /admin/docs)`);
  }
  print('');
  print(
    `  First start: created a Business-plan test key (account "${FIRST_START_ACCOUNT}"). It is shown only this once:`,
  );
  print('');
  print(`    ${created.test}`);
  print('');
  print(`  Try: curl -H "Authorization: Bearer ${created.test}" "${urls.public}/v1/rates/de"`);
  print(`  API reference and playground: ${urls.public}/docs`);
  print(`  Dashboard (sign in with a key): ${urls.public}/dashboard`);
  print('  More keys: npx openvat keys create --plan business --mode live');
  print('');
}

/**
 * Starts the service: migrations, the listeners (the public one, and the admin one with
 * `OPENVAT_ADMIN_PORT`), the first start's keys, then the background work.
 */
export async function startServer(
  config: Config,
  // A direct write rather than console.log: pushing the banner through process.stdout's stream
  // machinery before the first request was measured to leave Node's shared stream code on slower
  // paths for the life of the process (a third more instructions per request).
  print: (line: string) => void = (line) => writeSync(1, `${line}\n`),
): Promise<RunningServer> {
  const container = await createContainer(config);
  const listener = config.admin.listener;
  let app: FastifyInstance | null = null;
  let adminApp: FastifyInstance | null = null;
  let address: string;
  let adminAddress: string | null = null;
  try {
    if (config.admin.key !== null) await container.admin.ensureKey(config.admin.key, 'OPENVAT_ADMIN_KEY');
    app = await buildApp(container);
    address = await listenOn(app, config.host, config.port, 'HOST, PORT');
    if (listener) {
      adminApp = await buildApp(container, { surface: 'admin' });
      adminAddress = await listenOn(
        adminApp,
        listener.host,
        listener.port,
        'OPENVAT_ADMIN_HOST, OPENVAT_ADMIN_PORT',
      );
    }
    // After the listeners: keys made by a start that then cannot listen would never be shown.
    const created = await createFirstStartKeys(container);
    if (created) {
      const publicUrl = origin(app, config.host);
      const adminUrl = adminApp && listener ? origin(adminApp, listener.host) : publicUrl;
      printFirstStart(created, { public: publicUrl, admin: adminUrl }, print);
    }
  } catch (error) {
    await Promise.all([app?.close(), adminApp?.close()]).catch(() => {});
    await container.close().catch(() => {});
    throw error;
  }
  container.start();
  const publicApp = app;
  let stopping: Promise<void> | null = null;
  return {
    app: publicApp,
    container,
    address,
    adminAddress,
    stop() {
      stopping ??= (async () => {
        // Keep-alive connections become idle once their in-flight request is answered; close them as
        // they do, so shutdown does not wait for the keep-alive timeout.
        const sweep = setInterval(() => {
          publicApp.server.closeIdleConnections();
          adminApp?.server.closeIdleConnections();
        }, 100);
        try {
          await Promise.all([publicApp.close(), adminApp?.close()]);
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
