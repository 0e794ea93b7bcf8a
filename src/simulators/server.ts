/**
 * The combined simulator server behind `openvat simulate`: VIES (`/vies/rest-api`,
 * `/vies/services/checkVatService`), HMRC (`/hmrc`, its VAT and its EORI API), the Swiss UID register
 * (`/bfs/V5.0/PublicServices.svc`), Brønnøysund (`/brreg`), eVatR (`/evatr`), the Commission's EOS EORI service
 * (`/eos/validation/services/validation`) and its TEDB rates service (`/tedb/ws/`) on one port, with the Peppol SMPs (`/peppol-smp/<name>`) and the
 * Peppol SML's participant list (`/peppol-sml`); the SML's DNS server listens on a port of its own
 * (`peppolSml.listen`, as `openvat simulate` does), and the national registers asked when VIES
 * cannot answer: the Polish white list (`/pl-whitelist`), CZ ADIS (`/cz-adis`), RO ANAF (`/ro-anaf`),
 * FI PRH (`/fi-prh`), SK Finančná správa (`/sk-financnasprava`) and the files of SI FURS (`/si-furs`)
 * and LV VID (`/lv-vid`).
 *
 * Controls over HTTP: `POST /_control` with `{"vies": {...}, "hmrc": {...}}` (per module, or `"all"`),
 * or a bare command object applied to every module; answers the new settings per module.
 * `GET /_stats` answers every module's counters.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBfsSimulator } from './bfs.js';
import { createBrregSimulator } from './brreg.js';
import { sendJson } from './controls.js';
import { createCzAdisSimulator } from './cz-adis.js';
import { createEosSimulator } from './eos.js';
import { createEvatrSimulator } from './evatr.js';
import { createFiPrhSimulator } from './fi-prh.js';
import { createHmrcSimulator } from './hmrc.js';
import { createHmrcEoriSimulator } from './hmrc-eori.js';
import { createLvVidSimulator } from './lv-vid.js';
import { createPeppolSmlSimulator } from './peppol-sml.js';
import { createPeppolSmpSimulator } from './peppol-smp.js';
import { createPlWhitelistSimulator } from './pl-whitelist.js';
import { createRoAnafSimulator } from './ro-anaf.js';
import { createSiFursSimulator } from './si-furs.js';
import { createSkFinancnaSpravaSimulator } from './sk-financnasprava.js';
import { createTedbSimulator } from './tedb.js';
import type { SimulatorModule } from './types.js';
import { createViesSimulator } from './vies.js';

export interface SimulatorServerOptions {
  /** Seed of the error-rate PRNGs (default 1). */
  seed?: number;
  /** Latency added to every registry answer, milliseconds. */
  latencyMs?: number;
  now?: () => Date;
  /** Restrict the HMRC token endpoint to these credentials (default: any non-empty pair). */
  hmrc?: { clientId?: string; clientSecret?: string; tokenTtlSeconds?: number };
}

export interface SimulatorUrls {
  VIES_URL: string;
  VIES_SOAP_URL: string;
  HMRC_URL: string;
  BFS_URL: string;
  BRREG_URL: string;
  EVATR_URL: string;
  EOS_URL: string;
  OPENVAT_TEDB_URL: string;
  PL_WHITELIST_URL: string;
  CZ_ADIS_URL: string;
  RO_ANAF_URL: string;
  FI_PRH_URL: string;
  SK_OPENDATA_URL: string;
  SI_FURS_URL: string;
  LV_VID_URL: string;
}

export interface SimulatorServer {
  server: Server;
  /** `base` is `http://host:port`; `urls` are where `createSimulatorServer` mounts each module. */
  listen(port: number, host?: string): Promise<{ port: number; base: string; urls: SimulatorUrls }>;
  close(): Promise<void>;
  /** By name: `vies`, `hmrc`, `hmrcEori`, `bfs`, `brreg`, `evatr`, `eos`, `tedb`. */
  modules: Record<string, SimulatorModule>;
  /** Same as `POST /_control`. */
  control(command: Record<string, unknown>): Record<string, unknown>;
  stats(): Record<string, unknown>;
}

const MAX_BODY = 1024 * 1024;

export function createSimulatorServer(options: SimulatorServerOptions = {}): SimulatorServer {
  const common = {
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  };
  return serveSimulators({
    vies: createViesSimulator(common),
    hmrc: createHmrcSimulator({ ...common, ...options.hmrc }),
    hmrcEori: createHmrcEoriSimulator(common),
    eos: createEosSimulator(common),
    bfs: createBfsSimulator(common),
    brreg: createBrregSimulator(common),
    tedb: createTedbSimulator(common),
    evatr: createEvatrSimulator({
      ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
      ...(options.now ? { now: options.now } : {}),
    }),
    peppolSmp: createPeppolSmpSimulator(common),
    peppolSml: createPeppolSmlSimulator(),
    pl: createPlWhitelistSimulator(common),
    cz: createCzAdisSimulator(common),
    ro: createRoAnafSimulator(common),
    fi: createFiPrhSimulator(common),
    sk: createSkFinancnaSpravaSimulator(common),
    si: createSiFursSimulator(common),
    lv: createLvVidSimulator(common),
  });
}

