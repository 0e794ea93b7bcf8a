/**
 * A national register's answer as a validation answer: `source` the register, `source_status`
 * `fallback`, `meta.fallback` why VIES did not answer and what the register said (its status word,
 * identifiers, consultation number and flags, which audit records and proofs keep), and
 * `data.registration_scope: "domestic"`. It is not VIES's answer: it is never stored as one, and
 * `verify_id` stays VIES's consultation number (none here).
 */
import type { NationalAnswer } from '../../registries/national-port.js';
import type { ViesFailure } from '../national/index.js';
import type { AnswerOutcome } from './answers.js';
import type { FallbackMeta } from './sources.js';

export function fallbackMeta(answer: NationalAnswer, failure: ViesFailure): FallbackMeta {
  return {
    reason: failure.code,
    message: failure.message,
    checked_at: answer.checkedAt.toISOString(),
    data_date: answer.dataDate,
    register_status: answer.registerStatus,
    consultation_number: answer.consultationNumber,
    identifiers: { ...answer.identifiers },
    flags: answer.flags.map((flag) => ({
      code: flag.code,
      since: flag.since,
      register_value: flag.registerValue,
    })),
  };
}

export function fallbackOutcome(answer: NationalAnswer, failure: ViesFailure): AnswerOutcome {
  return {
    kind: 'answer',
    source: answer.source,
    sourceStatus: 'fallback',
    valid: answer.valid,
    name: answer.name,
    address: answer.address?.text ?? null,
    consultationNumber: null,
    checkedAt: answer.checkedAt,
    fromStore: false,
    fallback: fallbackMeta(answer, failure),
  };
}
