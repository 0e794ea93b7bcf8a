/**
 * Shared machinery of the registry simulators: the deterministic registration rule and fake
 * company data, a seeded PRNG, and the fault-injection controls (latency, concurrency limits,
 * outages, error rates, hangs, rate windows) with their counters.
 *
 * Deterministic rule (documented in docs/simulators.md): `h = fnv1a32("<PREFIX>:<national>")`; a
 * well-formed number is registered unless `h % 4 === 0` (about 75 % registered). Company names and
 * addresses are drawn from `h`, so the same number always gets the same company.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorModule } from './types.js';

/** FNV-1a, 32 bit. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: a small seeded PRNG, so error-rate runs are reproducible. */
export function createPrng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SimulatedCompany {
  registered: boolean;
  /** The hash the rule is drawn from. */
  hash: number;
  name: string;
  /** Street line, postcode and town. */
  street: string;
  postcode: string;
  town: string;
}

const FIRST = [
  'Nordlicht',
  'Alpen',
  'Baltic',
  'Danube',
  'Atlas',
  'Harbour',
  'Meridian',
  'Cedar',
  'Silver',
  'Northgate',
  'Riverside',
  'Vega',
  'Orion',
  'Lumen',
  'Granite',
  'Linden',
];
const SECOND = [
  'Trading',
  'Logistics',
  'Software',
  'Foods',
  'Textiles',
  'Engineering',
  'Consulting',
  'Media',
  'Instruments',
  'Supplies',
  'Energy',
  'Design',
];
const STREETS = [
  'Market Street',
  'Station Road',
  'Harbour Lane',
  'Mill Street',
  'Church Square',
  'Park Avenue',
  'Bridge Street',
  'Garden Row',
];
const TOWNS = [
  'Northbridge',
  'Eastvale',
  'Westford',
  'Southport',
  'Lakeside',
  'Hillcrest',
  'Oakham',
  'Riverton',
];
const LEGAL_FORMS: Record<string, string> = {
  AT: 'GmbH',
  BE: 'BV',
  CH: 'AG',
  CZ: 's.r.o.',
  DE: 'GmbH',
  DK: 'ApS',
  EL: 'AE',
  ES: 'SL',
  FI: 'Oy',
  FR: 'SARL',
  GB: 'Ltd',
  IE: 'Limited',
  IT: 'S.r.l.',
  NL: 'B.V.',
  NO: 'AS',
  PL: 'Sp. z o.o.',
  PT: 'Lda',
  SE: 'AB',
  SK: 's.r.o.',
  XI: 'Ltd',
};

/** The simulated register's entry for a number (whether or not it is registered). */
export function simulatedCompany(prefix: string, national: string): SimulatedCompany {
  const hash = fnv1a32(`${prefix.toUpperCase()}:${national.toUpperCase()}`);
  const pick = <T>(list: readonly T[], shift: number): T => list[(hash >>> shift) % list.length] as T;
  const form = LEGAL_FORMS[prefix.toUpperCase()] ?? 'Ltd';
  return {
    registered: hash % 4 !== 0,
    hash,
    name: `${pick(FIRST, 4)} ${pick(SECOND, 9)} ${form}`.toUpperCase(),
    street: `${pick(STREETS, 13)} ${(hash % 97) + 1}`.toUpperCase(),
    postcode: String(1000 + ((hash >>> 3) % 8999)),
    town: pick(TOWNS, 17).toUpperCase(),
  };
}

// ---------------------------------------------------------------------------------------------
// Controls

export interface ErrorRate {
  /** Fraction of calls (0..1) answered with `code`. */
  rate: number;
  code: string;
}

export interface ControlSettings {
  /** Added before every answer, milliseconds. */
  latencyMs: number;
  /** Per-country latency, replacing `latencyMs` for that country. */
  latencyByCountry: Record<string, number>;
  /** Simultaneous calls allowed per country; one more is refused (VIES: `MS_MAX_CONCURRENT_REQ`). */
  concurrencyLimit: Record<string, number>;
  /** Simultaneous calls allowed over all countries (VIES: `GLOBAL_MAX_CONCURRENT_REQ`); 0 = none. */
  globalConcurrencyLimit: number;
  /** Countries whose registry is down (VIES: `MS_UNAVAILABLE`). */
  down: string[];
  /** The whole service answers an HTML 503 page. */
  serviceDown: boolean;
  /** Per country (or `*` for every country): a seeded share of calls answered with an error code. */
  errorRate: Record<string, ErrorRate>;
  /** `true`: every call hangs (no answer, ever); a list: calls for those countries hang. */
  hang: boolean | string[];
  /** Calls allowed per country within `rateLimit.windowMs` (Swiss UID: 20 per minute); `null` = off. */
  rateLimit: { limit: number; windowMs: number } | null;
  /** HTTP status of error answers where the real service varies (VIES envelopes and SOAP faults); `null` = default. */
  errorStatus: number | null;
  /** Seed of the error-rate PRNG. */
  seed: number;
}

