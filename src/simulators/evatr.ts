import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { berlinWallTime } from '../lib/dates.js';
import { EVATR_STATUSES, evatrNumberStatus } from '../registries/evatr.js';
import type { SimulatorModule } from './types.js';

/**
 * A faithful local stand-in for the BZSt eVatR REST API (mounted under `/evatr`, so the base URL a
 * client uses is `http://host:port/evatr/app`).
 *
 * Endpoints (also served without the `/app` segment, as the real host appears to):
 *   POST /app/v1/abfrage                     confirmation request (simple or qualified)
 *   GET  /app/v1/info/statusmeldungen        the official status list
 *   GET  /app/v1/info/eu_mitgliedstaaten     member states and VIES availability
 *
 * Like the real service, the JSON body always carries the `evatr-XXXX` status; the HTTP code is the
 * `httpcode` of the official list (so 2002/2006 come with 200 and 0003 with 400). Timestamps carry
 * nanoseconds and the Berlin offset. Every status of the official list is reachable; the rules are
 * applied in this order (numbers compared trimmed, upper-cased, without inner spaces):
 *
 *  1. body not a JSON object, or a field not a string               → evatr-0007
 *  2. `anfragendeUstid` or `angefragteUstid` missing/empty           → evatr-0002
 *  3. official test pair DE123456789 + ATU12345678                   → checked against the
 *     "Musterhaus GmbH & Co KG" record (evatr-0000, all A when the documented data is sent)
 *  4. requested number starts with DE                                → evatr-0006
 *  5. requester not DE + 9 digits with a valid ISO 7064 MOD 11,10 check digit → evatr-0004
 *  6. requester's digits start with 999 (check digit valid)          → evatr-2005
 *  7. requested number not two letters + 2–12 of [A-Z0-9+*] with a digit → evatr-0005
 *  8. country prefix not an EU member state prefix (EL, not GR; XI)  → evatr-2003
 *  9. national part does not fit the country's scheme                → evatr-0012
 * 10. country set unavailable through `control`                      → evatr-0013
 * 11. national part ends in 9999NNNN and evatr-NNNN is a listed code → that code
 *     (e.g. ATU99992001 → evatr-2001; ATU99990000 behaves like any valid number)
 * 12. exactly one of `firmenname`/`ort` sent                         → evatr-0003
 * 13. neither sent (simple request)                                  → evatr-0000 without erg* fields
 * 14. qualified requests by this requester beyond `qualifiedSessionLimit` → evatr-0008
 * 15. qualified request                                              → evatr-0000 with ergFirmenname,
 *     ergStrasse, ergPlz, ergOrt: A = equal to the record (case, accents kept, whitespace collapsed),
 *     B = different, C = not sent, D = the record lacks the field.
 *
 * 2002 sends `gueltigAb` = the simulated day + 30 days; 2006 sends `gueltigAb` = 1 January five
 * years back and `gueltigBis` = 31 December of last year, as ISO dates or (`dateFormat: 'german'`)
 * as `DD.MM.YYYY`. 2008 is sent without erg* fields.
 */

export interface EvatrSimulatorOptions {
  /** Delay before every answer. */
  latencyMs?: number;
  /** Answer every request with a 503 HTML maintenance page. */
  maintenance?: boolean;
  /** Format of `gueltigAb`/`gueltigBis`: ISO `2025-01-31` (default) or German `31.01.2025`. */
  dateFormat?: 'iso' | 'german';
  /** Qualified requests allowed per requester number before evatr-0008; null = no limit (default). */
  qualifiedSessionLimit?: number | null;
  /** Country prefixes whose VIES node is down: `verfuegbar: false`, requests answer evatr-0013. */
  unavailableCountries?: string[];
  /** Clock of the simulated service. */
  now?: () => Date;
}

interface RegistryRecord {
  name: string | null;
  street: string | null;
  postcode: string | null;
  town: string | null;
}

