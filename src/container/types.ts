/** The container's contract: what it can be given (ports) and what it holds (services). */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Timers, Worker } from '../jobs/worker.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import type { WindowLimiter } from '../lib/window-limiter.js';
import type { RequireAdmin } from '../modules/admin/auth.js';
import type { AdminService } from '../modules/admin/service.js';
import type { AuditsService } from '../modules/audits/service.js';
import type { BatchService } from '../modules/batch/service.js';
import type { BurstLimiter } from '../modules/confirmations/burst.js';
import type { ConfirmationsService } from '../modules/confirmations/service.js';
import type { DecideService } from '../modules/decide/service.js';
import type { EoriAnswersRepository } from '../modules/eori/repository.js';
import type { EoriCheckService } from '../modules/eori/service.js';
import type { EventsService } from '../modules/events/service.js';
import type { TsaClient } from '../modules/evidence-timestamps/client.js';
import type { EvidenceTimestamps } from '../modules/evidence-timestamps/service.js';
import type { RequireKey } from '../modules/keys/auth.js';
import type { AuthFailures } from '../modules/keys/auth-failures.js';
import type { KeyManagement } from '../modules/keys/manage.js';
import type { KeyPropagation } from '../modules/keys/propagation.js';
import type { MonthlyQuota } from '../modules/keys/quota.js';
import type { KeysService } from '../modules/keys/service.js';
import type { Metrics } from '../modules/metrics/service.js';
import type { MonitorsService } from '../modules/monitors/service.js';
import type { SendRecorded } from '../modules/outbox/reply.js';
import type { Outbox } from '../modules/outbox/service.js';
import type { PeppolService } from '../modules/peppol/service.js';
import type { Playground } from '../modules/playground/playground.js';
import type { ProofsService } from '../modules/proofs/service.js';
import type { TimestampLookup } from '../modules/proofs/timestamps.js';
import type { RatesDataset } from '../modules/rates/dataset.js';
import type { RatesService } from '../modules/rates/service.js';
import type { RatesUpdates } from '../modules/rates/updates.js';
import type { StatusService, StatusSnapshot } from '../modules/status/service.js';
import type { UsageService } from '../modules/usage/service.js';
import type { LiveAnswers } from '../modules/validation/live.js';
import type { ValidationService } from '../modules/validation/service.js';
import type { WebhooksService } from '../modules/webhooks/service.js';
import type { WebhookTransport } from '../modules/webhooks/transport.js';
import type { DnsResolver } from '../modules/webhooks/url-guard.js';
import type { EvatrClient } from '../registries/evatr.js';
import type { RegistryClients } from '../registries/index.js';
import type { TedbClient } from '../registries/tedb.js';
import type { NationalRegisters } from './national.js';

/** Side effects the container can be given instead of the real ones (tests, benchmarks). */
export interface Ports {
  /** Where logs go (default: pino to stdout at `LOG_LEVEL`). */
  log?: Logger;
  db?: Db;
  clock?: Clock;
  ids?: IdGenerator;
  ratesDataset?: RatesDataset;
  redis?: Redis | null;
  /** The upstream registry clients (default: built from the configured URLs). */
  registries?: Pick<RegistryClients, 'clientForPrefix' | 'viesStatus'>;
  /** The eVatR client live keys use for confirmations (default: the real one at EVATR_URL). */
  evatr?: EvatrClient;
  /** The burst limit on confirmations (default: in-memory token bucket from the config). */
  confirmLimiter?: BurstLimiter;
  /** Name resolution for webhook targets (SSRF checks at registration and at connect time). */
  dns?: DnsResolver;
  /** Sends webhook attempts (default: node:http/https). */
  webhookTransport?: WebhookTransport;
  /** TEDB's VatRetrievalService for the rates sync (default: the real one at `OPENVAT_TEDB_URL`). */
  tedb?: TedbClient;
  /** Timers of the background workers' polling. */
  timers?: Timers;
  /** Posts time-stamp queries to the RFC 3161 authorities (default: HTTP to `OPENVAT_TSA_URLS`). */
  tsa?: TsaClient;
  /** The random part of new API keys (default: 32 random base62 characters). */
  keySecrets?: () => string;
  /** Finds the newest trusted time-stamp token covering a confirmation (default: none). */
  timestamps?: TimestampLookup;
}

