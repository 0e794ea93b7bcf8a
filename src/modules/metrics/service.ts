import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One registry call as the live-answers code saw it (after retries, one per validation). */
export interface RegistryCall {
  registry: string;
  country: string;
  /** `valid`, `invalid`, or why there was no answer: `down`, `timeout`, `throttled`, … */
  outcome: string;
  durationMs: number;
}

/** Where the code reports what it did; the metrics service implements it, tests may fake it. */
export interface MetricsObserver {
  registryCall(call: RegistryCall): void;
  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed'): void;
  groupCommit(units: number): void;
}

export const noMetrics: MetricsObserver = {
  registryCall() {},
  webhookAttempt() {},
  groupCommit() {},
};

/** A registry's state at scrape time (see registry-status.ts, the one adapter to the resilience layer). */
export interface RegistryState {
  registry: string;
  country: string;
  breaker: 'closed' | 'open' | 'half_open';
  in_flight: number;
  queued: number;
  concurrency_limit: number;
}

export interface MetricsSources {
  registryStatus(): Promise<RegistryState[]>;
  /** Rows waiting in the durable queues (counted in SQL at scrape time). */
  pending(): Promise<{ batchItems: number; webhookDeliveries: number }>;
}

/** The rates sync at scrape time. */
export interface RatesSyncState {
  held: number;
  last_success_at: string | null;
}

/** A national register at scrape time (the `GET /v1/status` view of it). */
export interface NationalRegisterState {
  source: string;
  country: string;
  breaker: 'closed' | 'open' | 'half_open';
  /** The published files' date answered from (SI, LV), else null. */
  data_date: string | null;
  files: { parts: { part: string; rows: number; checked_at: string }[] } | null;
}

/** The newest time-stamp token at scrape time. */
export interface TimestampsState {
  enabled: boolean;
  newest: { age_seconds: number; tsa_url: string } | null;
}

const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

/**
 * The Prometheus metrics of one service instance, in a registry of its own (not prom-client's
 * global one, so several instances in one process do not collide). See docs/metrics.md.
 */
