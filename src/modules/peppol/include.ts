/**
 * Peppol where users already are: the `include=peppol` part of a validation (`GET /v1/validate`,
 * `POST /v1/validate/batch`). The part is the look-up's `data`, or `{ error }` for that part alone:
 * a Peppol outage never fails the VAT answer, and never changes it.
 */
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { PeppolData, PeppolOutcome, PeppolPort } from './types.js';

/** The parts a validation may add (`include`). */
export const INCLUDE_VALUES = ['peppol'] as const;
export type IncludeValue = (typeof INCLUDE_VALUES)[number];

/** Why the Peppol part has no answer: the codes of `GET /v1/peppol/{identifier}`'s errors. */
export type PeppolPartErrorCode = 'registry_unavailable' | 'country_unsupported' | 'invalid_format';

/** `data.peppol` of a validation. */
export type PeppolPart = PeppolData | { error: { code: PeppolPartErrorCode; message: string } };

export type IncludeParse = { ok: true; peppol: boolean } | { ok: false; message: string };

/**
 * The parts asked for: `include=peppol` (a comma-separated list in a query, an array in a body).
 * An unknown value is refused with the list of known ones; an empty list asks for nothing.
 */
export function parseInclude(raw: string | readonly string[] | undefined): IncludeParse {
  if (raw === undefined) return { ok: true, peppol: false };
  const values = (typeof raw === 'string' ? raw.split(',') : raw).map((v) => v.trim()).filter(Boolean);
  const unknown = values.filter((v) => !(INCLUDE_VALUES as readonly string[]).includes(v.toLowerCase()));
  if (unknown.length > 0) {
    return {
      ok: false,
      message: `include: ${unknown.map((v) => `"${v.slice(0, 40)}"`).join(', ')} is not a part a validation can include (known: ${INCLUDE_VALUES.join(', ')}).`,
    };
  }
  return { ok: true, peppol: values.length > 0 };
}

/** Whether a key's scopes allow the Peppol part (a key without scopes may use every operation). */
export function peppolAllowed(principal: Pick<ApiKeyPrincipal, 'policy'>): boolean {
  const scopes = principal.policy?.scopes;
  return !scopes || scopes.includes('peppol');
}

/** The refusal message of a key whose scopes leave Peppol out. */
export const PEPPOL_SCOPE_MESSAGE =
  'include=peppol needs the scope "peppol", which this API key does not have.';

function partOf(outcome: PeppolOutcome): PeppolPart {
  switch (outcome.kind) {
    case 'ok':
      return outcome.data;
    case 'unavailable':
      return { error: { code: 'registry_unavailable', message: outcome.message } };
    case 'country_unsupported':
      return { error: { code: 'country_unsupported', message: outcome.message } };
    case 'invalid_format':
      return { error: { code: 'invalid_format', message: outcome.message } };
  }
}

/**
 * The Peppol part of a validated VAT number (its normalised form), through the one look-up path
 * (cache, coalescing, breakers; test keys from the fixed table). Never throws: an unexpected
 * failure is the part's `registry_unavailable`.
 */
export async function peppolPart(
  peppol: PeppolPort,
  vatNumber: string,
  principal: Pick<ApiKeyPrincipal, 'mode'>,
  options: { useCache?: boolean; signal?: AbortSignal } = {},
): Promise<PeppolPart> {
  try {
    return partOf(
      await peppol.lookup(
        {
          identifier: vatNumber,
          ...(options.useCache === false ? { useCache: false } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        },
        principal,
      ),
    );
  } catch {
    return { error: { code: 'registry_unavailable', message: 'The Peppol look-up failed unexpectedly.' } };
  }
}
