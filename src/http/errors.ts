import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { type ErrorCode, isConnectionFailure, MALFORMED_CODE } from '../lib/errors.js';
import { ApiError } from './api-error.js';
import { redactUrl } from './log-redaction.js';
import { baseMeta } from './meta.js';
import { WHOLE_NUMBER_RANGE, wholeNumberMessage } from './schemas.js';

function envelope(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
) {
  return { error: { code, message, ...(details ? { details } : {}) }, meta: baseMeta(request, reply) };
}

/** JSON types as a sentence names them: `must be an object`, `must be a string or null`. */
const TYPE_WORDS: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  null: 'null',
};

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type.map(String) : String(type).split(',');
  return types.map((t) => TYPE_WORDS[t] ?? t).join(' or ');
}

/** The range a query parameter's schema declares through `WholeNumberQuery`, if any. */
function wholeNumberRange(request: FastifyRequest, name: string): { min: number; max: number } | null {
  const schema = request.routeOptions?.schema?.querystring as
    | { properties?: Record<string, Record<symbol, unknown>> }
    | undefined;
  const range = schema?.properties?.[name]?.[WHOLE_NUMBER_RANGE];
  return (range as { min: number; max: number } | undefined) ?? null;
}

function describeValidation(error: FastifyError, request: FastifyRequest): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const path = first.instancePath ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : '';
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'additionalProperties') {
    const field = String(params.additionalProperty);
    return `Unknown field "${path ? `${path}.` : ''}${field}" in the ${where}.`;
  }
  if (first.keyword === 'required') {
    return `Missing required field "${path ? `${path}.` : ''}${String(params.missingProperty)}" in the ${where}.`;
  }
  const subject = path ? `Field "${path}" in the ${where}` : `The ${where}`;
  if (first.keyword === 'type') return `${subject} must be ${typeWords(params.type)}.`;
  if (first.keyword === 'pattern' && where === 'querystring' && path && !path.includes('.')) {
    // A query value is text: a number in it is checked by its pattern, and refused in words.
    const range = wholeNumberRange(request, path);
    if (range) return wholeNumberMessage(path, range);
  }
  // A closed list (an enum, or a union of literals, which reports one `const` error per member).
  if (first.keyword === 'enum' || first.keyword === 'const') {
    const allowed =
      first.keyword === 'enum'
        ? (params.allowedValues as unknown[])
        : (error.validation ?? [])
            .filter((e) => e.keyword === 'const' && e.instancePath === first.instancePath)
            .map((e) => (e.params as { allowedValue: unknown }).allowedValue);
    return allowed.length === 1
      ? `${subject} must be ${JSON.stringify(allowed[0])}.`
      : `${subject} must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}.`;
  }
  return `${subject} ${first.message ?? 'is invalid'}.`;
}

/** An error's answer: its status, its code from the closed list and its message. */
interface ErrorAnswer {
  status: number;
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown> | undefined;
  headers?: Record<string, string> | undefined;
}

/** Fastify's errors of a request body it could not read, and their answers. */
const BODY_ERRORS: Readonly<Record<string, ErrorAnswer>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'payload_too_large',
    message: 'The request body is larger than allowed.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 400,
    code: MALFORMED_CODE,
    message: 'Unsupported Content-Type: send the body as application/json.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: MALFORMED_CODE,
    message: 'The JSON request body is empty.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: MALFORMED_CODE,
    message: 'Content-Length does not match the body.',
  },
};

/** The answer of a request that cannot be served as sent (a 4xx); null for any other error. */
function requestErrorAnswer(error: FastifyError, request: FastifyRequest): ErrorAnswer | null {
  if (error.validation)
    return { status: 400, code: MALFORMED_CODE, message: describeValidation(error, request) };
  const body = Object.hasOwn(BODY_ERRORS, error.code) ? BODY_ERRORS[error.code] : undefined;
  if (body) return body;
  const status = error.statusCode ?? 500;
  if (status === 429) return { status: 429, code: 'rate_limited', message: 'Too many requests.' };
  if (status < 400 || status >= 500) return null;
  const message =
    error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
      ? 'The request body is not valid JSON.'
      : error.message || 'Bad request.';
  return { status: status === 415 ? 400 : status, code: MALFORMED_CODE, message };
}

/** The answer of an error of ours (logged): the database out of reach (503, retry), anything else 500. */
function serverErrorAnswer(error: FastifyError, request: FastifyRequest, log: Logger): ErrorAnswer {
  const context = { err: error, request_id: request.id, method: request.method, url: redactUrl(request.url) };
  if (isConnectionFailure(error)) {
    // The database is down or restarting: a retry in a few seconds may succeed.
    // The closed list of codes has no word for it; 503 with Retry-After says what a client can do.
    log.warn(context, 'database unreachable');
    return {
      status: 503,
      code: 'internal_error',
      message: 'openvat cannot reach its database right now; retry in a few seconds.',
      headers: { 'retry-after': '5' },
    };
  }
  log.error(context, 'unhandled error');
  return {
    status: 500,
    code: 'internal_error',
    message: 'Something went wrong on our side; it has been logged.',
  };
}

/** Every error's answer: an API error's own, then a request's fault, then ours. */
function answerOf(error: FastifyError | ApiError, request: FastifyRequest, log: Logger): ErrorAnswer {
  if (error instanceof ApiError) {
    const { statusCode: status, code, message, details, headers } = error;
    return { status, code, message, details, headers };
  }
  return requestErrorAnswer(error, request) ?? serverErrorAnswer(error, request, log);
}

/** Maps every error to the error envelope: a closed code, a clear message, never a stack trace. */
export function registerErrorHandling(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const answer = answerOf(error, request, log);
    if (answer.headers) reply.headers(answer.headers);
    return reply
      .code(answer.status)
      .send(envelope(request, reply, answer.code, answer.message, answer.details));
  });

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(
        envelope(
          request,
          reply,
          'not_found',
          `No route ${request.method} ${truncate(request.url.split('?')[0] ?? '', 200)}.`,
        ),
      );
  });
}

function truncate(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/**
 * Errors Fastify raises before a route is found (its `frameworkErrors` option): a path parameter
 * longer than the router allows, a path that is not valid percent-encoded UTF-8. Without this they
 * get Fastify's own JSON, outside the envelope and without a request id.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  request.startedAt = performance.now();
  reply.header('service-request-id', request.id).header('x-request-id', request.id);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply
      .code(414)
      .send(envelope(request, reply, MALFORMED_CODE, 'A segment of the URL path is longer than allowed.'));
    return;
  }
  reply
    .code(400)
    .send(envelope(request, reply, MALFORMED_CODE, 'The URL path is not valid: percent-encode it as UTF-8.'));
}
