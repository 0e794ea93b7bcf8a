import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import type { AuditsService } from '../modules/audits/service.js';
import { createHeadSigner, parseEvidenceKey } from '../modules/confirmations/anchor.js';
import { createTokenBucketLimiter } from '../modules/confirmations/burst.js';
import { createConfirmationsRepository } from '../modules/confirmations/repository.js';
import { createConfirmationsService } from '../modules/confirmations/service.js';
import { createTestModeEvatrClient } from '../modules/confirmations/test-evatr.js';
import { createHttpTsaClient } from '../modules/evidence-timestamps/client.js';
import { createEvidenceTimestampsRepository } from '../modules/evidence-timestamps/repository.js';
import { createEvidenceTimestamps } from '../modules/evidence-timestamps/service.js';
import { trustedRoots } from '../modules/evidence-timestamps/trust.js';
import type { Metrics } from '../modules/metrics/service.js';
import { createProofsService } from '../modules/proofs/service.js';
import { createEvatrClient } from '../registries/evatr.js';
import { guardEvatr } from '../registries/evatr-guard.js';
import type { BreakerStore, Permits } from '../registries/resilience.js';
import type { Ports } from './types.js';

/**
 * The evidence a German seller keeps: qualified confirmations through eVatR (behind the shared
 * breaker and permits) with their hash chain and signed heads, the trusted timestamps of the chain
 * head, and the proofs an auditor reads.
 */
export function createEvidence(deps: {
  config: Config;
  ports: Ports;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  metrics: Metrics;
  audits: AuditsService;
  guards: { breaker: BreakerStore; permits: Permits };
}) {
  const { config, ports, db, clock, ids, log, metrics, audits, guards } = deps;
  const confirmationsRepository = createConfirmationsRepository(db.kysely);
  const evidenceSigner = config.evidenceKey ? createHeadSigner(parseEvidenceKey(config.evidenceKey)) : null;
  const confirmations = createConfirmationsService({
    repository: confirmationsRepository,
    clock,
    ids,
    upstream: {
      live: guardEvatr(
        ports.evatr ??
          createEvatrClient({ baseUrl: config.registries.evatrUrl, timeoutMs: config.registries.timeoutMs }),
        guards,
      ),
      test: createTestModeEvatrClient({ clock }),
    },
    limiter:
      ports.confirmLimiter ??
      createTokenBucketLimiter({
        capacity: config.confirmations.burst,
        windowSeconds: config.confirmations.burstWindowSeconds,
        clock,
      }),
    // An in-flight idempotency key is abandoned once the upstream call cannot still be running.
    inFlightTimeoutMs: config.registries.timeoutMs + 60_000,
    signer: evidenceSigner,
    onEvidenceProblem: (problem) =>
      log.error(
        { evidence: problem },
        'evidence chain head cannot be verified: confirmations are stopped until an operator acknowledges it (openvat evidence acknowledge)',
      ),
    onEvidenceResume: (ack) =>
      log.warn(
        {
          evidence_acknowledgement: { id: ack.id, seq: Number(ack.seq), hash: ack.hash, reason: ack.reason },
        },
        'evidence chain head acknowledged by an operator: confirmations resume',
      ),
  });
  metrics.watchEvidence(() => confirmations.evidenceProblem() !== null);
  const evidenceTimestamps = createEvidenceTimestamps({
    repository: createEvidenceTimestampsRepository(db.kysely, db.dialect),
    client: ports.tsa ?? createHttpTsaClient(),
    clock,
    ids,
    workerId: ids.uuid(),
    urls: config.timestamps.urls,
    roots: trustedRoots(
      config.timestamps.roots?.pems ?? [],
      `OPENVAT_TSA_ROOTS${config.timestamps.roots ? ` (${config.timestamps.roots.path})` : ''}`,
    ),
    intervalMs: config.timestamps.intervalMs,
    timeoutMs: config.timestamps.timeoutMs,
    head: () => confirmationsRepository.head(),
    publicKey: evidenceSigner?.publicKey ?? null,
    checkEvidence: () => confirmations.checkEvidence(),
    onFailure: (url, reason) =>
      log.warn({ tsa_url: url, reason }, 'time-stamping authority refused or failed; the next one is asked'),
    onStored: (row) =>
      log.info(
        {
          evidence_timestamp: {
            head_seq: Number(row.head_seq),
            gen_time: row.gen_time,
            tsa_url: row.tsa_url,
          },
        },
        'evidence chain head time-stamped',
      ),
  });
  metrics.connectTimestamps(() => evidenceTimestamps.status());
  const proofs = createProofsService({
    confirmations,
    chainHead: () => confirmationsRepository.head(),
    publicKey: evidenceSigner?.publicKey ?? null,
    audits,
    timestamps: ports.timestamps ?? {
      newestCovering: async (seq) => {
        const token = await evidenceTimestamps.newestTokenCovering(seq);
        return token && { head_seq: token.head_seq, gen_time: token.gen_time, tsa_url: token.tsa_url };
      },
    },
    clock,
  });
  return { confirmations, evidenceTimestamps, proofs };
}