/**
 * The one HTTP scaffold of the simulators: a node:http server that reads each request body (up to
 * 1 MiB, 413 beyond), hands it to the module whose prefix the path starts with (longest first),
 * answers `/_control` and `/_stats`, listens on the given host and port, and closes with its
 * connections. `createSimulatorServer` mounts every module; tests mount one.
 */
export function serveSimulators(modules: Record<string, SimulatorModule>): SimulatorServer {
  const mounted = Object.values(modules).sort((a, b) => b.prefix.length - a.prefix.length);

  function control(command: Record<string, unknown>): Record<string, unknown> {
    const names = Object.keys(modules);
    const targeted = Object.keys(command).some((key) => key === 'all' || names.includes(key));
    const result: Record<string, unknown> = {};
    for (const [name, module] of Object.entries(modules)) {
      if (!module.control) continue;
      const all = command.all;
      const own = command[name];
      if (!targeted) {
        result[name] = module.control(command);
        continue;
      }
      if (all && typeof all === 'object' && !Array.isArray(all))
        module.control(all as Record<string, unknown>);
      result[name] =
        own && typeof own === 'object' && !Array.isArray(own)
          ? module.control(own as Record<string, unknown>)
          : module.control({});
    }
    return result;
  }

  function stats(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    for (const [name, module] of Object.entries(modules)) if (module.stats) result[name] = module.stats();
    return result;
  }

  async function route(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const path = req.url ?? '/';
    const pathname = path.split('?')[0] ?? '/';
    if (pathname === '/_control' && req.method === 'POST') {
      let command: unknown;
      try {
        command = JSON.parse(body.toString('utf8') || '{}');
      } catch {
        return sendJson(res, 400, { error: 'the control command must be a JSON object' });
      }
      if (typeof command !== 'object' || command === null || Array.isArray(command)) {
        return sendJson(res, 400, { error: 'the control command must be a JSON object' });
      }
      return sendJson(res, 200, control(command as Record<string, unknown>));
    }
    if (pathname === '/_stats' && req.method === 'GET') return sendJson(res, 200, stats());
    for (const module of mounted) {
      if (pathname === module.prefix || pathname.startsWith(`${module.prefix}/`)) {
        const rest = path.slice(module.prefix.length) || '/';
        return module.handle(req, res, rest.startsWith('/') ? rest : `/${rest}`, body);
      }
    }
    if (pathname === '/' && req.method === 'GET') {
      return sendJson(res, 200, { simulators: Object.keys(modules), control: '/_control', stats: '/_stats' });
    }
    sendJson(res, 404, { error: 'not found', path: pathname });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) return sendJson(res, 413, { error: 'payload too large' });
      Promise.resolve(route(req, res, Buffer.concat(chunks))).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: String(error) });
        else res.destroy();
      });
    });
    req.on('error', () => res.destroy());
  });

  return {
    server,
    modules,
    control,
    stats,
    listen(port: number, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shown =
            host === '0.0.0.0'
              ? '127.0.0.1'
              : host === '::'
                ? '[::1]'
                : host.includes(':')
                  ? `[${host}]`
                  : host;
          const base = `http://${shown}:${address.port}`;
          resolve({
            port: address.port,
            base,
            urls: {
              VIES_URL: `${base}/vies/rest-api`,
              VIES_SOAP_URL: `${base}/vies/services/checkVatService`,
              HMRC_URL: `${base}/hmrc`,
              BFS_URL: `${base}/bfs/V5.0/PublicServices.svc`,
              BRREG_URL: `${base}/brreg`,
              EVATR_URL: `${base}/evatr/app`,
              EOS_URL: `${base}/eos/validation/services/validation`,
              OPENVAT_TEDB_URL: `${base}/tedb/ws/`,
              PL_WHITELIST_URL: `${base}/pl-whitelist`,
              CZ_ADIS_URL: `${base}/cz-adis/dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP`,
              RO_ANAF_URL: `${base}/ro-anaf`,
              FI_PRH_URL: `${base}/fi-prh`,
              SK_OPENDATA_URL: `${base}/sk-financnasprava`,
              SI_FURS_URL: `${base}/si-furs`,
              LV_VID_URL: `${base}/lv-vid`,
            },
          });
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
