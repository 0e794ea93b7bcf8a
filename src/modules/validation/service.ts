import type { Clock } from '../../lib/clock.js';
import { deepFreeze } from '../../lib/freeze.js';
import { matchIdentity } from '../identity-match/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { RatesService } from '../rates/index.js';
import { type ParsedVatNumber, parseVatNumber } from '../vat-numbers/index.js';
import type { AnswerOutcome, AnswerSource, LazySignal } from './answers.js';
import { answerRefusal, countryUnsupported, invalidFormat } from './refusals.js';
import type {
  ValidationData,
  ValidationOk,
  ValidationOutcome,
  ValidationPort,
  ValidationRefusal,
  ValidationRequest,
} from './types.js';

/** A parsed number, or why it cannot be one (`invalid_format`, `country_unsupported`). */
export type ParseOutcome = { kind: 'ok'; vat: ParsedVatNumber } | ValidationRefusal;

function parse(input: string, field: string): ParseOutcome {
  const parsed = parseVatNumber(input);
  if (parsed.ok) return { kind: 'ok', vat: parsed };
  if (parsed.reason === 'unsupported_country') {
    return countryUnsupported(parsed.country, prefixed(field, parsed.message));
  }
  return invalidFormat(parsed.reason, prefixed(field, parsed.message));
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

  /**
   * The claim against the registered name and address (none for a number that is not valid) and
   * the registry's own verdicts; the match never changes `valid`.
   */
  function identityMatch(
    request: ValidationRequest,
    outcome: Extract<AnswerOutcome, { kind: 'answer' }>,
    vat: ParsedVatNumber,
  ) {
    const registered = outcome.valid
      ? { name: outcome.name, address: outcome.address, country: vat.country }
      : { country: vat.country };
    return matchIdentity(request.claim ?? {}, registered, outcome.verdicts ?? {});
  }

  /** The number to validate and the requester, parsed; or why one of them cannot be a VAT number. */
  function parseRequest(
    request: ValidationRequest,
  ): { kind: 'ok'; target: ParsedVatNumber; requester: ParsedVatNumber | null } | ValidationRefusal {
    const target = parse(request.vatNumber, 'vat_number');
    if (target.kind !== 'ok') return target;
    if (!request.requesterVatNumber) return { kind: 'ok', target: target.vat, requester: null };
    const requester = parse(request.requesterVatNumber, 'requester_vat_number');
    if (requester.kind !== 'ok') return requester;
    return { kind: 'ok', target: target.vat, requester: requester.vat };
  }

  /** The response's data and meta of an answer. */
  function shaped(vat: ParsedVatNumber, outcome: Extract<AnswerOutcome, { kind: 'answer' }>): ValidationOk {
    const now = clock.now();
    const data: ValidationData = {
      valid: outcome.valid,
      vat_number: vat.normalised,
      country: countryOf(vat),
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
  }

  /**
   * One validation: the numbers parsed, the answer source of the key's mode asked (live registries
   * or the test-mode table), the answer shaped, or the refusal of why there is none.
   */
  async function validate(
    request: ValidationRequest,
    principal: ApiKeyPrincipal,
    signal?: LazySignal,
    override?: AnswerSource,
  ): Promise<ValidationOutcome> {
    const parsed = parseRequest(request);
    if (parsed.kind !== 'ok') return parsed;
    const source = override ?? (principal.mode === 'test' ? sources.test : sources.live);
    const outcome = await source.answer({
      vat: parsed.target,
      requester: parsed.requester,
      caller: principal.id,
      useCache: request.useCache !== false,
      ...(request.priority ? { priority: request.priority } : {}),
      ...(request.clientWaiting ? { clientWaiting: true } : {}),
      ...(signal ? { signal } : {}),
      ...(request.claim ? { claim: request.claim } : {}),
    });
    if (outcome.kind !== 'answer') return answerRefusal(outcome);
    const ok = shaped(parsed.target, outcome);
    const match = request.claim ? identityMatch(request, outcome, parsed.target) : null;
    if (match) ok.data.match = match;
    return ok;
  }

  return { parse, validate };
}

export type ValidationService = ReturnType<typeof createValidationService>;
