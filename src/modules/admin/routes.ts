import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { stringify } from 'csv-stringify/sync';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { baseMeta } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses, Nullable } from '../../http/schemas.js';
import { isUuid } from '../../lib/ids.js';
import type { KeyManagement } from '../keys/index.js';
import { actorOf, type RequireAdmin } from './auth.js';
import {
  Account,
  AccountCreate,
  AccountPatch,
  AuditEntry,
  Id,
  Key,
  KeyCreate,
  KeyPatch,
  KeyWithSecret,
  Paging,
  Query,
  Roll,
  UsageRow,
} from './schemas.js';
import type { AdminService } from './service.js';

const PAGE = { min: 1, max: 200, fallback: 50 };
const DAY_MS = 86_400_000;

function pageLimit(raw: string | undefined): number {
  const limit = raw === undefined ? PAGE.fallback : Number(raw);
  if (limit < PAGE.min || limit > PAGE.max)
    throw errors.invalidRequest(`limit must be a whole number between ${PAGE.min} and ${PAGE.max}.`);
  return limit;
}

function cursorOf(raw: string | undefined): { after?: string } {
  if (raw === undefined) return {};
  if (!isUuid(raw))
    throw errors.invalidRequest('cursor is not a cursor this API returned (use meta.next_cursor).');
  return { after: raw };
}

const hidden = { hide: true, security: [{ adminKey: [] }] };
const paged = <T extends Parameters<typeof Envelope>[0]>(item: T) =>
  Envelope(Type.Array(item), { next_cursor: Nullable(Type.String()) });