export interface Container {
  readonly config: Config;
  /** The service's logger (errors, workers, shutdown; request logs at `info` and below). */
  readonly log: Logger;
  readonly db: Db;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly redis: Redis | null;
  readonly keys: KeysService;
  /** Admin keys and audit log; accounts and keys as the admin API manages them; changes told to every instance. */
  readonly admin: AdminService;
  readonly manageKeys: KeyManagement;
  readonly keyPropagation: KeyPropagation;
  /** Monthly quotas of keys on `/v1` (route hooks). */
  readonly monthlyQuota: MonthlyQuota;
  readonly requireAdmin: RequireAdmin;
  /** Failed authentications per client address, counted by `/v1`, `/admin` and `/metrics` alike. */
  readonly authFailures: AuthFailures;
  readonly rates: RatesService;
  /** The rates sync, the reload of what it learnt, and decisions on held changes. */
  readonly ratesUpdates: RatesUpdates;
  /** The per-IP limit of the public rates endpoints (kept in this process). */
  readonly publicLimiter: WindowLimiter;
  /** The docs playground's demo key and its per-IP limit; `null` when `OPENVAT_PLAYGROUND` is off. */
  readonly playground: Playground | null;
  readonly requireKey: RequireKey;
  readonly audits: AuditsService;
  readonly events: EventsService;
  /**
   * The completion step of audited work: one (grouped) transaction for its own rows, registry answers,
   * audit record, events and webhook deliveries; in-memory caches are updated after the commit.
   */
  readonly outbox: Outbox;
  /** Records a successful audited HTTP call through the outbox, then sends exactly the recorded bytes. */
  readonly sendRecorded: SendRecorded;
  /** The one validation path (single, batch items, decide). */
  readonly validation: ValidationService;
  /** Decide: the VAT treatment of a sale. */
  readonly decide: DecideService;
  /** Peppol reachability: the SML over DNS, then the SMPs. */
  readonly peppol: PeppolService;
  /** EORI numbers checked with the Commission's EOS (EU, XI) and HMRC (GB). */
  readonly eori: EoriCheckService;
  /** The stored EORI answers (written with the response that obtained them). */
  readonly eoriAnswers: EoriAnswersRepository;
  /** The live answer source with its permits and breakers (exposed for tests and metrics). */
  readonly liveAnswers: LiveAnswers;
  /** Registry breakers, permits and instances, for `GET /v1/status` and `/ready`. */
  readonly status: StatusService;
  /** The member states' own registers asked when VIES cannot answer, and their files. */
  readonly national: NationalRegisters;
  /** The same snapshot `GET /v1/status` answers (breaker states, in-flight calls per registry and member state). */
  registryStatus(): Promise<StatusSnapshot>;
  readonly metrics: Metrics;
  /** Qualified confirmations through eVatR and their evidence chain. */
  readonly confirmations: ConfirmationsService;
  /** Proofs of confirmations and validations for an auditor (PDF and JSON). */
  readonly proofs: ProofsService;
  /** Trusted timestamps (RFC 3161) of the evidence chain head; `runIfDue()` is the scheduled run. */
  readonly evidenceTimestamps: EvidenceTimestamps;
  /** Requests per key, day and operation, counted in memory and written every few seconds. */
  readonly usage: UsageService;
  readonly webhooks: WebhooksService;
  /** Delivers queued webhooks; started by `start()`, driven by `runOnce()`/`drain()` in tests. */
  readonly webhookWorker: Worker;
  /** Batch validation: synchronous batches and durable batch jobs. */
  readonly batch: BatchService;
  /** Works batch job items; started by `start()`, driven by `runOnce()`/`drain()` in tests. */
  readonly batchWorker: Worker;
  /** Monitoring: numbers re-checked on a schedule, changes sent as events. */
  readonly monitors: MonitorsService;
  /** Runs due monitor checks; started by `start()`, driven by `runOnce()`/`drain()` in tests. */
  readonly monitorScheduler: Worker;
  /** Starts background work (registry status polling, workers); `close()` stops it. */
  start(): void;
  /** Releases every resource (database, Redis). */
  close(): Promise<void>;
}
