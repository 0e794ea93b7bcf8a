/** Request and response types of every operation, derived from the generated `openapi.ts`. */
import type { components, paths } from './openapi.js';

type Method = 'get' | 'post' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type Json<R> = R extends { content: { 'application/json': infer J } } ? J : null;
type Responses<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer R } ? R : never;
/** The JSON of the 2xx answers of an operation. */
export type Success<P extends keyof paths, M extends Method> = {
  [S in keyof Responses<P, M>]: S extends 200 | 201 | 202 | 204 ? Json<Responses<P, M>[S]> : never;
}[keyof Responses<P, M>];
/** The JSON of one status of an operation. */
export type AnswerOf<P extends keyof paths, M extends Method, S extends keyof Responses<P, M>> = Json<
  Responses<P, M>[S]
>;
/** The JSON body of an operation. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends {
    requestBody: { content: { 'application/json': infer B } };
  }
    ? B
    : never;
/** The query parameters of an operation. */
export type Query<P extends keyof paths, M extends Method> =
  Operation<P, M> extends {
    parameters: { query?: infer Q };
  }
    ? NonNullable<Q>
    : never;

/**
 * Query parameters as the client takes them: the OpenAPI types of a query are strings, but numeric
 * ones (`limit`, `days`) may be passed as numbers and `"true" | "false"` ones (`stale`) as booleans;
 * the client turns them into text.
 */
export type ClientQuery<Q> = {
  [K in keyof Q]:
    | Q[K]
    | (K extends 'limit' | 'days' ? number : never)
    | ([Exclude<Q[K], undefined>] extends ['true' | 'false'] ? boolean : never);
};

/** `meta` of every answer: at least the request id (UUID v7) to quote to support. */
export interface ResponseMeta {
  request_id: string;
  [key: string]: unknown;
}

/**
 * What every method resolves to: the answer's `{ data, meta }` envelope. Answers the service sends
 * without one (webhook registration, test sends, deletions) are put in one, with `meta.request_id`
 * from the `Service-Request-Id` header.
 */
export type Envelope<T> = T extends { data: unknown; meta: unknown } ? T : { data: T; meta: ResponseMeta };

export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ErrorCode = ErrorEnvelope['error']['code'];
export type ValidationData = components['schemas']['ValidationData'];
/** `data.match`: the company fields given against the registered ones. */
export type IdentityMatch = components['schemas']['IdentityMatch'];
export type CountryRate = components['schemas']['CountryRate'];

export type ValidateQuery = Query<'/v1/validate', 'get'>;
export interface ValidateParams {
  vat_number: string;
  requester_vat_number?: string;
  /** `false` forces a live registry call. */
  cache?: boolean;
  /** The company the number should belong to: the answer gains `data.match`. */
  company_name?: string;
  company_street?: string;
  company_postcode?: string;
  company_city?: string;
  /** Parts to add: `['peppol']` adds `data.peppol` (a Peppol outage is that part's `error` alone). */
  include?: readonly 'peppol'[];
}
export type ValidateResponse = Success<'/v1/validate', 'get'>;

export type BatchBody = RequestBody<'/v1/validate/batch', 'post'>;
export type ValidateBatchParams = Omit<BatchBody, 'async'>;
/** The synchronous answer (200); `async: true` answers 202 with the queued job. */
export type ValidateBatchResponse = AnswerOf<'/v1/validate/batch', 'post', 200>;
export type BatchJobResponse = Success<'/v1/validate/batch/{id}', 'get'>;
export type BatchJob = BatchJobResponse['data'];

export interface PeppolParams {
  /** A VAT number, `ICD:value` or `iso6523-actorid-upis::ICD:value`. */
  identifier: string;
  /** `false` asks the SML and SMPs again. */
  cache?: boolean;
}
export type PeppolResponse = Success<'/v1/peppol/{identifier}', 'get'>;
export type PeppolData = components['schemas']['PeppolData'];
/** `data.peppol` of a validation with `include: ['peppol']`: the Peppol data, or `{ error }` for it alone. */
export type PeppolPart = components['schemas']['PeppolPart'];

export type DecideBody = RequestBody<'/v1/decide', 'post'>;
export type DecideResponse = Success<'/v1/decide', 'post'>;

export type ConfirmBody = RequestBody<'/v1/confirm', 'post'>;
export type ConfirmResponse = Success<'/v1/confirm', 'post'>;
export type ConfirmationResponse = Success<'/v1/confirmations/{id}', 'get'>;

export type AuditResponse = Success<'/v1/audits/{request_id}', 'get'>;

export type RatesQuery = ClientQuery<Query<'/v1/rates', 'get'>>;
export type RatesResponse = Exclude<Success<'/v1/rates', 'get'>, null>;
export type RateQuery = ClientQuery<Query<'/v1/rates/{country}', 'get'>>;
export type RateResponse = Exclude<Success<'/v1/rates/{country}', 'get'>, null>;

export type StatusResponse = Success<'/v1/status', 'get'>;
export type HealthResponse = Success<'/health', 'get'>;

export type UsageQuery = ClientQuery<Query<'/v1/usage', 'get'>>;
export type UsageResponse = Success<'/v1/usage', 'get'>;

export type WebhookCreateBody = RequestBody<'/v1/webhooks', 'post'>;
export type WebhookCreated = Success<'/v1/webhooks', 'post'>;
export type WebhookListResponse = Success<'/v1/webhooks', 'get'>;
export type WebhookUpdateBody = RequestBody<'/v1/webhooks/{id}', 'patch'>;
export type WebhookUpdateResponse = Success<'/v1/webhooks/{id}', 'patch'>;
export type WebhookTestResult = Success<'/v1/webhooks/{id}/test', 'post'>;
export type WebhookDeliveriesQuery = ClientQuery<Query<'/v1/webhooks/{id}/deliveries', 'get'>>;
export type WebhookDeliveriesResponse = Success<'/v1/webhooks/{id}/deliveries', 'get'>;
export type WebhookReplayResponse = Success<'/v1/webhooks/{id}/deliveries/{delivery_id}/replay', 'post'>;

export type MonitorCreateBody = RequestBody<'/v1/monitors', 'post'>;
export type MonitorCreated = Success<'/v1/monitors', 'post'>;
export type MonitorBulkBody = RequestBody<'/v1/monitors/bulk', 'post'>;
export type MonitorBulkResponse = Success<'/v1/monitors/bulk', 'post'>;
export type MonitorListQuery = ClientQuery<Query<'/v1/monitors', 'get'>>;
export type MonitorListResponse = Success<'/v1/monitors', 'get'>;
export type Monitor = MonitorListResponse['data'][number];
export type MonitorResponse = Success<'/v1/monitors/{id}', 'get'>;
export type MonitorUpdateBody = RequestBody<'/v1/monitors/{id}', 'patch'>;
export type MonitorUpdateResponse = Success<'/v1/monitors/{id}', 'patch'>;
export type MonitorCheckResponse = Success<'/v1/monitors/{id}/check', 'post'>;
export type MonitorChangesQuery = ClientQuery<Query<'/v1/monitors/changes', 'get'>>;
export type MonitorChangesResponse = Success<'/v1/monitors/changes', 'get'>;
export type MonitorSummaryResponse = Success<'/v1/monitors/summary', 'get'>;