export interface ControlStats {
  total: number;
  calls: Record<string, number>;
  rejections: Record<string, number>;
  errors: Record<string, number>;
  /** Peak simultaneous calls admitted per country. */
  maxConcurrency: Record<string, number>;
  /** Peak simultaneous calls arriving per country, refused ones included. */
  maxConcurrencySeen: Record<string, number>;
  maxGlobalConcurrency: number;
  inFlight: Record<string, number>;
  hanging: number;
}

export function defaultSettings(seed = 1): ControlSettings {
  return {
    latencyMs: 0,
    latencyByCountry: {},
    concurrencyLimit: {},
    globalConcurrencyLimit: 0,
    down: [],
    serviceDown: false,
    errorRate: {},
    hang: false,
    rateLimit: null,
    errorStatus: null,
    seed,
  };
}

function emptyStats(): ControlStats {
  return {
    total: 0,
    calls: {},
    rejections: {},
    errors: {},
    maxConcurrency: {},
    maxConcurrencySeen: {},
    maxGlobalConcurrency: 0,
    inFlight: {},
    hanging: 0,
  };
}

/** What the controls decided about one call before the simulator answers it. */
export type Admission =
  | { kind: 'hang' }
  | { kind: 'service_down' }
  | { kind: 'country_limit' }
  | { kind: 'global_limit' }
  | { kind: 'rate_limit' }
  | { kind: 'admitted'; release: () => void };

export interface Controls {
  readonly settings: ControlSettings;
  /** Applies a control command; returns the new settings. Unknown keys are ignored. */
  apply(command: Record<string, unknown>): ControlSettings;
  stats(): ControlStats;
  /** Counts the call and decides whether it hangs, is refused, or is admitted (then call `release`). */
  admit(country: string): Admission;
  /** Sleeps the configured latency for a country. */
  delay(country: string): Promise<void>;
  isDown(country: string): boolean;
  /** The injected error code for this call, if the country's error rate picks it. */
  injectedError(country: string): string | undefined;
  /** Records an error answer (any refusal or failure). */
  recordError(country: string, code: string): void;
}

export interface ControlsOptions {
  seed?: number;
  latencyMs?: number;
  now?: () => number;
}

