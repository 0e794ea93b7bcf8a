import type { Clock } from '../../lib/clock.js';
import { sourceForPrefix } from '../../registries/index.js';
import type { AnswerOutcome, AnswerQuery, AnswerSource } from '../validation/index.js';

export type MonitorTestBehaviour =
  | 'becomes_invalid'
  | 'becomes_valid'
  | 'name_changes'
  | 'address_changes'
  | 'registry_goes_down';

/**
 * Test-mode magic numbers of monitors: each answers its first check one way and every later check
 * another, so a test key sees a `vat_number.changed` (or `vat_number.check_failed`) event on the
 * monitor's second check (`POST /v1/monitors/{id}/check`). Each is a well-formed German number.
 * The validate table's numbers keep their meaning for monitors too (`DE400000000`: registry down from
 * the first check); any other number stays valid with its placeholder company.
 */
export const MONITOR_MAGIC_NUMBERS: ReadonlyArray<{
  vat: string;
  behaviour: MonitorTestBehaviour;
  answer: string;
}> = [
  {
    vat: 'DE910000000',
    behaviour: 'becomes_invalid',
    answer: 'valid at the first check, invalid from the second: `vat_number.changed` (`became_invalid`)',
  },
  {
    vat: 'DE920000003',
    behaviour: 'becomes_valid',
    answer: 'invalid at the first check, valid from the second: `vat_number.changed` (`became_valid`)',
  },
  {
    vat: 'DE930000007',
    behaviour: 'name_changes',
    answer:
      '`Testfirma Alt GmbH` at the first check, `Testfirma Neu GmbH` from the second: `vat_number.changed` (`name_changed`)',
  },
  {
    vat: 'DE940000004',
    behaviour: 'address_changes',
    answer: 'moves from Berlin to Hamburg at the second check: `vat_number.changed` (`address_changed`)',
  },
  {
    vat: 'DE950000008',
    behaviour: 'registry_goes_down',
    answer:
      'valid at the first check, registry down from the second: the monitor keeps its state, is flagged `stale` and `vat_number.check_failed` is sent once',
  },
];

const BY_NUMBER = new Map(MONITOR_MAGIC_NUMBERS.map((m) => [m.vat, m.behaviour]));

/** Markdown table of the monitors' magic numbers, for the docs and the OpenAPI description. */
export function monitorTestModeTable(): string {
  return [
    '| VAT number | Checks of a monitor with a `svc_test_` key |',
    '|---|---|',
    ...MONITOR_MAGIC_NUMBERS.map((m) => `| \`${m.vat}\` | ${m.answer} |`),
    '| `DE400000000` | registry down from the first check: status `unknown`, flagged `stale`, `vat_number.check_failed` once |',
    '| any other well-formed number | as `GET /v1/validate` answers it with a test key, on every check |',
  ].join('\n');
}

export function isMonitorMagicNumber(vat: string): boolean {
  return BY_NUMBER.has(vat);
}

/**
 * The answer source of a test-mode monitor's `check`-th check (1 for the first): the magic numbers'
 * sequences, and the validate test table (`fallback`) for every other number.
 */
export function monitorTestAnswers(deps: {
  clock: Clock;
  fallback: AnswerSource;
  check: number;
}): AnswerSource {
  return {
    async answer(query: AnswerQuery): Promise<AnswerOutcome> {
      const behaviour = BY_NUMBER.get(query.vat.normalised);
      if (!behaviour) return deps.fallback.answer(query);
      const later = deps.check >= 2;
      // The registry a live key would get the answer from, as the validate test table answers.
      const source = sourceForPrefix(query.vat.country) ?? 'vies';
      const answer = (valid: boolean, name: string | null, address: string | null): AnswerOutcome => ({
        kind: 'answer',
        source,
        sourceStatus: 'live',
        valid,
        name: valid ? name : null,
        address: valid ? address : null,
        consultationNumber: null,
        checkedAt: deps.clock.now(),
        fromStore: false,
      });
      const name = 'Testfirma Muster GmbH';
      const berlin = 'Teststraße 1\n10115 Berlin';
      switch (behaviour) {
        case 'becomes_invalid':
          return answer(!later, name, berlin);
        case 'becomes_valid':
          return answer(later, name, berlin);
        case 'name_changes':
          return answer(true, later ? 'Testfirma Neu GmbH' : 'Testfirma Alt GmbH', berlin);
        case 'address_changes':
          return answer(true, name, later ? 'Testweg 2\n20095 Hamburg' : berlin);
        case 'registry_goes_down':
          if (!later) return answer(true, name, berlin);
          return {
            kind: 'unavailable',
            source,
            message: 'The DE registry is unavailable (MS_UNAVAILABLE); the check is retried later.',
            retryAfterSeconds: 60,
          };
      }
    },
  };
}