export function createMetrics() {
  const registry = new Registry();
  let sources: MetricsSources | null = null;
  let ratesSource: (() => Promise<RatesSyncState>) | null = null;
  let timestampsSource: (() => Promise<TimestampsState>) | null = null;
  let nationalSource: (() => Promise<NationalRegisterState[]>) | null = null;
  /** Read once per scrape, before the national gauges collect. */
  let national: NationalRegisterState[] = [];
  /** Read once per scrape, before the gauges collect. */
  let registries: RegistryState[] = [];

  const httpRequests = new Counter({
    name: 'openvat_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'openvat_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const registryCalls = new Counter({
    name: 'openvat_registry_calls_total',
    help: 'Registry look-ups by registry, member state and outcome (valid, invalid, or why there was no answer).',
    labelNames: ['registry', 'country', 'outcome'] as const,
    registers: [registry],
  });
  const registryDuration = new Histogram({
    name: 'openvat_registry_call_duration_seconds',
    help: 'Duration of registry look-ups, retries of throttled calls included.',
    labelNames: ['registry', 'country', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'openvat_registry_breaker_state',
    help: 'Circuit breaker per registry and member state: 1 for the current state, 0 for the others.',
    labelNames: ['registry', 'country', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const entry of registries) {
        for (const state of BREAKER_STATES) {
          this.set(
            { registry: entry.registry, country: entry.country, state },
            entry.breaker === state ? 1 : 0,
          );
        }
      }
    },
  });
  /** A gauge per registry and member state, read from the scrape's registry states. */
  const registryGauge = (name: string, help: string, value: (entry: RegistryState) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['registry', 'country'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const entry of registries)
          this.set({ registry: entry.registry, country: entry.country }, value(entry));
      },
    });
  registryGauge(
    'openvat_registry_in_flight',
    'Registry calls in flight per registry and member state.',
    (entry) => entry.in_flight,
  );
  registryGauge(
    'openvat_registry_queued',
    'Registry calls waiting for a slot per registry and member state.',
    (entry) => entry.queued,
  );
  registryGauge(
    'openvat_registry_concurrency_limit',
    'Registry calls allowed at once per registry and member state (lowered while the registry throttles).',
    (entry) => entry.concurrency_limit,
  );
  const batchPending = new Gauge({
    name: 'openvat_batch_items_pending',
    help: 'Batch job items waiting to be validated.',
    registers: [registry],
  });
  const webhooksPending = new Gauge({
    name: 'openvat_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting for their next attempt.',
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: 'openvat_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, will be tried again) or failed (gave up).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const groupCommits = new Histogram({
    name: 'openvat_group_commit_units',
    help: 'Units of work committed together in one transaction by group commit.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [registry],
  });
  for (const outcome of ['delivered', 'retry', 'failed']) webhookAttempts.inc({ outcome }, 0);
  let evidenceStopped: () => boolean = () => false;
  new Gauge({
    name: 'openvat_evidence_confirmations_stopped',
    help: 'Whether this instance stopped confirmations because the evidence chain head does not verify against the last signed head (1) or not (0); see docs/evidence.md.',
    registers: [registry],
    collect() {
      this.set(evidenceStopped() ? 1 : 0);
    },
  });
  const ratesHeld = new Gauge({
    name: 'openvat_rates_held_changes',
    help: 'Rate changes learnt by the sync and held for an operator to accept or reject.',
    registers: [registry],
  });
  const ratesLastSuccess = new Gauge({
    name: 'openvat_rates_last_sync_success_timestamp_seconds',
    help: 'When the rates sync last succeeded (Unix time; 0 before its first success).',
    registers: [registry],
  });

  const timestampAge = new Gauge({
    name: 'openvat_evidence_timestamp_age_seconds',
    help: 'Age of the newest trusted time-stamp token over the evidence chain head, by the authority that issued it (absent before the first token; see docs/evidence.md).',
    labelNames: ['tsa_url'] as const,
    registers: [registry],
  });

  new Gauge({
    name: 'openvat_national_register_breaker_state',
    help: 'Circuit breaker per national register asked when VIES cannot answer: 1 for the current state, 0 for the others.',
    labelNames: ['register', 'country', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const entry of national) {
        for (const state of BREAKER_STATES) {
          this.set(
            { register: entry.source, country: entry.country, state },
            entry.breaker === state ? 1 : 0,
          );
        }
      }
    },
  });
  new Gauge({
    name: 'openvat_national_register_data_date_timestamp_seconds',
    help: "The date of a file register's local copy answered from (SI, LV; the oldest file's, as Unix time of its midnight UTC; absent before a first sync).",
    labelNames: ['register'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const entry of national)
        if (entry.data_date)
          this.set({ register: entry.source }, Date.parse(`${entry.data_date}T00:00:00Z`) / 1000);
    },
  });
  new Gauge({
    name: 'openvat_national_register_file_rows',
    help: "Rows held in a file register's local copy, by register and file (SI PO, FO, DEJ; LV VAT).",
    labelNames: ['register', 'part'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const entry of national)
        for (const part of entry.files?.parts ?? [])
          this.set({ register: entry.source, part: part.part }, part.rows);
    },
  });
  new Gauge({
    name: 'openvat_national_register_file_checked_timestamp_seconds',
    help: 'When the server last confirmed a file of the local copy current (the download or a later 304; Unix time).',
    labelNames: ['register', 'part'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const entry of national)
        for (const part of entry.files?.parts ?? [])
          this.set({ register: entry.source, part: part.part }, Date.parse(part.checked_at) / 1000);
    },
  });

  const observer: MetricsObserver = {
    registryCall(call) {
      const labels = { registry: call.registry, country: call.country, outcome: call.outcome };
      registryCalls.inc(labels);
      registryDuration.observe(labels, call.durationMs / 1000);
    },
    webhookAttempt(outcome) {
      webhookAttempts.inc({ outcome });
    },
    groupCommit(units) {
      groupCommits.observe(units);
    },
  };

  return {
    registry,
    observer,
    /** Reads, at scrape time, whether confirmations are stopped by the evidence check. */
    watchEvidence(stopped: () => boolean) {
      evidenceStopped = stopped;
    },
    /** Connects the scrape-time sources (the container does it once everything exists). */
    connect(next: MetricsSources) {
      sources = next;
    },
    /** Connects the newest time-stamp token's state. */
    connectTimestamps(source: () => Promise<TimestampsState>) {
      timestampsSource = source;
    },
    /** Connects the national registers' state (breakers, the files' copy). */
    connectNational(source: () => Promise<NationalRegisterState[]>) {
      nationalSource = source;
    },
    /** Connects the rates sync's state (held changes, last success). */
    connectRates(source: () => Promise<RatesSyncState>) {
      ratesSource = source;
    },
    request(method: string, route: string, statusCode: number, seconds: number) {
      const labels = { method, route, status_code: String(statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    /** The exposition text; the queue sizes are counted now. */
    async scrape(): Promise<string> {
      if (sources) {
        registries = await sources.registryStatus();
        const pending = await sources.pending();
        batchPending.set(pending.batchItems);
        webhooksPending.set(pending.webhookDeliveries);
      }
      if (ratesSource) {
        const rates = await ratesSource();
        ratesHeld.set(rates.held);
        ratesLastSuccess.set(rates.last_success_at ? Date.parse(rates.last_success_at) / 1000 : 0);
      }
      national = nationalSource ? await nationalSource() : [];
      if (timestampsSource) {
        const timestamps = await timestampsSource();
        timestampAge.reset();
        if (timestamps.newest)
          timestampAge.set({ tsa_url: timestamps.newest.tsa_url }, timestamps.newest.age_seconds);
      }
      return registry.metrics();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
