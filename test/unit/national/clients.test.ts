import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryFileIndex } from '../../../src/registries/national-file.js';
import { createNationalClients } from '../../../src/registries/national-index.js';
import { NATIONAL_COUNTRY } from '../../../src/registries/national-port.js';

describe('the national register clients built from configuration', () => {
  it('builds one client per configured register, found by its VAT prefix', () => {
    const clients = createNationalClients({
      pl: { baseUrl: 'http://127.0.0.1:1', timeoutMs: 100 },
      fi: { baseUrl: 'http://127.0.0.1:1', timeoutMs: 100 },
    });
    assert.deepEqual(Object.keys(clients.bySource).sort(), ['fi_prh', 'pl_whitelist']);
    assert.equal(clients.forCountry('pl')?.source, 'pl_whitelist');
    assert.equal(clients.forCountry('FI')?.source, 'fi_prh');
    assert.equal(clients.forCountry('CZ'), null);
    const seen: string[] = [];
    for (const client of Object.values(
      createNationalClients({
        pl: { baseUrl: 'http://x', timeoutMs: 1 },
        cz: { url: 'http://x', timeoutMs: 1 },
        ro: { baseUrl: 'http://x', timeoutMs: 1 },
        fi: { baseUrl: 'http://x', timeoutMs: 1 },
        sk: { baseUrl: 'http://x', apiKey: 'k', timeoutMs: 1 },
        si: { index: createMemoryFileIndex() },
        lv: { index: createMemoryFileIndex() },
      }).bySource,
    )) {
      seen.push(client.source);
      assert.equal(client.country, NATIONAL_COUNTRY[client.source]);
      assert.ok(client.limits.numbersPerRequest >= 1);
      assert.ok((client.limits.requestsPerLookup ?? 1) >= 1);
      assert.equal(
        typeof client.lookupMany === 'function',
        client.limits.numbersPerRequest > 1,
        client.source,
      );
    }
    assert.deepEqual(seen.sort(), Object.keys(NATIONAL_COUNTRY).sort(), 'all seven registers');
  });
});
