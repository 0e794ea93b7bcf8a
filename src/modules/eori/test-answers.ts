/**
 * Test mode: EORI answers from a fixed table, without calling a service or touching the database.
 * Every number of the table is well formed, so it passes the format check as a real one would.
 */
import type { Clock } from '../../lib/clock.js';
import type { EoriTrader } from '../../registries/eori-port.js';
import type { ParsedEori } from './parse.js';
import type { EoriAnswerOutcome, EoriAnswerSource } from './types.js';

const DAY_MS = 86_400_000;

export type EoriTestBehaviour =
  | 'valid_with_company'
  | 'valid_without_company'
  | 'invalid'
  | 'unavailable'
  | 'degraded'
  | 'cached';

export const EORI_TEST_NUMBERS: ReadonlyArray<{
  eori: string;
  behaviour: EoriTestBehaviour;
  answer: string;
}> = [
  {
    eori: 'DE100000000000001',
    behaviour: 'valid_with_company',
    answer: '200, valid, name and address (`source: "eos"`)',
  },
  {
    eori: 'DE200000000000002',
    behaviour: 'valid_without_company',
    answer: '200, valid, `company: null` (nothing published)',
  },
  { eori: 'DE300000000000003', behaviour: 'invalid', answer: '200, `valid: false`' },
  {
    eori: 'DE400000000000004',
    behaviour: 'unavailable',
    answer: '502 `registry_unavailable` with `Retry-After` (service down, nothing stored)',
  },
  {
    eori: 'DE500000000000005',
    behaviour: 'degraded',
    answer:
      '200, valid, `source_status: "degraded"`, `cached_at` 31 days ago (service down, older answer served)',
  },
  {
    eori: 'DE700000000000007',
    behaviour: 'cached',
    answer: '200, valid, `cached: true`, `source_status: "cached"` (1 hour old)',
  },
  {
    eori: 'XI100000000001',
    behaviour: 'valid_with_company',
    answer: '200, valid, name and address (`source: "eos"`)',
  },
  {
    eori: 'GB100000000001',
    behaviour: 'valid_with_company',
    answer: '200, valid, name and address (`source: "hmrc"`)',
  },
  { eori: 'GB300000000003', behaviour: 'invalid', answer: '200, `valid: false` (`source: "hmrc"`)' },
  {
    eori: 'GB400000000004',
    behaviour: 'unavailable',
    answer: '502 `registry_unavailable` with `Retry-After` (`source: "hmrc"`)',
  },
];

const BY_NUMBER = new Map(EORI_TEST_NUMBERS.map((entry) => [entry.eori, entry.behaviour]));

/** Markdown table of the test numbers, for docs/eori.md and the OpenAPI description. */
export function eoriTestModeTable(): string {
  return [
    '| EORI number | Answer with a `svc_test_` key |',
    '|---|---|',
    ...EORI_TEST_NUMBERS.map((entry) => `| \`${entry.eori}\` | ${entry.answer} |`),
    '| any other well-formed number | 200, valid, placeholder trader `Test Trader <number>` |',
  ].join('\n');
}

function placeholder(number: ParsedEori): EoriTrader {
  return {
    name: `Test Trader ${number.eori}`,
    street: '1 Test Street',
    postalCode: '00000',
    city: 'Testville',
    country: number.country,
  };
}

export function createEoriTestAnswers(deps: { clock: Clock }): EoriAnswerSource {
  function answerOne(number: ParsedEori, useCache: boolean): EoriAnswerOutcome {
    const now = deps.clock.now();
    const behaviour = BY_NUMBER.get(number.eori) ?? 'valid_with_company';
    const live: EoriAnswerOutcome = {
      kind: 'answer',
      source: number.service,
      sourceStatus: 'live',
      valid: true,
      trader: placeholder(number),
      checkedAt: now,
      fromStore: false,
    };
    switch (behaviour) {
      case 'valid_with_company':
        return live;
      case 'valid_without_company':
        return { ...live, trader: null };
      case 'invalid':
        return { ...live, valid: false, trader: null };
      case 'unavailable':
        return {
          kind: 'unavailable',
          source: number.service,
          message: `Test mode: no answer from the service for ${number.eori} (it is down and nothing is stored); retry later.`,
          retryAfterSeconds: 60,
        };
      case 'degraded':
        return {
          ...live,
          sourceStatus: 'degraded',
          checkedAt: new Date(now.getTime() - 31 * DAY_MS),
          fromStore: true,
        };
      case 'cached':
        return useCache
          ? {
              ...live,
              sourceStatus: 'cached',
              checkedAt: new Date(now.getTime() - 3_600_000),
              fromStore: true,
            }
          : live;
    }
  }

  return {
    async answerMany(numbers, options) {
      return new Map(numbers.map((number) => [number.eori, answerOne(number, options.useCache)]));
    },
  };
}
