import { createHash } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { sourceForPrefix } from '../../registries/index.js';
import {
  type ClaimedIdentity,
  IDENTITY_FIELDS,
  matchIdentity,
  type RegistryVerdicts,
} from '../identity-match/index.js';
import type { AnswerOutcome, AnswerQuery, AnswerSource } from './answers.js';

const DAY_S = 86_400;

export type TestBehaviour =
  | 'valid_with_company'
  | 'valid_without_company'
  | 'invalid'
  | 'registry_down'
  | 'registry_down_stale'
  | 'registry_throttled'
  | 'cached'
  | 'rate_limited'
  | 'verdicts_without_company'
  | 'verdicts_not_processed'
  | 'fallback_registered'
  | 'fallback_not_registered'
  | 'fallback_unreliable'
  | 'fallback_file';

/** The company of `DE100000008`, which the identity-match numbers compare with. */
const TEST_COMPANY = { name: 'Testfirma Muster GmbH', address: 'Teststraße 1\n10115 Berlin' };

/**
 * The test-mode magic numbers. Each is a well-formed German number (valid check digit), so it passes
 * the format checks exactly as a real number would. Any other well-formed number of a supported
 * country is valid with deterministic placeholder company data; a `requester_vat_number` adds a
 * deterministic consultation number.
 */
export const TEST_MAGIC_NUMBERS: ReadonlyArray<{ vat: string; behaviour: TestBehaviour; answer: string }> = [
  { vat: 'DE100000008', behaviour: 'valid_with_company', answer: '200, valid, company name and address' },
  {
    vat: 'DE200000005',
    behaviour: 'valid_without_company',
    answer: '200, valid, `company: null` (registry sent `---`)',
  },
  { vat: 'DE300000002', behaviour: 'invalid', answer: '200, `valid: false`' },
  {
    vat: 'DE400000000',
    behaviour: 'registry_down',
    answer: '502 `registry_unavailable` with `Retry-After` (registry down, nothing stored)',
  },
  {
    vat: 'DE500000007',
    behaviour: 'registry_down_stale',
    answer:
      '200, valid, `source_status: "degraded"`, `cached_at` 31 days ago (registry down, stale answer served)',
  },
  {
    vat: 'DE600000004',
    behaviour: 'registry_throttled',
    answer: '502 `registry_unavailable` with `Retry-After` (registry throttling: `MS_MAX_CONCURRENT_REQ`)',
  },
  {
    vat: 'DE700000001',
    behaviour: 'cached',
    answer: '200, valid, `cached: true`, `source_status: "cached"` (1 hour old)',
  },
  { vat: 'DE800000009', behaviour: 'rate_limited', answer: '429 `rate_limited` with `Retry-After`' },
  {
    vat: 'DE110000001',
    behaviour: 'verdicts_without_company',
    answer:
      "200, valid, `company: null` (the registry sent `---`, as Spain's does) but it compares the company fields given: `registry_result` `match` for each that agrees with `DE100000008`'s company (`Testfirma Muster GmbH`, `Teststraße 1`, `10115`, `Berlin`), else `mismatch`; `score: null`",
  },
  {
    vat: 'DE120000005',
    behaviour: 'verdicts_not_processed',
    answer:
      '200, valid, `DE100000008`\'s company, and `registry_result: "not_processed"` for each company field given (as Germany\'s registry answers)',
  },
  {
    vat: 'PL1000000006',
    behaviour: 'fallback_registered',
    answer:
      '200, valid, answered by the Polish white list while VIES is down for PL: `source: "pl_whitelist"`, `source_status: "fallback"`, `registration_scope: "domestic"`, `meta.fallback` with `reason: "MS_UNAVAILABLE"`, `register_status: "Czynny"` and a `TEST…` `consultation_number` (the `requestId`); the company fields compare with its company',
  },
  {
    vat: 'PL1000000012',
    behaviour: 'fallback_not_registered',
    answer:
      '200, `valid: false`, answered by the Polish white list while VIES is down (`register_status: "Zwolniony"`, `source_status: "fallback"`)',
  },
  {
    vat: 'CZ10000003',
    behaviour: 'fallback_unreliable',
    answer:
      '200, valid, answered by the Czech register while VIES is down (`source: "cz_adis"`, `register_status: "ANO"`) with the flag `unreliable_payer`',
  },
  {
    vat: 'SI10000003',
    behaviour: 'fallback_file',
    answer:
      '200, valid, answered from FURS\'s daily file while VIES is down (`source: "si_furs"`, `meta.fallback.data_date` yesterday)',
  },
];

