/**
 * VIES `GET /check-status`: per-member-state availability (`Available | Unavailable | Monitoring
 * Disabled`) and the service's own `vow.available`. Any failure answers `null`.
 */
import { type FetchFn, isRecord, joinUrl, parseJson, transportFor } from './http.js';
import type { RegistryStatus, RegistryStatusReader } from './port.js';
import { viesCountry } from './vies-common.js';

export interface ViesStatusOptions {
  /** REST base, e.g. `https://ec.europa.eu/taxation_customs/vies/rest-api`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: FetchFn;
}

export function createViesStatusReader(options: ViesStatusOptions): RegistryStatusReader {
  const send = transportFor(options.fetch);
  const url = joinUrl(options.baseUrl, '/check-status');
  return {
    async checkStatus(signal?: AbortSignal): Promise<Record<string, RegistryStatus> | null> {
      const outcome = await send({
        url,
        method: 'GET',
        headers: { accept: 'application/json' },
        timeoutMs: options.timeoutMs,
        ...(signal ? { signal } : {}),
      });
      if (!outcome.ok || outcome.status < 200 || outcome.status >= 300) return null;
      const json = parseJson(outcome.body);
      if (!isRecord(json) || !Array.isArray(json.countries)) return null;
      // When VIES itself reports unavailable, no member state can be reached through it.
      const vowDown = isRecord(json.vow) && json.vow.available === false;
      const result: Record<string, RegistryStatus> = {};
      for (const entry of json.countries) {
        if (
          !isRecord(entry) ||
          typeof entry.countryCode !== 'string' ||
          typeof entry.availability !== 'string'
        ) {
          continue;
        }
        result[viesCountry(entry.countryCode)] = {
          available: !vowDown && entry.availability.trim().toLowerCase() === 'available',
          upstream: entry.availability,
        };
      }
      return Object.keys(result).length > 0 ? result : null;
    },
  };
}