/** The simulated foreign registries. Any other well-formed number is valid with a generic record. */
export const EVATR_SIMULATED_RECORDS: Readonly<Record<string, RegistryRecord>> = {
  ATU12345678: {
    name: 'Musterhaus GmbH & Co KG',
    street: 'Musterstrasse 22',
    postcode: '12345',
    town: 'musterort',
  },
  HU12345676: { name: 'Müller & Söhne Kft.', street: 'Fő utca 1.', postcode: '1011', town: 'Budapest' },
  PL5260001246: {
    name: 'Łódzkie Zakłady Sp. z o.o.',
    street: 'ul. Piotrkowska 104',
    postcode: '90-926',
    town: 'Łódź',
  },
  /** A member state that does not communicate street and postcode: those fields answer D. */
  ESB12345674: { name: 'Ejemplo Sociedad Limitada', street: null, postcode: null, town: 'Madrid' },
};

function genericRecord(vat: string): RegistryRecord {
  return { name: `Company ${vat}`, street: 'Main Street 1', postcode: '1000', town: 'Capital' };
}

const TEST_REQUESTER = 'DE123456789';
const TEST_TARGET = 'ATU12345678';

/** Member states as `eu_mitgliedstaaten` lists them (German names), with the prefix eVatR accepts. */
const MEMBER_STATES: readonly { alpha2: string; name: string }[] = [
  { alpha2: 'AT', name: 'Österreich' },
  { alpha2: 'BE', name: 'Belgien' },
  { alpha2: 'BG', name: 'Bulgarien' },
  { alpha2: 'CY', name: 'Zypern' },
  { alpha2: 'CZ', name: 'Tschechien' },
  { alpha2: 'DK', name: 'Dänemark' },
  { alpha2: 'EE', name: 'Estland' },
  { alpha2: 'EL', name: 'Griechenland' },
  { alpha2: 'ES', name: 'Spanien' },
  { alpha2: 'FI', name: 'Finnland' },
  { alpha2: 'FR', name: 'Frankreich' },
  { alpha2: 'HR', name: 'Kroatien' },
  { alpha2: 'HU', name: 'Ungarn' },
  { alpha2: 'IE', name: 'Irland' },
  { alpha2: 'IT', name: 'Italien' },
  { alpha2: 'LT', name: 'Litauen' },
  { alpha2: 'LU', name: 'Luxemburg' },
  { alpha2: 'LV', name: 'Lettland' },
  { alpha2: 'MT', name: 'Malta' },
  { alpha2: 'NL', name: 'Niederlande' },
  { alpha2: 'PL', name: 'Polen' },
  { alpha2: 'PT', name: 'Portugal' },
  { alpha2: 'RO', name: 'Rumänien' },
  { alpha2: 'SE', name: 'Schweden' },
  { alpha2: 'SI', name: 'Slowenien' },
  { alpha2: 'SK', name: 'Slowakei' },
  { alpha2: 'XI', name: 'Nordirland' },
];

const MAINTENANCE_PAGE = `<!DOCTYPE html>
<html lang="de">
<head><meta charset="utf-8"><title>503 Service Unavailable</title></head>
<body>
<h1>Wartungsarbeiten</h1>
<p>Der Dienst ist wegen Wartungsarbeiten vorübergehend nicht erreichbar. Bitte versuchen Sie es später noch einmal.</p>
</body>
</html>
`;

/** ISO 7064 MOD 11,10 check of a German VAT number (`DE` + 9 digits). */
export function isValidGermanVatNumber(vat: string): boolean {
  const m = /^DE(\d{9})$/.exec(vat);
  if (!m?.[1]) return false;
  const digits = m[1];
  let p = 10;
  for (let i = 0; i < 8; i++) {
    let s = (Number(digits[i]) + p) % 10;
    if (s === 0) s = 10;
    p = (2 * s) % 11;
  }
  let check = 11 - p;
  if (check === 10) check = 0;
  return check === Number(digits[8]);
}

