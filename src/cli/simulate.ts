import { createSimulatorServer } from '../simulators/server.js';

/** `openvat simulate`: serves the registry simulators until interrupted. */
export async function runSimulator(options: { port: number; host: string; latency: string }): Promise<void> {
  const simulator = createSimulatorServer({ latencyMs: Number(options.latency) || 0 });
  const { urls } = await simulator.listen(options.port, options.host);
  console.log('Registry simulators listening. Point openvat at them with:');
  for (const [name, value] of Object.entries(urls)) console.log(`  export ${name}=${value}`);
  const stop = () => {
    simulator.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
