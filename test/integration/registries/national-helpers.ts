import assert from 'node:assert/strict';
import type {
  NationalAnswer,
  NationalResult,
  NationalUnavailable,
} from '../../../src/registries/national-port.js';
import { type SimulatorServer, serveSimulators } from '../../../src/simulators/server.js';
import type { SimulatorModule } from '../../../src/simulators/types.js';

export function asAnswer(result: NationalResult | undefined): NationalAnswer {
  assert.equal(result?.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as NationalAnswer;
}

export function asUnavailable(result: NationalResult | undefined): NationalUnavailable {
  assert.equal(result?.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as NationalUnavailable;
}

/** One simulator module on its own server on 127.0.0.1 (port 0); `base` ends with the module's prefix. */
export async function startNational(
  name: string,
  module: SimulatorModule,
): Promise<{ sim: SimulatorServer; base: string; close: () => Promise<void> }> {
  const sim = serveSimulators({ [name]: module });
  const { base } = await sim.listen(0, '127.0.0.1');
  return { sim, base: `${base}${module.prefix}`, close: () => sim.close() };
}

/** A body larger than the registry bodies' cap (1 MiB). */
export const OVERSIZED = `{"padding":"${'x'.repeat(1024 * 1024 + 16)}"}`;
