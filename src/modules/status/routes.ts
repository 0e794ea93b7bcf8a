import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { baseMeta } from '../../http/meta.js';
import { Envelope, errorResponses, Nullable } from '../../http/schemas.js';
import type { TimestampStatus } from '../evidence-timestamps/index.js';
import type { PeppolStatus } from '../peppol/index.js';
import { registryStatusDescription } from './schemas.js';
import type { StatusService } from './service.js';

const RegistryStatus = Type.Object({
  registry: Type.Union(
    ['vies', 'hmrc', 'bfs', 'brreg', 'evatr', 'eos', 'hmrc_eori'].map((r) => Type.Literal(r)),
  ),
  country: Nullable(Type.String({ description: 'VAT prefix (`DE`, `EL`, `XI`, …); null for eVatR.' })),
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')], {
    description:
      '`open`: calls are refused until `retry_after_seconds`; `half_open`: the next call is a trial.',
  }),
  in_flight: Type.Integer({ description: 'Calls running now (on every instance when `shared`).' }),
  queued: Type.Integer({ description: 'Calls of the answering instance waiting for a permit.' }),
  concurrency_limit: Type.Integer({
    description:
      'Calls allowed at once now: `OPENVAT_REGISTRY_CONCURRENCY`, or fewer while the registry throttles (halved when it answers "too many requests", then one more every 10 s).',
  }),
  last_success_at: Nullable(Type.String({ format: 'date-time' })),
  last_failure_at: Nullable(Type.String({ format: 'date-time' })),
  retry_after_seconds: Nullable(Type.Integer()),
});

const RatesSyncStatus = Type.Object(
  {
    enabled: Type.Boolean({
      description: 'Whether the daily sync with TEDB runs (`OPENVAT_TEDB_URL` not `off`).',
    }),
    last_run_at: Nullable(Type.String({ format: 'date-time' })),
    last_success_at: Nullable(Type.String({ format: 'date-time' })),
    last_error: Nullable(
      Type.String({ description: 'Why the last run changed nothing; null when it succeeded.' }),
    ),
    next_run_at: Nullable(Type.String({ format: 'date-time' })),
    held: Type.Integer({ description: 'Learnt changes held for an operator (`openvat rates held`).' }),
  },
  { description: 'The rates sync (see docs/rates.md).' },
);

const EvidenceTimestampsStatus = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether chain heads are time-stamped (`OPENVAT_TSA_URLS` set).' }),
    tsa_urls: Type.Array(Type.String(), {
      description: 'The time-stamping authorities, in the order asked.',
    }),
    interval_seconds: Type.Integer({
      description: '`OPENVAT_TSA_INTERVAL`: how often a head with new links is time-stamped.',
    }),
    newest: Nullable(
      Type.Object({
        head_seq: Type.Integer({ description: 'The chain head the newest token covers.' }),
        gen_time: Type.String({ format: 'date-time', description: "The token's own time." }),
        tsa_url: Type.String({ description: 'The authority that issued it.' }),
        age_seconds: Type.Integer({ description: 'Seconds since `gen_time`.' }),
      }),
    ),
    last_run_at: Nullable(Type.String({ format: 'date-time' })),
    last_error: Nullable(
      Type.String({
        description: 'Why the last run stored no token (every authority failed); null otherwise.',
      }),
    ),
    next_run_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { description: 'Trusted timestamps (RFC 3161) of the evidence chain head (see docs/evidence.md).' },
);

const PeppolStatusSchema = Type.Object(
  {
    sml_zone: Type.String({ description: '`PEPPOL_SML_ZONE`: the SML zone asked.' }),
    last_success_at: Nullable(Type.String({ format: 'date-time', description: 'The SML last answered.' })),
    last_failure_at: Nullable(
      Type.String({ format: 'date-time', description: 'The SML last could not be asked.' }),
    ),
    last_failure: Nullable(Type.String({ description: 'Why, then.' })),
    sml_breaker: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')], {
      description:
        'The SML’s circuit breaker: `open` after repeated DNS failures (no query is sent; stored answers are served, else 502), `half_open` while one trial query runs.',
    }),
    sml_retry_after_seconds: Nullable(Type.Integer({ description: 'While open: seconds until a trial.' })),
    smp_breakers: Type.Array(
      Type.Object({
        host: Type.String({ description: 'The SMP host (and port).' }),
        breaker: Type.Union([Type.Literal('open'), Type.Literal('half_open')]),
        retry_after_seconds: Nullable(Type.Integer()),
        last_failure_at: Nullable(Type.String({ format: 'date-time' })),
      }),
      {
        description:
          'SMP hosts whose breaker is not closed (at most 50): they are sent nothing, their participants answer `smp_status: "unavailable"`.',
      },
    ),
  },
  {
    description:
      'The Peppol SML as the answering instance last saw it, and the breakers of the SML and the SMPs (see docs/peppol.md).',
  },
);

