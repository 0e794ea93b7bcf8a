import { createSimulatorServer } from '../simulators/server.js';

/** `openvat simulate`: serves the registry simulators until interrupted. */
export async function runSimulator(options: { port: number; host: string; latency: string }): Promise<void> {
  const simulator = createSimulatorServer({ latencyMs: Number(options.latency) || 0 });
  const { urls } = await simulator.listen(options.port, options.host);
  console.log('Registry simulators listening. Point openvat at them with:');
  // The HMRC simulator's token endpoint takes any non-empty pair; without credentials openvat
  // answers GB look-ups with 503, so they are printed with the URLs.
  // Likewise the Slovak register's key (any non-empty one), and the small files of the file
  // registers, which a real file's row minimum would refuse.
  const variables: Record<string, string> = {
    ...urls,
    HMRC_CLIENT_ID: 'dev',
    HMRC_CLIENT_SECRET: 'dev',
    SK_OPENDATA_KEY: 'dev',
    OPENVAT_REGISTERS_MIN_ROWS: '1',
  };
  for (const [name, value] of Object.entries(variables)) console.log(`  export ${name}=${value}`);
  const stop = () => {
    simulator.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
