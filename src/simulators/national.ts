/**
 * What the national register simulators share: the company a number stands for (the same one the
 * VIES simulator answers, so a register consulted while VIES is down agrees with it), the split of
 * the unregistered numbers between a register's kinds of "not registered", and the controls every
 * simulator takes (latency, outages, error rates, hangs, rate windows, concurrency).
 */
import { createControls, fnv1a32, type RegistrySimulatorOptions, simulatedCompany } from './controls.js';

export interface NationalCompany {
  /** Registered in the register, by the shared rule (`h % 4 !== 0`), unless a documented number says otherwise. */
  registered: boolean;
  hash: number;
  name: string;
  street: string;
  /** Five digits drawn from the hash (registers format them: `01-234`, `01234`). */
  postcode: string;
  town: string;
}

/** The simulated company behind a number: `simulatedCompany` with a five-digit postcode. */
export function nationalCompany(prefix: string, national: string): NationalCompany {
  const company = simulatedCompany(prefix, national);
  return { ...company, postcode: company.postcode.padStart(5, '0') };
}

/** Which of `kinds` an unregistered number is (by `(h >>> 8) % kinds.length`, as the Brønnøysund simulator does). */
export function unregisteredKind<T>(prefix: string, national: string, kinds: readonly T[]): T {
  const hash = fnv1a32(`${prefix.toUpperCase()}:${national.toUpperCase()}`);
  return kinds[(hash >>> 8) % kinds.length] as T;
}

/** The controls of a national simulator, on the simulator's clock. */
export function nationalControls(options: RegistrySimulatorOptions) {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });
  return { controls, now };
}

/** A short deterministic token (base 36) from a text and a counter, e.g. for request identifiers. */
export function token(text: string, counter: number, length: number): string {
  let out = '';
  let seed = fnv1a32(`${text}:${counter}`);
  while (out.length < length) {
    out += (seed % 36).toString(36);
    seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) >>> 0;
  }
  return out;
}
