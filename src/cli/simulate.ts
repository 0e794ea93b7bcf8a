import { SML_ZONES } from '../registries/peppol-sml.js';
import type { PeppolSmlSimulator } from '../simulators/peppol-sml.js';
import { createSimulatorServer } from '../simulators/server.js';

/** `openvat simulate`: serves the registry simulators until interrupted. */
export async function runSimulator(options: {
  port: number;
  host: string;
  latency: string;
  dnsPort: number;
}): Promise<void> {
  const simulator = createSimulatorServer({ latencyMs: Number(options.latency) || 0 });
  const { base, urls } = await simulator.listen(options.port, options.host);
  // The Peppol SML is a DNS server (UDP and TCP) on a port of its own; its records point at the
  // simulated SMPs on the HTTP port.
  const sml = simulator.modules.peppolSml as PeppolSmlSimulator;
  sml.control({ smpBase: `${base}/peppol-smp` });
  const dns = await sml.listen(options.dnsPort, options.host);
  console.log('Registry simulators listening. Point openvat at them with:');
  // The HMRC simulator's token endpoint takes any non-empty pair; without credentials openvat
  // answers GB look-ups with 503, so they are printed with the URLs.
  const dnsHost = dns.host.includes(':') ? `[${dns.host}]` : dns.host === '0.0.0.0' ? '127.0.0.1' : dns.host;
  // Likewise the Slovak register's key (any non-empty one), and the small files of the file
  // registers, which a real file's row minimum would refuse.
  const variables: Record<string, string> = {
    ...urls,
    HMRC_CLIENT_ID: 'dev',
    HMRC_CLIENT_SECRET: 'dev',
    PEPPOL_SML_ZONE: SML_ZONES.peppolProduction,
    PEPPOL_DNS_SERVERS: `${dnsHost}:${dns.port}`,
    // The simulated SMPs are served over plain http on this machine.
    PEPPOL_ALLOW_PRIVATE_SMP: 'true',
    SK_OPENDATA_KEY: 'dev',
    OPENVAT_REGISTERS_MIN_ROWS: '1',
  };
  for (const [name, value] of Object.entries(variables)) console.log(`  export ${name}=${value}`);
  const stop = () => {
    Promise.all([simulator.close(), sml.close()]).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
