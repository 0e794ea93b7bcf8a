import type { Clock } from '../../lib/clock.js';
import { deepFreeze } from '../../lib/freeze.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { RatesService } from '../rates/index.js';
import { type ParsedVatNumber, parseVatNumber } from '../vat-numbers/index.js';
import type { AnswerSource, LazySignal } from './answers.js';
import type { ValidationData, ValidationOutcome, ValidationPort, ValidationRequest } from './types.js';

type ParseOutcome =
  | { ok: true; vat: ParsedVatNumber }
  | Extract<ValidationOutcome, { kind: 'invalid_format' | 'country_unsupported' }>;

function parse(input: string, field: string): ParseOutcome {
  const parsed = parseVatNumber(input);
  if (parsed.ok) return { ok: true, vat: parsed };
  if (parsed.reason === 'unsupported_country') {
    return { kind: 'country_unsupported', country: parsed.country, message: prefixed(field, parsed.message) };
  }
  return { kind: 'invalid_format', reason: parsed.reason, message: prefixed(field, parsed.message) };
}

function prefixed(field: string, message: string): string {
  return field === 'vat_number' ? message : `${field}: ${message}`;
}

/**
 * The one validation path: parse and check locally (no registry call for a malformed number), then
 * ask the answer source of the key's mode (live registries or the test-mode table), then shape the
 * response data.
 */
export function createValidationService(deps: {
  rates: Pick<RatesService, 'rateObject' | 'today' | 'layered'>;
  clock: Clock;
  /** Answer sources by key mode: live keys ask the registries, test keys the magic-number table. */
  sources: { live: AnswerSource; test: AnswerSource };
}): ValidationPort & { parse: typeof parse } {
  const { rates, clock, sources } = deps;

  // `country` depends only on the country, its day (the rates in force there, in its time zone) and
  // the rates served, so each is built once a day and shared by the answers of that day (frozen:
  // answers only serialise it); rates learnt or decided since (`layered` replaced) rebuild it.
  let served = rates.layered();
  let countries = new Map<string, ValidationData['country']>();

  function countryOf(vat: ParsedVatNumber): ValidationData['country'] {
    const layered = rates.layered();
    if (layered !== served || countries.size >= 10_000) {
      served = layered;
      countries = new Map();
    }
    const day = rates.today(vat.isoCountry.toLowerCase());
    const key = `${vat.isoCountry}|${day}`;
    let country = countries.get(key);
    if (!country) {
      country = deepFreeze(buildCountry(vat, day));
      countries.set(key, country);
    }
    return country;
  }

  function buildCountry(vat: ParsedVatNumber, date: string): ValidationData['country'] {
    const rate = rates.rateObject(vat.isoCountry.toLowerCase(), date);
    return {
      code: vat.isoCountry,
      name: rate?.country_name ?? vat.isoCountry,
      vat: rate
        ? {
            name: rate.vat_name,
            abbreviation: rate.vat_abbr,
            standard_rate: rate.standard_rate,
            reduced_rates: rate.reduced_rates,
            super_reduced_rate: rate.super_reduced_rate,
            parking_rate: rate.parking_rate,
            currency: rate.currency,
            number_format: rate.vat_number_format,
            number_pattern: rate.vat_number_regex,
            updated_at: rate.updated_at,
          }
        : null,
    };
  }

  return {
    parse,
    async validate(
      request: ValidationRequest,
      principal: ApiKeyPrincipal,
      signal?: LazySignal,
      override?: AnswerSource,
    ) {
      const target = parse(request.vatNumber, 'vat_number');
      if (!('ok' in target)) return target;
      let requester: ParsedVatNumber | null = null;
      if (request.requesterVatNumber) {
        const parsed = parse(request.requesterVatNumber, 'requester_vat_number');
        if (!('ok' in parsed)) return parsed;
        requester = parsed.vat;
      }
      const source = override ?? (principal.mode === 'test' ? sources.test : sources.live);
      const outcome = await source.answer({
        vat: target.vat,
        requester,
        caller: principal.id,
        useCache: request.useCache !== false,
        ...(request.priority ? { priority: request.priority } : {}),
        ...(request.clientWaiting ? { clientWaiting: true } : {}),
        ...(signal ? { signal } : {}),
      });
      if (outcome.kind !== 'answer') return outcome;
      const now = clock.now();
      const data: ValidationData = {
        valid: outcome.valid,
        vat_number: target.vat.normalised,
        country: countryOf(target.vat),
        company:
          outcome.valid && (outcome.name !== null || outcome.address !== null)
            ? { name: outcome.name, address: outcome.address }
            : null,
        verify_id: outcome.consultationNumber,
        verified_at: outcome.checkedAt.toISOString(),
        ...(outcome.fallback ? { registration_scope: 'domestic' as const } : {}),
      };
      return {
        kind: 'ok',
        data,
        meta: {
          cached: outcome.fromStore,
          source: outcome.source,
          source_status: outcome.sourceStatus,
          cached_at: outcome.fromStore ? outcome.checkedAt.toISOString() : null,
          stale_seconds: outcome.fromStore
            ? Math.max(0, Math.floor((now.getTime() - outcome.checkedAt.getTime()) / 1000))
            : null,
          ...(outcome.fallback ? { fallback: outcome.fallback } : {}),
        },
        ...(outcome.fresh ? { fresh: outcome.fresh } : {}),
      };
    },
  };
}

export type ValidationService = ReturnType<typeof createValidationService>;