/** `DE` + the 8 given digits + the matching check digit. */
export function germanVatNumberWithCheckDigit(eightDigits: string): string {
  for (let d = 0; d <= 9; d++) {
    const candidate = `DE${eightDigits}${d}`;
    if (isValidGermanVatNumber(candidate)) return candidate;
  }
  throw new Error(`no check digit for ${eightDigits}`);
}

function normaliseForMatch(value: string): string {
  return value.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

function normaliseNumber(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `2025-09-22T18:33:04.392335063+02:00`: Berlin wall time, nanoseconds, Berlin offset. */
function berlinTimestamp(instant: Date, subMillisecond: number): string {
  const { year, month, day, hour, minute, second, offsetMinutes } = berlinWallTime(instant);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const ms = instant.getUTCMilliseconds();
  return (
    `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}` +
    `.${pad(ms, 3)}${pad(subMillisecond, 6)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** Calendar day in Berlin as [year, month, day]. */
function berlinDay(instant: Date): [number, number, number] {
  const { year, month, day } = berlinWallTime(instant);
  return [year, month, day];
}

interface Outcome {
  code: string;
  fields?: Record<string, string>;
}

/** The eVatR simulator: a `SimulatorModule` whose `control` and `stats` are always present. */
export interface EvatrSimulator extends SimulatorModule {
  control(command: Record<string, unknown>): Record<string, unknown>;
  stats(): Record<string, unknown>;
}

export function createEvatrSimulator(options: EvatrSimulatorOptions = {}): EvatrSimulator {
  const now = options.now ?? (() => new Date());
  const settings = {
    latencyMs: Math.max(0, options.latencyMs ?? 0),
    maintenance: options.maintenance ?? false,
    dateFormat: options.dateFormat ?? ('iso' as 'iso' | 'german'),
    qualifiedSessionLimit: options.qualifiedSessionLimit ?? (null as number | null),
    unavailableCountries: new Set((options.unavailableCountries ?? []).map((c) => c.toUpperCase())),
  };
  /** `reset`: no latency (even if one was given at start), no maintenance, no limits, ISO dates. */
  function resetSettings(): void {
    settings.latencyMs = 0;
    settings.maintenance = false;
    settings.dateFormat = 'iso';
    settings.qualifiedSessionLimit = null;
    settings.unavailableCountries = new Set();
  }
  const counters = {
    calls: 0,
    abfrage: 0,
    info: 0,
    maintenanceRejections: 0,
    notFound: 0,
    qualified: 0,
    simple: 0,
  };
  const byStatus: Record<string, number> = {};
  const qualifiedByRequester = new Map<string, number>();

  function formatDate(y: number, m: number, d: number): string {
    return settings.dateFormat === 'german'
      ? `${pad(d)}.${pad(m)}.${pad(y, 4)}`
      : `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
  }

  function validityFields(code: string, instant: Date): Record<string, string> {
    const [year] = berlinDay(instant);
    if (code === 'evatr-2002') {
      const [y, m, d] = berlinDay(new Date(instant.getTime() + 30 * 86_400_000));
      return { gueltigAb: formatDate(y, m, d) };
    }
    if (code === 'evatr-2006') {
      return { gueltigAb: formatDate(year - 5, 1, 1), gueltigBis: formatDate(year - 1, 12, 31) };
    }
    return {};
  }

  function qualify(record: RegistryRecord, body: Record<string, string>): Record<string, string> {
    const compare = (sent: string | undefined, held: string | null): string => {
      if (sent === undefined || sent.trim() === '') return 'C';
      if (held === null) return 'D';
      return normaliseForMatch(sent) === normaliseForMatch(held) ? 'A' : 'B';
    };
    return {
      ergFirmenname: compare(body.firmenname, record.name),
      ergStrasse: compare(body.strasse, record.street),
      ergPlz: compare(body.plz, record.postcode),
      ergOrt: compare(body.ort, record.town),
    };
  }

  function decide(bodyText: string, instant: Date): Outcome {
    let parsed: unknown;
    try {
      parsed = JSON.parse(bodyText);
    } catch {
      return { code: 'evatr-0007' };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { code: 'evatr-0007' };
    const body: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'string') return { code: 'evatr-0007' };
      body[key] = value;
    }
    const requester = normaliseNumber(body.anfragendeUstid ?? '');
    const target = normaliseNumber(body.angefragteUstid ?? '');
    if (requester === '' || target === '') return { code: 'evatr-0002' };

    const hasName = (body.firmenname ?? '').trim() !== '';
    const hasTown = (body.ort ?? '').trim() !== '';

    if (requester === TEST_REQUESTER && target === TEST_TARGET) {
      return answerFor(EVATR_SIMULATED_RECORDS[TEST_TARGET] ?? genericRecord(target), requester, body);
    }
    if (target.startsWith('DE')) return { code: 'evatr-0006' };
    if (!isValidGermanVatNumber(requester)) return { code: 'evatr-0004' };
    if (requester.startsWith('DE999')) return { code: 'evatr-2005' };
    const numberStatus = evatrNumberStatus(target);
    if (numberStatus !== null) return { code: numberStatus };
    const prefix = target.slice(0, 2);
    const national = target.slice(2);
    if (settings.unavailableCountries.has(prefix)) return { code: 'evatr-0013' };

    const magic = /9999(\d{4})$/.exec(national);
    const magicCode = magic ? `evatr-${magic[1]}` : null;
    if (magicCode !== null && magicCode !== 'evatr-0000' && Object.hasOwn(EVATR_STATUSES, magicCode)) {
      return { code: magicCode, fields: validityFields(magicCode, instant) };
    }
    if (hasName !== hasTown) return { code: 'evatr-0003' };
    return answerFor(EVATR_SIMULATED_RECORDS[target] ?? genericRecord(target), requester, body);

    function answerFor(record: RegistryRecord, who: string, sent: Record<string, string>): Outcome {
      if (hasName !== hasTown) return { code: 'evatr-0003' };
      if (!hasName) {
        counters.simple++;
        return { code: 'evatr-0000' };
      }
      const used = (qualifiedByRequester.get(who) ?? 0) + 1;
      if (settings.qualifiedSessionLimit !== null && used > settings.qualifiedSessionLimit) {
        return { code: 'evatr-0008' };
      }
      qualifiedByRequester.set(who, used);
      counters.qualified++;
      return { code: 'evatr-0000', fields: qualify(record, sent) };
    }
  }

  function sendJson(res: ServerResponse, httpStatus: number, payload: unknown): void {
    const text = JSON.stringify(payload);
    res.writeHead(httpStatus, {
      'content-type': 'application/json; charset=UTF-8',
      'content-length': Buffer.byteLength(text),
      'access-control-allow-origin': '*',
      server: 'Apache',
      'set-cookie': `AL_BALANCE-S=${createHash('sha256').update(String(counters.calls)).digest('hex').slice(0, 32)}; Path=/; Secure; HttpOnly; SameSite=None`,
    });
    res.end(text);
  }

  function abfrage(res: ServerResponse, body: Buffer): void {
    counters.abfrage++;
    const instant = now();
    const outcome = decide(body.toString('utf8'), instant);
    byStatus[outcome.code] = (byStatus[outcome.code] ?? 0) + 1;
    const info = EVATR_STATUSES[outcome.code];
    const httpStatus = info?.httpStatus ?? 400;
    const id = createHash('sha256')
      .update(`${counters.abfrage}:${body.toString('hex')}`)
      .digest('hex')
      .slice(0, 16);
    const subMillisecond = (counters.abfrage * 7919 + 104_729) % 1_000_000;
    sendJson(res, httpStatus, {
      id,
      anfrageZeitpunkt: berlinTimestamp(instant, subMillisecond),
      status: outcome.code,
      ...outcome.fields,
    });
  }

  function statusList(): unknown[] {
    return Object.values(EVATR_STATUSES).map((s) => ({
      status: s.code,
      kategorie: s.kind,
      ...(s.httpStatus === null ? {} : { httpcode: s.httpStatus }),
      ...(s.field === null ? {} : { feld: s.field }),
      meldung: s.german,
    }));
  }

  function memberStates(): unknown[] {
    return MEMBER_STATES.map((s) => ({
      alpha2: s.alpha2,
      name: s.name,
      verfuegbar: !settings.unavailableCountries.has(s.alpha2),
    }));
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    counters.calls++;
    if (settings.latencyMs > 0) await sleep(settings.latencyMs);
    if (res.destroyed) return;
    if (settings.maintenance) {
      counters.maintenanceRejections++;
      res.writeHead(503, { 'content-type': 'text/html; charset=UTF-8', 'retry-after': '3600' });
      res.end(MAINTENANCE_PAGE);
      return;
    }
    const route = (path.split('?')[0] ?? '').replace(/^\/app(?=\/)/, '').replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (route === '/v1/abfrage') {
      if (method !== 'POST') return methodNotAllowed(res, 'POST');
      return abfrage(res, body);
    }
    if (route === '/v1/info/statusmeldungen' || route === '/v1/info/eu_mitgliedstaaten') {
      if (method !== 'GET') return methodNotAllowed(res, 'GET');
      counters.info++;
      return sendJson(res, 200, route.endsWith('statusmeldungen') ? statusList() : memberStates());
    }
    counters.notFound++;
    sendJson(res, 404, { status: 404, error: 'Not Found', path: route });
  }

  function methodNotAllowed(res: ServerResponse, allow: string): void {
    res.setHeader('allow', allow);
    sendJson(res, 405, { status: 405, error: 'Method Not Allowed' });
  }

  function currentSettings(): Record<string, unknown> {
    return {
      latencyMs: settings.latencyMs,
      maintenance: settings.maintenance,
      dateFormat: settings.dateFormat,
      qualifiedSessionLimit: settings.qualifiedSessionLimit,
      unavailableCountries: [...settings.unavailableCountries].sort(),
    };
  }

  /**
   * Commands: `latencyMs` (number ≥ 0), `maintenance` (boolean), `dateFormat` ('iso' | 'german'),
   * `qualifiedSessionLimit` (number or null), `unavailableCountries` (string[]),
   * `resetSessions: true` (forget the qualified-request counts), `reset: true` (all of these back to
   * their defaults, and the counters to zero; applied before the others of the same command). Other
   * keys are ignored.
   */
  function control(command: Record<string, unknown>): Record<string, unknown> {
    const { latencyMs, maintenance, dateFormat, qualifiedSessionLimit, unavailableCountries } = command;
    if (command.reset === true) {
      resetSettings();
      qualifiedByRequester.clear();
      for (const name of Object.keys(counters) as Array<keyof typeof counters>) counters[name] = 0;
      for (const code of Object.keys(byStatus)) delete byStatus[code];
    }
    if (typeof latencyMs === 'number' && Number.isFinite(latencyMs))
      settings.latencyMs = Math.max(0, latencyMs);
    if (typeof maintenance === 'boolean') settings.maintenance = maintenance;
    if (dateFormat === 'iso' || dateFormat === 'german') settings.dateFormat = dateFormat;
    if (qualifiedSessionLimit === null) settings.qualifiedSessionLimit = null;
    if (typeof qualifiedSessionLimit === 'number' && qualifiedSessionLimit >= 0) {
      settings.qualifiedSessionLimit = Math.floor(qualifiedSessionLimit);
    }
    if (Array.isArray(unavailableCountries)) {
      settings.unavailableCountries = new Set(
        unavailableCountries.filter((c): c is string => typeof c === 'string').map((c) => c.toUpperCase()),
      );
    }
    if (command.resetSessions === true) qualifiedByRequester.clear();
    return currentSettings();
  }

  function stats(): Record<string, unknown> {
    return { ...counters, byStatus: { ...byStatus } };
  }

  return { prefix: '/evatr', handle, control, stats };
}