const BY_NUMBER = new Map(TEST_MAGIC_NUMBERS.map((m) => [m.vat, m.behaviour]));

/** Markdown table of the magic numbers, for docs/validation.md and the OpenAPI description. */
export function testModeTable(): string {
  const rows = TEST_MAGIC_NUMBERS.map((m) => `| \`${m.vat}\` | ${m.answer} |`);
  return [
    '| VAT number | Answer with a `svc_test_` key |',
    '|---|---|',
    ...rows,
    '| any other well-formed number | 200, valid, placeholder company `Test Company <number>`, `1 Test Street` |',
    '| any number with `company_name`, `company_street`, `company_postcode` or `company_city` | adds `data.match`: `score` and `result` against the company answered, `registry_result: null` (except the two numbers above) |',
    '| any number with `requester_vat_number` | adds `verify_id` `TEST…` (a consultation number) |',
  ].join('\n');
}

function consultationNumber(vat: string, requester: string): string {
  return `TEST${createHash('sha256').update(`${requester}:${vat}`).digest('hex').slice(0, 12).toUpperCase()}`;
}

/**
 * The registry's verdict on each claimed field, as a registry that compares (Spain's) gives it:
 * `match` where openvat's comparison with the test company agrees, else `mismatch`.
 */
function testVerdicts(claim: ClaimedIdentity | undefined, compare: boolean): RegistryVerdicts {
  if (!claim) return {};
  const match = matchIdentity(claim, { ...TEST_COMPANY, country: 'DE' });
  const verdicts: RegistryVerdicts = {};
  for (const field of IDENTITY_FIELDS) {
    const compared = match?.[field];
    if (!compared) continue;
    verdicts[field] = compare ? (compared.result === 'match' ? 'match' : 'mismatch') : 'not_processed';
  }
  return verdicts;
}

type LiveLike = Extract<AnswerOutcome, { kind: 'answer' }>;

/** The live answer a test key gets for this number: valid, with a placeholder company. */
function placeholderAnswer(query: AnswerQuery, now: Date): LiveLike {
  const number = query.vat.normalised;
  const verify = query.requester ? consultationNumber(number, query.requester.normalised) : null;
  const placeholder =
    number === 'DE100000008' || BY_NUMBER.get(number) === 'verdicts_not_processed'
      ? TEST_COMPANY
      : { name: `Test Company ${number}`, address: `1 Test Street\n${query.vat.isoCountry}` };
  return {
    kind: 'answer',
    // The registry a live key would get the answer from: clients see the same `source` values.
    source: sourceForPrefix(query.vat.country) ?? 'vies',
    sourceStatus: 'live',
    valid: true,
    ...placeholder,
    consultationNumber: verify,
    checkedAt: now,
    fromStore: false,
  };
}

const TEST_REGISTERS = {
  fallback_registered: { source: 'pl_whitelist', status: 'Czynny', valid: true, flag: null, file: false },
  fallback_not_registered: {
    source: 'pl_whitelist',
    status: 'Zwolniony',
    valid: false,
    flag: null,
    file: false,
  },
  fallback_unreliable: {
    source: 'cz_adis',
    status: 'ANO',
    valid: true,
    flag: 'unreliable_payer',
    file: false,
  },
  fallback_file: { source: 'si_furs', status: null, valid: true, flag: null, file: true },
} as const;