/** The admin API under `/admin/v1`: accounts, keys, usage and the audit log. */
export function adminRoutes(deps: {
  admin: AdminService;
  manage: KeyManagement;
  requireAdmin: RequireAdmin;
  /** Writes this instance's usage counts not yet written, so the answer includes them. */
  flushUsage: () => Promise<void>;
}) {
  const { admin, manage, requireAdmin } = deps;
  return async function register(fastify: FastifyInstance) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/admin/v1/accounts',
      {
        onRequest: requireAdmin('admin'),
        schema: {
          ...hidden,
          tags: ['Accounts'],
          summary: 'Create an account',
          body: AccountCreate,
          response: { 201: Envelope(Account), ...errorResponses },
        },
      },
      async (request, reply) => {
        const data = await manage.createAccount(request.body, admin.recorder(actorOf(request)));
        return reply.code(201).send({ data, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/admin/v1/accounts',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Accounts'],
          summary: 'List accounts; search by name or external id',
          querystring: Query({
            q: Type.Optional(
              Type.String({ maxLength: 200, description: 'Part of the name or external id.' }),
            ),
            external_id: Type.Optional(Type.String({ maxLength: 200 })),
            ...Paging,
          }),
          response: { 200: paged(Account), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { q, external_id, cursor, limit } = request.query;
        const page = await manage.listAccounts({
          ...(q ? { q } : {}),
          ...(external_id ? { external_id } : {}),
          ...cursorOf(cursor),
          limit: pageLimit(limit),
        });
        return reply.send({ data: page.data, meta: { ...baseMeta(request, reply), next_cursor: page.next } });
      },
    );

    app.get(
      '/admin/v1/accounts/:id',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Accounts'],
          summary: 'An account',
          params: Id,
          response: { 200: Envelope(Account), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.getAccount(request.params.id);
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply.send({ data: outcome.account, meta: baseMeta(request, reply) });
      },
    );

    app.patch(
      '/admin/v1/accounts/:id',
      {
        onRequest: requireAdmin('admin'),
        schema: {
          ...hidden,
          tags: ['Accounts'],
          summary: 'Change an account; `disabled: true` stops every key of it at once',
          params: Id,
          body: AccountPatch,
          response: { 200: Envelope(Account), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.updateAccount(
          request.params.id,
          request.body,
          admin.recorder(actorOf(request)),
        );
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply.send({ data: outcome.account, meta: baseMeta(request, reply) });
      },
    );

    app.post(
      '/admin/v1/keys',
      {
        onRequest: requireAdmin('admin'),
        schema: {
          ...hidden,
          tags: ['Keys'],
          summary: 'Create a key; the secret is in `data.key`, shown this once',
          body: KeyCreate,
          response: { 201: Envelope(KeyWithSecret), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.createKey(request.body, admin.recorder(actorOf(request)));
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply
          .code(201)
          .send({ data: { ...outcome.key, key: outcome.secret }, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/admin/v1/keys',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Keys'],
          summary: 'List keys',
          querystring: Query({
            account_id: Type.Optional(Type.String({ format: 'uuid' })),
            plan: Type.Optional(KeyCreate.properties.plan),
            mode: Type.Optional(KeyCreate.properties.mode),
            status: Type.Optional(Key.properties.status),
            prefix: Type.Optional(Type.String({ maxLength: 32 })),
            ...Paging,
          }),
          response: { 200: paged(Key), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { cursor, limit, ...filters } = request.query;
        const page = await manage.listKeys({
          ...filters,
          ...cursorOf(cursor),
          limit: pageLimit(limit),
        });
        return reply.send({ data: page.data, meta: { ...baseMeta(request, reply), next_cursor: page.next } });
      },
    );

    app.get(
      '/admin/v1/keys/:id',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Keys'],
          summary: 'A key',
          params: Id,
          response: { 200: Envelope(Key), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.getKey(request.params.id);
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply.send({ data: outcome.key, meta: baseMeta(request, reply) });
      },
    );

    app.patch(
      '/admin/v1/keys/:id',
      {
        onRequest: requireAdmin('admin'),
        schema: {
          ...hidden,
          tags: ['Keys'],
          summary: "Change a key's settings",
          params: Id,
          body: KeyPatch,
          response: { 200: Envelope(Key), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.updateKey(
          request.params.id,
          request.body,
          admin.recorder(actorOf(request)),
        );
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply.send({ data: outcome.key, meta: baseMeta(request, reply) });
      },
    );

    app.post(
      '/admin/v1/keys/:id/revoke',
      {
        onRequest: requireAdmin('admin'),
        schema: {
          ...hidden,
          tags: ['Keys'],
          summary: 'Revoke a key (at once, on every instance)',
          params: Id,
          response: { 200: Envelope(Key), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.revokeKey(request.params.id, admin.recorder(actorOf(request)));
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply.send({ data: outcome.key, meta: baseMeta(request, reply) });
      },
    );

    app.post(
      '/admin/v1/keys/:id/roll',
      {
        onRequest: requireAdmin('admin'),
        schema: {
          ...hidden,
          tags: ['Keys'],
          summary: 'A new key with the same settings; the old one works until the overlap ends',
          params: Id,
          body: Roll,
          response: { 201: Envelope(KeyWithSecret), ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await manage.rollKey(
          request.params.id,
          request.body.overlap_seconds,
          admin.recorder(actorOf(request)),
        );
        if (outcome.kind === 'refused') throw refusalError(outcome);
        return reply
          .code(201)
          .send({ data: { ...outcome.key, key: outcome.secret }, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/admin/v1/usage',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Usage'],
          summary: 'Requests per account, key, day and operation (CSV with `Accept: text/csv`)',
          querystring: Query({
            from: Type.Optional(
              Type.String({ format: 'date', description: 'First UTC day; default 30 days ago.' }),
            ),
            to: Type.Optional(Type.String({ format: 'date', description: 'Last UTC day; default today.' })),
            account_id: Type.Optional(Type.String({ format: 'uuid' })),
            key_id: Type.Optional(Type.String({ format: 'uuid' })),
          }),
          response: { 200: Envelope(Type.Array(UsageRow)), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { from, to, account_id, key_id } = request.query;
        const today = new Date().toISOString().slice(0, 10);
        const last = to ?? today;
        const first =
          from ?? new Date(Date.parse(`${last}T00:00:00Z`) - 29 * DAY_MS).toISOString().slice(0, 10);
        if (first > last) throw errors.invalidRequest(`from (${first}) is after to (${last}).`);
        await deps.flushUsage();
        const rows = await admin.usage({
          from: first,
          to: last,
          ...(account_id ? { account_id } : {}),
          ...(key_id ? { key_id } : {}),
        });
        if ((request.headers.accept ?? '').includes('text/csv')) {
          const csv = stringify(rows, {
            header: true,
            columns: ['account_id', 'key_id', 'day', 'operation', 'requests', 'errors'],
          });
          return reply
            .type('text/csv; charset=utf-8')
            .serializer((payload: unknown) => String(payload))
            .send(csv);
        }
        return reply.send({ data: rows, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/admin/v1/audit-log',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Audit log'],
          summary: 'Every admin write, newest first',
          querystring: Query({
            actor_id: Type.Optional(Type.String({ format: 'uuid' })),
            target_id: Type.Optional(Type.String({ format: 'uuid' })),
            from: Type.Optional(Type.String({ format: 'date-time' })),
            to: Type.Optional(Type.String({ format: 'date-time' })),
            ...Paging,
          }),
          response: { 200: paged(AuditEntry), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { cursor, limit, from, to, ...filters } = request.query;
        const after = cursorOf(cursor).after;
        const page = await admin.auditLog({
          ...filters,
          ...(from ? { from: new Date(from).toISOString() } : {}),
          ...(to ? { to: new Date(to).toISOString() } : {}),
          ...(after ? { before: after } : {}),
          limit: pageLimit(limit),
        });
        return reply.send({ data: page.data, meta: { ...baseMeta(request, reply), next_cursor: page.next } });
      },
    );
  };
}
