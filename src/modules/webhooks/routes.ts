import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { baseMeta } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import {
  Envelope,
  errorResponses,
  Nullable,
  WholeNumberQuery,
  wholeNumberMessage,
} from '../../http/schemas.js';
import { isUuid } from '../../lib/ids.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import {
  listDeliveriesAndTheirAttemptsDescription,
  registerAWebhookEndpointDescription,
  sendATestEventDescription,
} from './schemas.js';
import { deliveryNotFound, endpointNotFound, type WebhooksService } from './service.js';
import { SUBSCRIBABLE_EVENTS } from './subscriptions.js';
import { MAX_URL_LENGTH } from './url-guard.js';

const Id = Type.String({ format: 'uuid', description: 'Webhook endpoint id (UUID v7).' });

/** The events an endpoint subscribes to, as a request names them. */
const EventsList = Type.Array(Type.Union(SUBSCRIBABLE_EVENTS.map((e) => Type.Literal(e))), {
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENTS.length * 2,
  description: `The events this endpoint receives, among ${SUBSCRIBABLE_EVENTS.map((e) => `\`${e}\``).join(', ')}. Without it, the endpoint receives its key's \`validation.completed\`, \`batch.completed\`, \`vat_number.changed\`, \`vat_number.check_failed\` and \`peppol.changed\`; \`rates.changed\` is sent only to endpoints that list it.`,
});
const EventsShown = Type.Array(Type.String());
const Timestamp = Type.String({ format: 'date-time' });

const CreatedEndpoint = Type.Object({
  id: Id,
  url: Type.String(),
  secret: Type.String({
    description:
      'Signing secret (`whsec_` + base64). Returned here only: store it to verify `Service-Signature`.',
  }),
  created_at: Timestamp,
  events: Type.Optional(
    Type.Array(Type.String(), { description: 'The events it receives, when the registration named them.' }),
  ),
});

const WebhookEndpoint = Type.Object({
  id: Id,
  url: Type.String(),
  created_at: Timestamp,
  events: Type.Union([EventsShown, Type.Null()], {
    description:
      "The events it receives; null for the default ones (its key's four events, not `rates.changed`).",
  }),
  disabled: Type.Boolean({ description: 'A disabled endpoint receives nothing but still uses a slot.' }),
  failing: Type.Boolean({ description: 'True when the most recently finished delivery failed.' }),
  last_delivery: Nullable(
    Type.Object({
      status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
      at: Timestamp,
      http_status: Nullable(Type.Integer()),
    }),
  ),
});