/**
 * A national register's answer while VIES is down for the number's state, as a live key gets it
 * (`source_status: "fallback"`, `meta.fallback`); the white list's requestId is deterministic.
 */
function registerAnswer(
  behaviour: keyof typeof TEST_REGISTERS,
  live: LiveLike,
  vatNumber: string,
  now: Date,
): AnswerOutcome {
  const register = TEST_REGISTERS[behaviour];
  const digest = createHash('sha256').update(`register:${vatNumber}`).digest('hex');
  const requestId = register.source === 'pl_whitelist' ? `TEST${digest.slice(0, 12).toUpperCase()}` : null;
  const dataDate = register.file ? new Date(now.getTime() - DAY_S * 1000).toISOString().slice(0, 10) : null;
  return {
    ...live,
    source: register.source,
    sourceStatus: 'fallback',
    valid: register.valid,
    ...(register.valid ? {} : { name: null, address: null }),
    consultationNumber: null,
    fallback: {
      reason: 'MS_UNAVAILABLE',
      message: 'Test mode: VIES answers MS_UNAVAILABLE for this member state.',
      checked_at: now.toISOString(),
      data_date: dataDate,
      register_status: register.status,
      consultation_number: requestId,
      identifiers: requestId ? { requestId } : {},
      flags: register.flag ? [{ code: register.flag, since: null, register_value: 'ANO' }] : [],
    },
  };
}

/** What the magic number's behaviour makes of the placeholder answer. */
function behave(behaviour: TestBehaviour, live: LiveLike, query: AnswerQuery, now: Date): AnswerOutcome {
  const { source } = live;
  switch (behaviour) {
    case 'valid_with_company':
      return live;
    case 'valid_without_company':
      return { ...live, name: null, address: null };
    case 'invalid':
      return { ...live, valid: false, name: null, address: null };
    case 'registry_down':
      return {
        kind: 'unavailable',
        source,
        message:
          'The DE registry is unavailable (MS_UNAVAILABLE) and no earlier answer is stored; retry later.',
        retryAfterSeconds: 60,
      };
    case 'registry_throttled':
      return {
        kind: 'unavailable',
        source,
        message:
          'The DE registry is throttling requests (MS_MAX_CONCURRENT_REQ) and no earlier answer is stored.',
        retryAfterSeconds: 5,
      };
    case 'registry_down_stale':
      // Degraded answers never carry a consultation number: only a live call yields one.
      return {
        ...live,
        sourceStatus: 'degraded',
        consultationNumber: null,
        checkedAt: new Date(now.getTime() - 31 * DAY_S * 1000),
        fromStore: true,
      };
    case 'cached':
      return query.useCache && !query.requester
        ? { ...live, sourceStatus: 'cached', checkedAt: new Date(now.getTime() - 3_600_000), fromStore: true }
        : live;
    case 'verdicts_without_company':
      return { ...live, name: null, address: null, verdicts: testVerdicts(query.claim, true) };
    case 'verdicts_not_processed':
      return { ...live, verdicts: testVerdicts(query.claim, false) };
    case 'fallback_registered':
    case 'fallback_not_registered':
    case 'fallback_unreliable':
    case 'fallback_file':
      return registerAnswer(behaviour, live, query.vat.normalised, now);
    case 'rate_limited':
      return {
        kind: 'rate_limited',
        message: 'Test mode: this number always answers as rate limited.',
        retryAfterSeconds: 30,
      };
  }
}

/** Test mode: answers from the magic-number table; never touches the network or the database. */
export function createTestModeAnswers(deps: { clock: Clock }): AnswerSource {
  async function answer(query: AnswerQuery): Promise<AnswerOutcome> {
    const now = deps.clock.now();
    const behaviour = BY_NUMBER.get(query.vat.normalised) ?? 'valid_with_company';
    return behave(behaviour, placeholderAnswer(query, now), query, now);
  }
  return { answer };
}
