import { safeEqual } from '../../lib/crypto.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { Mode, Plan } from './plans.js';
import { policyOf } from './policy.js';
import type { ApiKeyPrincipal } from './principal.js';
import type { KeysRepository } from './repository.js';

/** A presented key accepted: its principal (whose expiry the caller checks, `unexpired`). */
export interface KeyAccepted {
  kind: 'ok';
  principal: ApiKeyPrincipal;
}

/** A presented key's principal, or why it is not accepted (`key_unknown`, `key_revoked`, …). */
export type KeyVerdict = KeyAccepted | Refusal;

export const UNKNOWN: Refusal = Object.freeze(
  refusal('key_unknown', 'The API key is not valid or has been revoked.'),
);
export const ADMIN_KEY: Refusal = Object.freeze(
  refusal(
    'admin_key',
    'An admin key is not accepted here: /v1 takes an API key (svc_live_… or svc_test_…); admin keys are for /admin.',
  ),
);

/** The verdict of a key row found by a hash (none: not found). */
export function verdictOfRow(
  hash: string,
  row: Awaited<ReturnType<KeysRepository['findByHash']>>,
): KeyVerdict {
  if (!row || !safeEqual(row.key_hash, hash)) return UNKNOWN;
  if (row.revoked_at !== null)
    return refusal('key_revoked', `This API key was revoked at ${row.revoked_at}.`);
  if (Number(row.account_disabled) === 1)
    return refusal('key_account_disabled', "This API key's account is disabled.");
  return {
    kind: 'ok',
    principal: {
      id: row.id,
      accountId: row.account_id,
      plan: row.plan as Plan,
      mode: row.mode as Mode,
      defaultRequesterVat: row.default_requester_vat,
      policy: policyOf(row),
    },
  };
}

/**
 * A verdict with the key's expiry compared with the clock: an accepted key past its expiry (or its
 * overlap after a roll) is refused as `key_expired`.
 */
export function unexpired(verdict: KeyVerdict, now: number): KeyVerdict {
  if (verdict.kind !== 'ok') return verdict;
  const policy = verdict.principal.policy;
  const expiresAt = policy?.expiresAt;
  if (!expiresAt || Date.parse(expiresAt) > now) return verdict;
  return refusal(
    'key_expired',
    policy?.rolled
      ? `This API key was rolled to a new key; its overlap ended at ${expiresAt}.`
      : `This API key expired at ${expiresAt}.`,
  );
}
