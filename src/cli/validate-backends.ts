import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.js';
import { type BatchItemResult, batchItems } from '../modules/batch/service.js';
import type { ApiKeyPrincipal } from '../modules/keys/service.js';
import { openExistingDatabase } from './database.js';
import { unreachable } from './unreachable.js';

// The back ends of validate-file: a running service over HTTP, or the container in-process.

/** Validates one chunk of numbers; reports progress within the chunk (items done). */
export type Validator = (
  vatNumbers: string[],
  progress: (done: number) => void,
) => Promise<BatchItemResult[]>;

interface Envelope<T> {
  data: T;
}

class HttpError extends Error {
  readonly status: number;
  readonly retryAfterSeconds: number | null;
  constructor(status: number, message: string, retryAfterSeconds: number | null) {
    super(message);
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export function remoteValidator(options: {
  url: string;
  key: string;
  sync: boolean;
  pollMs: number;
}): Validator {
  const base = options.url.replace(/\/+$/, '');
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${options.key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        if (res.ok) return JSON.parse(text) as T;
        let message = `${res.status} ${res.statusText}`;
        try {
          const error = (JSON.parse(text) as { error?: { code: string; message: string } }).error;
          if (error) message = `${error.code}: ${error.message}`;
        } catch {
          // not JSON
        }
        const retryAfter = Number(res.headers.get('retry-after'));
        throw new HttpError(
          res.status,
          message,
          Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
        );
      } catch (error) {
        const retryable =
          !(error instanceof HttpError) ||
          error.status === 429 ||
          error.status === 502 ||
          error.status === 503;
        if (!(error instanceof HttpError) && attempt >= 2) throw unreachable(base, error);
        if (!retryable || attempt >= 5) throw error;
        const wait =
          error instanceof HttpError && error.retryAfterSeconds
            ? error.retryAfterSeconds * 1000
            : 500 * 2 ** attempt;
        await sleep(Math.min(wait, 60_000));
      }
    }
  }

  return async (vatNumbers, progress) => {
    if (options.sync) {
      const res = await call<Envelope<{ results: BatchItemResult[] }>>('POST', '/v1/validate/batch', {
        vat_numbers: vatNumbers,
      });
      progress(vatNumbers.length);
      return res.data.results;
    }
    const created = await call<Envelope<{ id: string }>>('POST', '/v1/validate/batch', {
      vat_numbers: vatNumbers,
      async: true,
    });
    for (;;) {
      const job = await call<Envelope<{ status: string; done: number; results?: BatchItemResult[] }>>(
        'GET',
        `/v1/validate/batch/${created.data.id}`,
      );
      progress(job.data.done);
      if (job.data.status === 'completed' && job.data.results) return job.data.results;
      await sleep(options.pollMs);
    }
  };
}

export async function directValidator(config: Config, key: string | undefined) {
  // Reads keys from the database: a missing SQLite file is refused, not created empty.
  const db = openExistingDatabase(config.databaseUrl);
  const { createCoreContainer } = await import('../container.js');
  const { rollup } = await import('../modules/batch/service.js');
  // Only the parts a validation needs are made (keys, validation, the outbox): no worker, sync or poll.
  const container = await createCoreContainer(config, { db }).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  let principal: ApiKeyPrincipal | null = null;
  if (key) {
    const found = await container.keys.authenticate(key);
    if (found.kind === 'refused') {
      await container.close();
      throw new Error('--key is not an active API key of this database');
    }
    principal = found.principal;
  } else {
    const keys = (await container.keys.listKeys()).filter((k) => k.revokedAt === null);
    const chosen = keys.find((k) => k.mode === 'live') ?? keys[0];
    if (!chosen) {
      await container.close();
      throw new Error('the database has no active API key; create one with "openvat keys create"');
    }
    // The run is recorded under the key (its audit records, and a live key's webhook events): with
    // several accounts, none is picked for the operator.
    if (keys.some((k) => k.accountId !== chosen.accountId)) {
      await container.close();
      throw new Error(
        'the database holds active keys of several accounts; name the key to validate with: --key svc_…',
      );
    }
    principal = {
      id: chosen.id,
      accountId: chosen.accountId,
      plan: chosen.plan,
      mode: chosen.mode,
      defaultRequesterVat: chosen.defaultRequesterVat,
    };
  }
  const who = principal;
  // Each chunk is recorded as a synchronous batch call would be: its registry answers, its audit
  // record (the answer as this command saw it) and, for a live key, its `batch.completed` event.
  const validate: Validator = async (vatNumbers, progress) => {
    const started = performance.now();
    const batch = await container.batch.validateMany(batchItems(vatNumbers), null, who);
    const requestId = container.ids.uuid();
    const latency = Math.round(performance.now() - started);
    const body = JSON.stringify({
      data: { summary: batch.summary, results: batch.results },
      meta: { request_id: requestId, latency_ms: latency, ...rollup(batch.sources), sources: batch.sources },
    });
    await container.outbox.record({
      answers: batch.answers,
      audit: {
        principal: who,
        requestId,
        endpoint: 'validate_batch',
        responseJson: body,
        requestBody: { vat_numbers: vatNumbers },
        latencyMs: latency,
        statusCode: 200,
        valid: null,
      },
      events:
        who.mode === 'live'
          ? [{ accountId: who.accountId, keyId: who.id, type: 'batch.completed', payload: body }]
          : [],
    });
    progress(vatNumbers.length);
    return batch.results;
  };
  return { validate, close: () => container.close(), mode: principal.mode };
}