const NationalRegisterStatus = Type.Object(
  {
    source: Type.String({
      description:
        '`pl_whitelist`, `cz_adis`, `ro_anaf`, `fi_prh`, `sk_financnasprava`, `si_furs`, `lv_vid`.',
    }),
    country: Type.String({ description: 'The VAT prefix it answers for when VIES cannot.' }),
    breaker: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')]),
    retry_after_seconds: Nullable(Type.Integer()),
    last_answer_at: Nullable(
      Type.String({ format: 'date-time', description: 'Its last answer (this instance).' }),
    ),
    last_failure_at: Nullable(Type.String({ format: 'date-time' })),
    last_failure: Nullable(Type.String({ description: 'Why its last call gave no answer.' })),
    data_date: Nullable(
      Type.String({ format: 'date', description: 'The date of the published files answered from (SI, LV).' }),
    ),
    files_checked_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When the files were last confirmed current (SI, LV).',
      }),
    ),
    files: Nullable(
      Type.Object(
        {
          state: Type.Union([Type.Literal('current'), Type.Literal('stale'), Type.Literal('missing')], {
            description:
              '`current`: every file held and the oldest at most `OPENVAT_REGISTERS_MAX_AGE_DAYS` old (answers come from it); `stale`: older (the register answers unavailable); `missing`: a file never synced.',
          }),
          parts: Type.Array(
            Type.Object({
              part: Type.String({ description: 'The file: SI `PO`, `FO`, `DEJ`; LV `VAT`.' }),
              data_date: Type.String({ format: 'date', description: "The file's own date." }),
              rows: Type.Integer({ description: 'Rows held from it.' }),
              fetched_at: Type.String({ format: 'date-time', description: 'When it was downloaded.' }),
              checked_at: Type.String({
                format: 'date-time',
                description: 'When the server last confirmed it current (the download or a later 304).',
              }),
            }),
          ),
          last_sync_at: Nullable(
            Type.String({
              format: 'date-time',
              description: 'When the last sync run ended (any instance, or `openvat registers sync`).',
            }),
          ),
          last_sync_success_at: Nullable(
            Type.String({ format: 'date-time', description: 'When a sync run last synced every file.' }),
          ),
          last_sync_error: Nullable(
            Type.String({
              description: 'The files the last run could not sync, and why (the copy held kept answering).',
            }),
          ),
          next_sync_at: Nullable(
            Type.String({
              format: 'date-time',
              description: 'When the schedule runs next (null: `OPENVAT_REGISTERS_SYNC_MS=0`).',
            }),
          ),
        },
        {
          description:
            "The local copy of the register's published files (SI, LV; in the database, shared by every instance), else null.",
        },
      ),
    ),
  },
  { description: 'A national register asked when VIES cannot answer (`OPENVAT_NATIONAL_FALLBACKS`).' },
);

/** What `GET /v1/status` answers in `data` (and `GET /admin/v1/status` for operators). */
export const StatusData = Type.Object({
  shared: Type.Boolean({
    description: 'Whether limits and breakers are shared through Redis now.',
  }),
  instances: Nullable(Type.Integer({ description: 'Instances alive by their heartbeat.' })),
  registries: Type.Array(RegistryStatus),
  rates: RatesSyncStatus,
  evidence_timestamps: EvidenceTimestampsStatus,
  peppol: PeppolStatusSchema,
  national_registers: Type.Array(NationalRegisterStatus),
});

/** What `GET /v1/status` tells of the rates sync. */
export interface RatesSyncState {
  enabled: boolean;
  last_run_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  next_run_at: string | null;
  held: number;
}

/** `GET /v1/status`: public, no key; the snapshot is reused for about two seconds. */
export function statusRoutes(deps: {
  status: StatusService;
  ratesSync: () => Promise<RatesSyncState>;
  timestamps: () => Promise<TimestampStatus>;
  peppol: () => Promise<PeppolStatus>;
  nationalRegisters: () => Promise<unknown[]>;
}) {
  return async function register(app: FastifyInstance) {
    app.get(
      '/v1/status',
      {
        schema: {
          tags: ['System'],
          summary: 'Registry status: breakers, in-flight calls, last success and failure',
          description: registryStatusDescription,
          response: {
            200: Envelope(StatusData),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        // At once: each part that reads shared state (Redis) has its own deadline, and a Redis
        // that stalls must cost the answer one deadline, not one per part.
        const [snapshot, rates, evidence_timestamps, peppol, national_registers] = await Promise.all([
          deps.status.snapshot(),
          deps.ratesSync(),
          deps.timestamps(),
          deps.peppol(),
          deps.nationalRegisters(),
        ]);
        const data = { ...snapshot, rates, evidence_timestamps, peppol, national_registers };
        reply.header('cache-control', 'public, max-age=2');
        return { data, meta: baseMeta(request, reply) };
      },
    );
  };
}
