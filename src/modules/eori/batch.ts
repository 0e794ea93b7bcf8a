/**
 * A batch of EORI numbers as the services take them: each input read on its own (a malformed one
 * fails alone and is never sent), the well-formed ones asked once each, grouped by the service that
 * answers for them and cut into calls of at most 10 numbers, the most either service accepts in
 * one request (EOS: "max 10 EORI numbers per request"; HMRC: "a maximum of 10 EORI numbers per
 * request", hmrc/check-eori-number-api README.md).
 */
import type { EoriService } from './countries.js';
import { type EoriParseResult, parseEori } from './parse.js';

export const EORI_NUMBERS_PER_CALL = 10;

export interface EoriBatchItem {
  /** Position in the input. */
  index: number;
  parsed: EoriParseResult;
}

export interface EoriUpstreamCall {
  service: EoriService;
  /** Canonical numbers, each once, 1 to `EORI_NUMBERS_PER_CALL` of them. */
  eoris: string[];
}

export interface EoriBatchPlan {
  /** One per input, in input order. */
  items: EoriBatchItem[];
  /** The upstream calls that answer every well-formed item: EOS calls first, then HMRC's. */
  calls: EoriUpstreamCall[];
}

/** Reads every input and plans the upstream calls for the well-formed ones. */
export function planEoriBatch(inputs: readonly unknown[], perCall = EORI_NUMBERS_PER_CALL): EoriBatchPlan {
  const size = Math.max(1, Math.floor(perCall));
  const items = inputs.map((input, index) => ({ index, parsed: parseEori(input) }));
  const byService: Record<EoriService, string[]> = { eos: [], hmrc: [] };
  const seen = new Set<string>();
  for (const { parsed } of items) {
    if (!parsed.ok || seen.has(parsed.eori)) continue;
    seen.add(parsed.eori);
    byService[parsed.service].push(parsed.eori);
  }
  const calls: EoriUpstreamCall[] = [];
  for (const service of ['eos', 'hmrc'] as const) {
    const list = byService[service];
    for (let at = 0; at < list.length; at += size) calls.push({ service, eoris: list.slice(at, at + size) });
  }
  return { items, calls };
}
