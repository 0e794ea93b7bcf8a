import type { RegistryClient, RegistryLookup, RegistryResult } from '../../src/registries/port.js';

export interface FakeEntry {
  valid: boolean;
  name: string | null;
  address: string | null;
}

/**
 * A registry whose answers a test sets per number (`down` = unavailable), which counts its calls and
 * can hold them until released (to see who is waiting for a slot). A held call whose caller aborts
 * it ends at once, as a real client's would, and is listed in `aborted`.
 */
export function createFakeRegistry(countries: readonly string[] = ['DE', 'AT', 'FR', 'NL']) {
  const answers = new Map<string, FakeEntry | 'down'>();
  const calls: string[] = [];
  const aborted: string[] = [];
  let holding = false;
  const held: Array<() => void> = [];
  const client: RegistryClient = {
    source: 'vies',
    countries,
    async lookup(request: RegistryLookup): Promise<RegistryResult> {
      const number = `${request.vat.country}${request.vat.national}`;
      calls.push(number);
      if (holding) {
        const signal = request.signal;
        const outcome = await new Promise<'released' | 'aborted'>((resolve) => {
          if (signal?.aborted) return resolve('aborted');
          signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
          held.push(() => resolve('released'));
        });
        if (outcome === 'aborted') {
          aborted.push(number);
          return {
            kind: 'unavailable',
            source: 'vies',
            reason: 'timeout',
            retryable: true,
            message: `The ${request.vat.country} registry call was abandoned.`,
          };
        }
      }
      const entry = answers.get(number) ?? {
        valid: true,
        name: `Company ${number}`,
        address: `Street 1, ${number}`,
      };
      if (entry === 'down') {
        return {
          kind: 'unavailable',
          source: 'vies',
          reason: 'down',
          retryable: true,
          message: `The ${request.vat.country} registry is unavailable (MS_UNAVAILABLE).`,
          upstreamCode: 'MS_UNAVAILABLE',
        };
      }
      return { kind: 'answer', source: 'vies', ...entry, consultationNumber: null, checkedAt: new Date() };
    },
  };
  return {
    calls,
    /** Numbers whose held call was aborted by its caller. */
    aborted,
    set(number: string, entry: FakeEntry | 'down') {
      answers.set(number, entry);
    },
    hold() {
      holding = true;
    },
    /** Lets every held call answer, and later ones answer at once. */
    releaseAll() {
      holding = false;
      for (const go of held.splice(0)) go();
    },
    heldCount: () => held.length,
    ports: {
      clientForPrefix: (prefix: string) => (countries.includes(prefix) ? client : null),
      viesStatus: { checkStatus: async () => null },
    },
  };
}