export function createControls(options: ControlsOptions = {}): Controls {
  const initialSeed = options.seed ?? 1;
  const clock = options.now ?? Date.now;
  let settings = defaultSettings(initialSeed);
  if (options.latencyMs) settings.latencyMs = options.latencyMs;
  let random = createPrng(settings.seed);
  let stats = emptyStats();
  let globalInFlight = 0;
  const windows = new Map<string, number[]>();

  const bump = (record: Record<string, number>, key: string, by = 1) => {
    record[key] = (record[key] ?? 0) + by;
  };

  function apply(command: Record<string, unknown>): ControlSettings {
    if (command.reset === true) {
      settings = defaultSettings(initialSeed);
      random = createPrng(settings.seed);
      stats = emptyStats();
      globalInFlight = 0;
      windows.clear();
    }
    if (command.resetStats === true) {
      const inFlight = stats.inFlight;
      stats = emptyStats();
      stats.inFlight = inFlight;
    }
    const latency = command.latencyMs;
    if (typeof latency === 'number') settings.latencyMs = Math.max(0, latency);
    else if (isObject(latency)) mergeNumbers(settings.latencyByCountry, latency);
    if (isObject(command.latencyByCountry)) mergeNumbers(settings.latencyByCountry, command.latencyByCountry);
    if (isObject(command.concurrencyLimit)) mergeNumbers(settings.concurrencyLimit, command.concurrencyLimit);
    if (typeof command.globalConcurrencyLimit === 'number') {
      settings.globalConcurrencyLimit = Math.max(0, command.globalConcurrencyLimit);
    }
    if (Array.isArray(command.down)) settings.down = countries(command.down);
    if (Array.isArray(command.up)) {
      const up = new Set(countries(command.up));
      settings.down = settings.down.filter((c) => !up.has(c));
    }
    if (typeof command.serviceDown === 'boolean') settings.serviceDown = command.serviceDown;
    if (isObject(command.errorRate)) {
      for (const [country, value] of Object.entries(command.errorRate)) {
        const key = country.toUpperCase();
        if (
          isObject(value) &&
          typeof value.rate === 'number' &&
          value.rate > 0 &&
          typeof value.code === 'string'
        ) {
          settings.errorRate[key] = { rate: Math.min(1, value.rate), code: value.code };
        } else {
          delete settings.errorRate[key];
        }
      }
    }
    if (typeof command.hang === 'boolean') settings.hang = command.hang;
    else if (Array.isArray(command.hang)) settings.hang = countries(command.hang);
    if (command.rateLimit === null) settings.rateLimit = null;
    else if (isObject(command.rateLimit) && typeof command.rateLimit.limit === 'number') {
      const windowMs = typeof command.rateLimit.windowMs === 'number' ? command.rateLimit.windowMs : 60_000;
      settings.rateLimit = { limit: command.rateLimit.limit, windowMs };
      windows.clear();
    }
    if (command.errorStatus === null || typeof command.errorStatus === 'number') {
      settings.errorStatus = command.errorStatus;
    }
    if (typeof command.seed === 'number') {
      settings.seed = command.seed;
      random = createPrng(command.seed);
    }
    return snapshot();
  }

  function snapshot(): ControlSettings {
    return structuredClone(settings);
  }

  function admit(country: string): Admission {
    stats.total++;
    bump(stats.calls, country);
    if (settings.hang === true || (Array.isArray(settings.hang) && settings.hang.includes(country))) {
      stats.hanging++;
      return { kind: 'hang' };
    }
    if (settings.serviceDown) return { kind: 'service_down' };
    if (settings.rateLimit) {
      const now = clock();
      const list = windows.get(country) ?? [];
      const fresh = list.filter((t) => now - t < (settings.rateLimit?.windowMs ?? 0));
      if (fresh.length >= settings.rateLimit.limit) {
        windows.set(country, fresh);
        return { kind: 'rate_limit' };
      }
      fresh.push(now);
      windows.set(country, fresh);
    }
    const inFlight = stats.inFlight[country] ?? 0;
    stats.maxConcurrencySeen[country] = Math.max(stats.maxConcurrencySeen[country] ?? 0, inFlight + 1);
    const limit = settings.concurrencyLimit[country] ?? settings.concurrencyLimit['*'];
    if (limit !== undefined && inFlight >= limit) return { kind: 'country_limit' };
    if (settings.globalConcurrencyLimit > 0 && globalInFlight >= settings.globalConcurrencyLimit) {
      return { kind: 'global_limit' };
    }
    stats.inFlight[country] = inFlight + 1;
    globalInFlight++;
    stats.maxConcurrency[country] = Math.max(stats.maxConcurrency[country] ?? 0, inFlight + 1);
    stats.maxGlobalConcurrency = Math.max(stats.maxGlobalConcurrency, globalInFlight);
    let released = false;
    return {
      kind: 'admitted',
      release: () => {
        if (released) return;
        released = true;
        stats.inFlight[country] = Math.max(0, (stats.inFlight[country] ?? 1) - 1);
        globalInFlight = Math.max(0, globalInFlight - 1);
      },
    };
  }

  function delay(country: string): Promise<void> {
    const ms = settings.latencyByCountry[country] ?? settings.latencyMs;
    if (!(ms > 0)) return Promise.resolve();
    // Unreferenced: a pending simulated latency never keeps a process alive on its own.
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }

  function injectedError(country: string): string | undefined {
    const rule = settings.errorRate[country] ?? settings.errorRate['*'];
    if (!rule) return undefined;
    return random() < rule.rate ? rule.code : undefined;
  }

  function recordError(country: string, code: string): void {
    bump(stats.rejections, country);
    bump(stats.errors, code);
  }

  return {
    get settings() {
      return settings;
    },
    apply,
    stats: () => structuredClone(stats),
    admit,
    delay,
    isDown: (country) => settings.down.includes(country) || settings.down.includes('*'),
    injectedError,
    recordError,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mergeNumbers(target: Record<string, number>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const country = key.toUpperCase();
    if (typeof value === 'number' && value >= 0) target[country] = value;
    else delete target[country];
  }
}

function countries(list: unknown[]): string[] {
  return list.filter((c): c is string => typeof c === 'string').map((c) => c.toUpperCase());
}

// ---------------------------------------------------------------------------------------------
// Small HTTP helpers shared by the simulators

export function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) {
  send(res, status, 'application/json', JSON.stringify(value), headers);
}

/** Keeps a request open forever (until the client or the server closes the connection). */
export function hangForever(_req: IncomingMessage, _res: ServerResponse): void {}

export const SERVICE_UNAVAILABLE_HTML =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n<html><head><title>503 Service Unavailable</title></head>\n' +
  '<body><h1>Service Unavailable</h1><p>The server is temporarily unable to service your request due to maintenance ' +
  'downtime or capacity problems. Please try again later.</p></body></html>\n';

/** Options every registry simulator takes. */
export interface RegistrySimulatorOptions {
  seed?: number;
  latencyMs?: number;
  now?: () => Date;
}

/** A registry simulator with its controls (latency, limits, outages, error rates) and counters. */
export interface ControlledSimulator extends SimulatorModule {
  control(command: Record<string, unknown>): Record<string, unknown>;
  stats(): Record<string, unknown>;
  readonly controls: Controls;
}
