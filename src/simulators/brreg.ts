/**
 * Brønnøysund Enhetsregisteret simulator: `GET /enhetsregisteret/api/enheter/{orgnr}` with the
 * real JSON field names (`organisasjonsnummer`, `navn`, `organisasjonsform`,
 * `registrertIMvaregisteret`, `forretningsadresse{adresse[],postnummer,poststed,kommune,land,landkode}`, …).
 *
 * Rule on `h = fnv1a32("NO:<orgnr>")`: registered in the VAT register unless `h % 4 === 0`; of
 * those, `(h >>> 8) % 3` picks 0 → 404 (no such unit), 1 → 410 (deleted unit), 2 → 200 with
 * `registrertIMvaregisteret: false`. Not 9 digits → 400. Errors carry the register's Spring-style
 * body `{timestamp, status, error, message, path}` (shape unverified).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  sendJson,
  simulatedCompany,
} from './controls.js';

export type BrregSimulatorOptions = RegistrySimulatorOptions;

export type BrregSimulator = ControlledSimulator;

export type BrregOutcome = 'vat_registered' | 'not_vat_registered' | 'not_found' | 'deleted';

/** What the simulator answers for an organisation number (controls aside). */
export function brregOutcome(orgnr: string): BrregOutcome {
  const company = simulatedCompany('NO', orgnr);
  if (company.registered) return 'vat_registered';
  return (['not_found', 'deleted', 'not_vat_registered'] as const)[(company.hash >>> 8) % 3] ?? 'not_found';
}

const CODES: Record<string, [number, string]> = {
  INTERNAL_SERVER_ERROR: [500, 'Internal Server Error'],
  SERVICE_UNAVAILABLE: [503, 'Service Unavailable'],
  TOO_MANY_REQUESTS: [429, 'Too Many Requests'],
  GATEWAY_TIMEOUT: [504, 'Gateway Timeout'],
};

export function createBrregSimulator(options: BrregSimulatorOptions = {}): BrregSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });

  const springError = (res: ServerResponse, status: number, error: string, message: string, path: string) =>
    sendJson(res, status, { timestamp: now().toISOString(), status, error, message, path });

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    const match = /^\/enhetsregisteret\/api\/enheter\/([^/]+)$/.exec(route);
    if (req.method !== 'GET' || !match) {
      return springError(res, 404, 'Not Found', 'No static resource', route);
    }
    const orgnr = decodeURIComponent(match[1] ?? '');
    const fullPath = `/enhetsregisteret/api/enheter/${orgnr}`;
    const admission = controls.admit('NO');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError('NO', 'HTTP_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') {
      controls.recordError('NO', 'TOO_MANY_REQUESTS');
      return springError(res, 429, 'Too Many Requests', 'For mange forespørsler', fullPath);
    }
    try {
      await controls.delay('NO');
      if (controls.isDown('NO')) {
        controls.recordError('NO', 'SERVICE_UNAVAILABLE');
        return springError(res, 503, 'Service Unavailable', 'Tjenesten er utilgjengelig', fullPath);
      }
      const injected = controls.injectedError('NO');
      if (injected) {
        controls.recordError('NO', injected);
        const [status, error] = CODES[injected] ?? [500, 'Internal Server Error'];
        return springError(res, status, error, injected, fullPath);
      }
      if (!/^\d{9}$/.test(orgnr)) {
        return springError(res, 400, 'Bad Request', `Ugyldig organisasjonsnummer: ${orgnr}`, fullPath);
      }
      const outcome = brregOutcome(orgnr);
      if (outcome === 'not_found') return springError(res, 404, 'Not Found', 'Enheten finnes ikke', fullPath);
      if (outcome === 'deleted') {
        return sendJson(res, 410, {
          organisasjonsnummer: orgnr,
          slettedato: '2020-01-01',
          _links: { self: { href: `https://data.brreg.no${fullPath}` } },
        });
      }
      const company = simulatedCompany('NO', orgnr);
      const address = {
        land: 'Norge',
        landkode: 'NO',
        postnummer: company.postcode.padStart(4, '0').slice(0, 4),
        poststed: company.town,
        adresse: [company.street],
        kommune: company.town,
        kommunenummer: '0301',
      };
      const vat = outcome === 'vat_registered';
      sendJson(res, 200, {
        organisasjonsnummer: orgnr,
        navn: company.name,
        organisasjonsform: { kode: 'AS', beskrivelse: 'Aksjeselskap' },
        registreringsdatoEnhetsregisteret: '2005-03-01',
        registrertIMvaregisteret: vat,
        ...(vat ? { registreringsdatoMerverdiavgiftsregisteret: '2005-04-01' } : {}),
        naeringskode1: { kode: '62.010', beskrivelse: 'Programmeringstjenester' },
        antallAnsatte: (company.hash % 250) + 1,
        forretningsadresse: address,
        registrertIForetaksregisteret: true,
        registrertIStiftelsesregisteret: false,
        registrertIFrivillighetsregisteret: false,
        konkurs: false,
        underAvvikling: false,
        underTvangsavviklingEllerTvangsopplosning: false,
        maalform: 'Bokmål',
        _links: { self: { href: `https://data.brreg.no${fullPath}` } },
      });
    } finally {
      admission.release();
    }
  }

  return {
    prefix: '/brreg',
    handle,
    control: (command) => ({ ...controls.apply(command) }),
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}
