export {
  type ClientOptions,
  type ConfirmOptions,
  type ConfirmResult,
  type FollowOptions,
  MAX_RETRY_AFTER_SECONDS,
  OpenVat,
  type RequestOptions,
  type SubmitAllOptions,
} from './client.js';
export {
  AbortError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  errorFamily,
  IdempotencyInProgressError,
  InvalidRequestError,
  NotFoundError,
  OpenVatError,
  PlanRequiredError,
  RateLimitError,
  RegistryUnavailableError,
  TimeoutError,
} from './errors.js';
export type { components, paths } from './openapi.js';
export type * from './types.js';
export {
  type BatchCompletedEvent,
  type BatchJobCompletedEvent,
  type BatchSyncCompletedEvent,
  type HeadersLike,
  isBatchJobEvent,
  type MonitorEventPayload,
  type TestEvent,
  type ValidationCompletedEvent,
  type VatNumberChangedEvent,
  type VatNumberCheckFailedEvent,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks.js';
