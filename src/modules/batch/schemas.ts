import { UNFINISHED_BATCH_JOBS } from '../keys/index.js';
import { ASYNC_BATCH_LIMIT, SYNC_BATCH_LIMIT } from './service.js';

/** The OpenAPI description of `validateABatchOfVatNumbers`. */
export const validateABatchOfVatNumbersDescription = `Validates up to ${SYNC_BATCH_LIMIT} numbers in one call (Pro and Business plans). Each item is answered exactly as \`GET /v1/validate\` would answer it: \`{ok: true, data}\` or \`{ok: false, error: {code, message}}\`, in input order; a malformed number or an unavailable registry fails only its own items. Duplicates are looked up once, and items go through the same cache and per-country limits as single validations. With \`"async": true\` up to ${ASYNC_BATCH_LIMIT.toLocaleString('en')} numbers are queued as a durable job (\`202\`); \`GET /v1/validate/batch/{id}\` shows its progress and, once completed, the same \`summary\` and \`results\`. A key has at most ${UNFINISHED_BATCH_JOBS.pro} unfinished (queued or running) jobs on Pro, ${UNFINISHED_BATCH_JOBS.business} on Business; one more is \`429 rate_limited\` with \`Retry-After\`. The jobs of every key are worked in turns, key by key, then job by job. Finishing a batch emits \`batch.completed\` (live keys).`;

/** The OpenAPI description of `aBatchJob`. */
export const aBatchJobDescription =
  "Progress of a batch job created by this key (`done` and `failed` of `total`) and, once `completed`, its `summary` and `results` in input order. A job whose key was revoked stops and ends `cancelled` with `cancel_reason`. Jobs of other keys, and ended jobs past their retention (`OPENVAT_BATCH_JOB_RETENTION_DAYS` after they ended; 24 hours after creation for the playground's demo key), are 404.";
