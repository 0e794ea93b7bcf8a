/** What other modules may use of `validation`; everything else in the folder is its own. */
export type { AnswerOutcome, AnswerQuery, AnswerSource } from './answers.js';
export { createCachedAnswerCheck, type ValidateQuery } from './cached.js';
export { answerRefusal, registryUnavailable, validationRefusal } from './refusals.js';
export { FallbackMetaSchema, REGISTRY_SOURCES, SOURCE_STATUSES, ValidationMetaFields } from './schemas.js';
export type { ValidationService } from './service.js';
export type {
  FallbackMeta,
  SourceStatus,
  ValidationData,
  ValidationOk,
  ValidationOutcome,
  ValidationPort,
  ValidationRefusal,
  ValidationSource,
} from './types.js';
