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
import { refusal } from '../../lib/refusal.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import { peppolAllowed } from '../peppol/index.js';
import { validationRefusal } from '../validation/index.js';
import { limitMessage, type MonitorLimit } from './create.js';
import { checkMetadata, isoTime, PEPPOL_SCOPE } from './request-checks-routes.js';
import {
  BulkBody,
  BulkRow,
  CHANGES_LIMIT,
  Change,
  Check,
  CheckResult,
  CreateBody,
  changeAMonitorDescription,
  checkAMonitorNowDescription,
  createMonitorDescription,
  IdParams,
  IntervalSchema,
  LIST_LIMIT,
  ListQuery,
  listMonitorsDescription,
  Metadata,
  Monitor,
  monitorManyVatNumbersDescription,
  recentChangesDescription,
} from './schemas.js';
import { BULK_LIMIT, type MonitorInput, type MonitorsService, monitorNotFound } from './service.js';

const tags = ['Monitoring'];
const security = [{ apiKey: [] }];

export function monitorsRoutes(deps: {
  monitors: MonitorsService;
  requireKey: RequireKey;
  /** Request body limit of the bulk endpoint (10,000 numbers must fit). */
  bodyLimit: number;
  maxPerKey: Readonly<Record<'pro' | 'business', number>>;
}) {
  const { monitors, requireKey } = deps;
  const auth = requireKey('monitors');
  const notFound = (id: string) => refusalError(monitorNotFound(id));
  const limitError = (limit: MonitorLimit) =>
    refusalError(refusal('monitor_limit_reached', limitMessage(limit), { max: limit.max }));
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/monitors',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Monitor a VAT number',
          description: createMonitorDescription(deps.maxPerKey),

          security,
          body: CreateBody,
          response: { 200: Envelope(CheckResult), 201: Envelope(CheckResult), ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const tooBig = checkMetadata(body.metadata, 'metadata');
        if (tooBig) throw errors.invalidRequest(tooBig);
        if (body.peppol && !peppolAllowed(principalOf(request))) throw errors.scopeNotAllowed(PEPPOL_SCOPE);
        const outcome = await monitors.create(principalOf(request), body, request.ip);
        switch (outcome.kind) {
          case 'refused':
            throw refusalError(validationRefusal(outcome));
          case 'limit_reached':
            throw limitError(outcome);
          case 'existing': {
            const found = await monitors.get(principalOf(request), outcome.monitor.id);
            const check = found.kind === 'ok' ? (found.view.checks[0] ?? null) : null;
            return reply.send({
              data: { monitor: outcome.monitor, check, changes: [] },
              meta: baseMeta(request, reply),
            });
          }
          case 'created':
            return reply.code(201).send({ data: outcome.result, meta: baseMeta(request, reply) });
        }
      },
    );

    app.post(
      '/v1/monitors/bulk',
      {
        onRequest: auth,
        bodyLimit: deps.bodyLimit,
        schema: {
          tags,
          summary: 'Monitor many VAT numbers',
          description: monitorManyVatNumbersDescription,
          security,
          body: BulkBody,
          response: {
            200: Envelope(
              Type.Object({
                summary: Type.Object({
                  total: Type.Integer(),
                  created: Type.Integer(),
                  existing: Type.Integer(),
                  failed: Type.Integer(),
                }),
                results: Type.Array(BulkRow),
              }),
            ),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        if (body.monitors.length > BULK_LIMIT) {
          // Too many numbers in one request: the code batches answer for the same.
          throw refusalError(
            refusal(
              'batch_too_large',
              `A bulk request takes at most ${BULK_LIMIT.toLocaleString('en')} numbers (got ${body.monitors.length.toLocaleString('en')}); split the list.`,
              { max: BULK_LIMIT, got: body.monitors.length },
            ),
          );
        }
        body.monitors.forEach((row, i) => {
          const tooBig = checkMetadata(row.metadata, `monitors[${i}].metadata`);
          if (tooBig) throw errors.invalidRequest(tooBig);
        });
        const wantsPeppol = body.peppol === true || body.monitors.some((row) => row.peppol === true);
        if (wantsPeppol && !peppolAllowed(principalOf(request))) throw errors.scopeNotAllowed(PEPPOL_SCOPE);
        const inputs = body.monitors.map(
          (row) =>
            ({
              ...row,
              interval: row.interval ?? body.interval ?? 'daily',
              peppol: row.peppol ?? body.peppol ?? false,
            }) as MonitorInput,
        );
        const data = await monitors.createMany(principalOf(request), inputs, request.ip);
        return reply.send({ data, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/v1/monitors',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'List monitors',
          description: listMonitorsDescription,
          security,
          querystring: ListQuery,
          response: {
            200: Envelope(Type.Array(Monitor), { next_cursor: Nullable(Type.String()) }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const limit = query.limit === undefined ? 100 : Number(query.limit);
        if (limit < LIST_LIMIT.min || limit > LIST_LIMIT.max)
          throw errors.invalidRequest(wholeNumberMessage('limit', LIST_LIMIT));
        if (query.cursor !== undefined && !isUuid(query.cursor))
          throw errors.invalidRequest('cursor is not a cursor this API returned (use meta.next_cursor).');
        const changedSince =
          query.changed_since === undefined ? undefined : isoTime(query.changed_since, 'changed_since');
        const page = await monitors.list(principalOf(request), {
          limit,
          ...(query.status ? { status: query.status } : {}),
          ...(changedSince ? { changedSince } : {}),
          ...(query.stale ? { stale: query.stale === 'true' } : {}),
          ...(query.cursor ? { after: query.cursor } : {}),
        });
        return reply.send({
          data: page.monitors,
          meta: { ...baseMeta(request, reply), next_cursor: page.next },
        });
      },
    );

    app.get(
      '/v1/monitors/changes',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Recent changes',
          description: recentChangesDescription,
          security,
          querystring: Type.Object(
            {
              since: Type.Optional(Type.String({ maxLength: 40 })),
              limit: Type.Optional(
                WholeNumberQuery({ ...CHANGES_LIMIT, digits: 4, description: '1 to 1,000 (default 100).' }),
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Envelope(
              Type.Array(
                Type.Object({
                  ...Change.properties,
                  monitor_id: Type.String({ format: 'uuid' }),
                  vat_number: Type.String(),
                  reference: Nullable(Type.String()),
                }),
              ),
            ),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const limit = query.limit === undefined ? 100 : Number(query.limit);
        if (limit < CHANGES_LIMIT.min || limit > CHANGES_LIMIT.max)
          throw errors.invalidRequest(wholeNumberMessage('limit', CHANGES_LIMIT));
        const since = query.since === undefined ? undefined : isoTime(query.since, 'since');
        const data = await monitors.changes(principalOf(request), { limit, ...(since ? { since } : {}) });
        return reply.send({ data, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/v1/monitors/summary',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Monitors per state',
          description:
            "How many numbers this key monitors, per status and stale, and its plan's cap (`max`).",
          security,
          response: {
            200: Envelope(
              Type.Object({
                total: Type.Integer(),
                valid: Type.Integer(),
                invalid: Type.Integer(),
                unknown: Type.Integer(),
                stale: Type.Integer(),
                max: Type.Integer(),
              }),
            ),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const data = await monitors.summary(principalOf(request));
        return reply.send({ data, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/v1/monitors/:id',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'A monitor with its history',
          description: 'The monitor with its latest 50 checks and latest 50 changes, newest first.',
          security,
          params: IdParams,
          response: {
            200: Envelope(
              Type.Object({ monitor: Monitor, checks: Type.Array(Check), changes: Type.Array(Change) }),
            ),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isUuid(id)) throw notFound(id);
        const found = await monitors.get(principalOf(request), id);
        if (found.kind === 'refused') throw refusalError(found);
        return reply.send({ data: found.view, meta: baseMeta(request, reply) });
      },
    );

    app.patch(
      '/v1/monitors/:id',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Change a monitor',
          description: changeAMonitorDescription,
          security,
          params: IdParams,
          body: Type.Object(
            {
              interval: Type.Optional(IntervalSchema),
              reference: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
              metadata: Type.Optional(Nullable(Metadata)),
              peppol: Type.Optional(
                Type.Boolean({
                  description:
                    '`true` starts checking Peppol reachability with the next check; `false` stops it and forgets the last known state.',
                }),
              ),
            },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: { 200: Envelope(Monitor), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const body = request.body;
        const tooBig = checkMetadata(body.metadata ?? undefined, 'metadata');
        if (tooBig) throw errors.invalidRequest(tooBig);
        if (body.peppol && !peppolAllowed(principalOf(request))) throw errors.scopeNotAllowed(PEPPOL_SCOPE);
        if (!isUuid(id)) throw notFound(id);
        const updated = await monitors.update(principalOf(request), id, body);
        if (updated.kind === 'refused') throw refusalError(updated);
        return reply.send({ data: updated.monitor, meta: baseMeta(request, reply) });
      },
    );

    app.delete(
      '/v1/monitors/:id',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Stop monitoring a number',
          description:
            'Deletes the monitor with its checks and changes; the audit records of its checks stay until they expire.',
          security,
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isUuid(id)) throw notFound(id);
        const removed = await monitors.remove(principalOf(request), id);
        if (removed.kind === 'refused') throw refusalError(removed);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/monitors/:id/check',
      {
        onRequest: auth,
        schema: {
          tags,
          summary: 'Check a monitor now',
          description: checkAMonitorNowDescription,
          security,
          params: IdParams,
          response: { 200: Envelope(CheckResult), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isUuid(id)) throw notFound(id);
        const checked = await monitors.checkNow(principalOf(request), id);
        if (checked.kind === 'refused') throw refusalError(checked);
        return reply.send({ data: checked.result, meta: baseMeta(request, reply) });
      },
    );
  };
}