const Attempt = Type.Object({
  id: Type.String({ description: 'The `Service-Delivery-Id` header of this attempt (UUID v7).' }),
  attempt: Type.Integer({ description: 'Attempt number, from 1.' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
  http_status: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when none came." })),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String()),
  at: Timestamp,
});

const Delivery = Type.Object({
  id: Type.String({ description: 'Delivery id (one event to one endpoint), used to replay it.' }),
  event: Type.String({
    description:
      '`validation.completed`, `batch.completed`, `vat_number.changed`, `vat_number.check_failed`, `peppol.changed` or `rates.changed`.',
  }),
  event_id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  created_at: Timestamp,
  next_attempt_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  last_error: Nullable(Type.String()),
  attempts: Type.Array(Attempt),
});

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const security = [{ apiKey: [] }];
const tags = ['Webhooks'];

/** The deliveries one page of `GET /v1/webhooks/{id}/deliveries` lists. */
const DELIVERIES_LIMIT = { min: 1, max: 100 };

export function webhooksRoutes(deps: { webhooks: WebhooksService; requireKey: RequireKey }) {
  const { webhooks, requireKey } = deps;
  const auth = requireKey('webhooks');
  const notFound = () => refusalError(endpointNotFound());

  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/webhooks',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Register a webhook endpoint',
          description: registerAWebhookEndpointDescription,
          security,
          // Unknown fields are ignored, not refused, as by the hosted contract.
          body: Type.Object({
            url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'An https:// URL.' }),
            events: Type.Optional(EventsList),
          }),
          response: { 201: CreatedEndpoint, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { url, events } = request.body;
        const result = await webhooks.register(principalOf(request), url, events);
        if (result.kind === 'refused') throw refusalError(result);
        return reply.code(201).send(result.endpoint);
      },
    );

    app.get(
      '/v1/webhooks',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'List webhook endpoints',
          description: "This key's endpoints, oldest first, with their state and last delivery attempt.",
          security,
          response: { 200: Envelope(Type.Array(WebhookEndpoint)), ...errorResponses },
        },
      },
      async (request, reply) => {
        const data = await webhooks.list(principalOf(request));
        return reply.send({ data, meta: baseMeta(request, reply) });
      },
    );

    app.patch(
      '/v1/webhooks/:id',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Disable, enable or resubscribe a webhook endpoint',
          description:
            'A disabled endpoint receives no events (deliveries still queued end as failed, unsent) and still counts toward the limit. `events` replaces the events it receives; `null` goes back to the default ones.',
          security,
          params: IdParams,
          body: Type.Object(
            {
              disabled: Type.Optional(Type.Boolean()),
              events: Type.Optional(Nullable(EventsList)),
            },
            { additionalProperties: false },
          ),
          response: { 200: Envelope(WebhookEndpoint), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const { disabled, events } = request.body;
        if (disabled === undefined && events === undefined)
          throw errors.invalidRequest('Send "disabled", "events" or both in the body.');
        if (!isUuid(id)) throw notFound();
        const updated = await webhooks.update(principalOf(request), id, {
          ...(disabled !== undefined ? { disabled } : {}),
          ...(events !== undefined ? { events } : {}),
        });
        if (updated.kind === 'refused') throw refusalError(updated);
        return reply.send({ data: updated.endpoint, meta: baseMeta(request, reply) });
      },
    );

    app.delete(
      '/v1/webhooks/:id',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Delete a webhook endpoint',
          description: 'Deletes the endpoint with its queued deliveries and attempt log, freeing its slot.',
          security,
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isUuid(id)) throw notFound();
        const removed = await webhooks.remove(principalOf(request), id);
        if (removed.kind === 'refused') throw refusalError(removed);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/webhooks/:id/test',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Send a test event',
          description: sendATestEventDescription,
          security,
          params: IdParams,
          response: {
            200: Type.Object({
              delivered: Type.Boolean({ description: 'True when the receiver answered 2xx within 10 s.' }),
              status: Type.Integer({
                description: "The receiver's HTTP status; 0 when it did not answer (see `error`).",
              }),
              error: Type.Optional(
                Type.String({ description: 'Why no HTTP status came: connection refused, timeout, …' }),
              ),
              latency_ms: Type.Integer({ description: 'Milliseconds until the answer or the failure.' }),
            }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isUuid(id)) throw notFound();
        const sent = await webhooks.sendTest(principalOf(request), id, request.id);
        if (sent.kind === 'refused') throw refusalError(sent);
        return reply.send(sent.result);
      },
    );

    app.get(
      '/v1/webhooks/:id/deliveries',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'List deliveries and their attempts',
          description: listDeliveriesAndTheirAttemptsDescription,
          security,
          params: IdParams,
          querystring: Type.Object(
            {
              limit: Type.Optional(
                WholeNumberQuery({ ...DELIVERIES_LIMIT, digits: 3, description: '1–100, default 50.' }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Envelope(Type.Array(Delivery)), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const { limit: rawLimit } = request.query;
        const limit = rawLimit === undefined ? 50 : Number(rawLimit);
        if (limit < DELIVERIES_LIMIT.min || limit > DELIVERIES_LIMIT.max)
          throw errors.invalidRequest(wholeNumberMessage('limit', DELIVERIES_LIMIT));
        if (!isUuid(id)) throw notFound();
        const listed = await webhooks.deliveries(principalOf(request), id, limit);
        if (listed.kind === 'refused') throw refusalError(listed);
        return reply.send({ data: listed.deliveries, meta: baseMeta(request, reply) });
      },
    );

    app.post(
      '/v1/webhooks/:id/deliveries/:delivery_id/replay',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Replay a delivery',
          description:
            'Puts a failed (or delivered) delivery back in the queue with a fresh budget of 4 attempts. Each new attempt has a new `Service-Delivery-Id`. A disabled endpoint\'s deliveries are not replayed (400 `invalid_format`, `details.reason: "endpoint_disabled"`).',
          security,
          params: Type.Object({
            id: Type.String({ maxLength: 64 }),
            delivery_id: Type.String({ maxLength: 64 }),
          }),
          response: { 202: Envelope(Delivery), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id, delivery_id } = request.params;
        if (!isUuid(id) || !isUuid(delivery_id)) throw refusalError(deliveryNotFound());
        const result = await webhooks.replay(principalOf(request), id, delivery_id);
        if (result.kind === 'refused') throw refusalError(result);
        return reply.code(202).send({ data: result.delivery, meta: baseMeta(request, reply) });
      },
    );
  };
}
