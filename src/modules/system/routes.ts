import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import { baseMeta } from '../../http/meta.js';
import { PACKAGE } from '../../http/package.js';

export function systemRoutes(deps: {
  db: Pick<Db, 'ping'>;
  /** Operator warnings shown in `/ready` (e.g. several instances without Redis). */
  warnings?: () => string[];
  /**
   * The evidence check, with an evidence key: null when the chain head verifies, else why
   * confirmations are stopped (reported in `/ready`, which stays 200: everything else still works).
   */
  evidence?: () => Promise<{ message: string } | null>;
}) {
  return async function register(app: FastifyInstance) {
    app.get(
      '/health',
      {
        schema: {
          tags: ['System'],
          summary: 'Liveness: the process is up',
          response: {
            200: {
              description: 'The process is up.',
              headers: {
                'openvat-version': Type.String({ description: 'Version of the running service.' }),
              },
              content: { 'application/json': { schema: Type.Object({ ok: Type.Literal(true) }) } },
            },
          },
        },
      },
      async (_request, reply) => {
        reply.header('openvat-version', PACKAGE.version);
        return { ok: true as const };
      },
    );

    app.get(
      '/ready',
      {
        schema: {
          tags: ['System'],
          summary: 'Readiness: the database answers',
          response: {
            200: Type.Object({
              ok: Type.Literal(true),
              database: Type.Literal('ok'),
              evidence: Type.Optional(
                Type.Union([Type.Literal('ok'), Type.Literal('unverified')], {
                  description:
                    'With an evidence key: `unverified` while confirmations are stopped because the evidence chain head does not verify (see the warning and docs/evidence.md).',
                }),
              ),
              warnings: Type.Optional(
                Type.Array(Type.String(), {
                  description:
                    'Present when something needs an operator (e.g. registry limits are per instance).',
                }),
              ),
            }),
            503: Type.Object({
              ok: Type.Literal(false),
              database: Type.Literal('unavailable'),
              meta: Type.Object({ request_id: Type.String(), latency_ms: Type.Number() }),
            }),
          },
        },
      },
      async (request, reply) => {
        if (await deps.db.ping()) {
          const warnings = deps.warnings?.() ?? [];
          const evidence = deps.evidence ? await deps.evidence() : undefined;
          if (evidence) {
            warnings.push(
              `confirmations are stopped: ${evidence.message}; review the chain and run "openvat evidence acknowledge" (docs/evidence.md)`,
            );
          }
          return {
            ok: true as const,
            database: 'ok' as const,
            ...(evidence !== undefined
              ? { evidence: evidence ? ('unverified' as const) : ('ok' as const) }
              : {}),
            ...(warnings.length > 0 ? { warnings } : {}),
          };
        }
        return reply
          .code(503)
          .send({ ok: false as const, database: 'unavailable' as const, meta: baseMeta(request, reply) });
      },
    );
  };
}
