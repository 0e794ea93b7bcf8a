import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { boundedCache } from '../../lib/bounded-cache.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62, sha256Hex } from '../../lib/crypto.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import { PLAYGROUND_PRINCIPAL } from './demo-key.js';
import type { Mode, Plan } from './plans.js';
import type { ApiKeyPrincipal } from './principal.js';
import type { KeysRepository } from './repository.js';

export type { ApiKeyPrincipal } from './principal.js';
export { type KeyAccepted, type KeyVerdict, unexpired } from './verdict.js';

import { ADMIN_KEY, type KeyAccepted, type KeyVerdict, UNKNOWN, unexpired, verdictOfRow } from './verdict.js';

/** Whether work may still be done on a key's behalf, and if not, why (see `stateOf`). */
export type KeyState = 'active' | 'revoked' | 'account_disabled' | 'rolled' | 'expired' | 'unknown';

/** A key's state as read, before its expiry is compared with the clock. */
interface StoredState {
  state: 'active' | 'revoked' | 'account_disabled' | 'unknown';
  expiresAt: string | null;
  rolled: boolean;
}

/**
 * The principal of work stored on a key's behalf (a batch job, a monitor) and done later without a
 * request: the row keeps the key's id, account, plan and mode as they were when it was stored. Work
 * of the playground's demo key stays the demo key's (what it records is kept 24 hours, and so is the
 * work itself).
 */
export function principalOfStoredWork(row: {
  key_id: string;
  account_id: string;
  plan: string;
  mode: string;
}): ApiKeyPrincipal {
  if (row.key_id === PLAYGROUND_PRINCIPAL.id) return PLAYGROUND_PRINCIPAL;
  return {
    id: row.key_id,
    accountId: row.account_id,
    plan: row.plan as Plan,
    mode: row.mode as Mode,
    defaultRequesterVat: null,
  };
}

export interface CreatedKey {
  id: string;
  accountId: string;
  key: string;
  plan: Plan;
  mode: Mode;
  defaultRequesterVat: string | null;
}

export interface NewKey {
  plan: Plan;
  mode: Mode;
  defaultRequesterVat?: string | null;
  accountId?: string;
  accountName?: string | null;
}

export interface KeySummary {
  id: string;
  accountId: string;
  prefix: string;
  plan: Plan;
  mode: Mode;
  defaultRequesterVat: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** `svc_live_` or `svc_test_` followed by 32 base62 characters. */
const KEY_RE = /^svc_(live|test)_[0-9A-Za-z]{32}$/;
const SECRET_LENGTH = 32;
/** The default of `OPENVAT_KEY_CACHE_MS`. */
export const KEY_CACHE_MS = 5_000;

export function isWellFormedKey(key: string): boolean {
  return KEY_RE.test(key);
}

/** A presented key that is not a well-formed public key: an admin key, or nothing. */
function malformed(presented: string): Refusal {
  return presented.startsWith('svc_admin_') ? ADMIN_KEY : UNKNOWN;
}

export function createKeysService(deps: {
  db: Kysely<Database>;
  repository: KeysRepository;
  clock: Clock;
  ids: IdGenerator;
  /**
   * How long a look-up is reused (0: never), a key found and a key not found alike. A key revoked by
   * this service is dropped at once; one revoked elsewhere (another instance, the CLI) keeps working
   * here for at most this long. A key created by this service works here at once; one created
   * elsewhere, within this long of its last refused use here.
   */
  cacheMs?: number;
  /** The random part of new keys (default: 32 random base62 characters). */
  secrets?: () => string;
}) {
  const { db, repository, clock, ids } = deps;
  const secret = deps.secrets ?? (() => randomBase62(SECRET_LENGTH));
  const cacheMs = deps.cacheMs ?? KEY_CACHE_MS;
  /** A cache of up to 10,000 entries kept `cacheMs` by the clock port; none when `cacheMs` is 0. */
  const timedCache = <V extends {}>() =>
    cacheMs > 0
      ? boundedCache<string, V>(10_000, {
          ttl: cacheMs,
          ttlResolution: 0,
          perf: { now: () => clock.millis() },
        })
      : null;
  // Principals by key hash, so every paid request does not read its key.
  const cache = timedCache<KeyAccepted>();
  // Hashes of well-formed keys that were not found (or revoked), so that a key presented again and
  // again costs one read per `cacheMs`, not one per request. Bounded like the principals.
  const misses = timedCache<Refusal>();
  /** Look-ups of a key hash under way: concurrent requests with one key share one read. */
  const finding = new Map<string, Promise<KeyVerdict>>();
  // Whether each key id is active, for work stored on a key's behalf (batch jobs, monitors), timed
  // and dropped on revocation like the principals above.
  const activity = timedCache<StoredState>();
  /** Look-ups of a key's state under way: concurrent askers of one key share one read. */
  const reading = new Map<string, Promise<StoredState>>();
  // Bumped by each creation and revocation: a look-up that started before one is not cached (it may
  // have read the key before it was created or revoked).
  let changes = 0;

  /** Reads a key's stored state (one read shared by concurrent askers), cached as `activity`. */
  function readState(id: string): Promise<StoredState> {
    const under = reading.get(id);
    if (under) return under;
    const generation = changes;
    const read = repository
      .findState(id)
      .then((row): StoredState => {
        let state: StoredState['state'] = 'active';
        if (row === undefined) state = 'unknown';
        else if (row.revoked_at !== null) state = 'revoked';
        else if (Number(row.account_disabled) === 1) state = 'account_disabled';
        const stored: StoredState = {
          state,
          expiresAt: row?.expires_at ?? null,
          rolled: (row?.rolled_to ?? null) !== null,
        };
        if (generation === changes) activity?.set(id, stored);
        return stored;
      })
      .finally(() => {
        if (reading.get(id) === read) reading.delete(id);
      });
    reading.set(id, read);
    return read;
  }

  function toSummary(row: Awaited<ReturnType<KeysRepository['list']>>[number]): KeySummary {
    return {
      id: row.id,
      accountId: row.account_id,
      prefix: row.key_prefix,
      plan: row.plan as Plan,
      mode: row.mode as Mode,
      defaultRequesterVat: row.default_requester_vat,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
    };
  }

  /** Keeps a verdict read from the database, unless a creation or revocation came meanwhile. */
  function remember(hash: string, found: KeyVerdict, generation: number): KeyVerdict {
    if (generation !== changes) return found;
    if (found.kind === 'ok') cache?.set(hash, found);
    else misses?.set(hash, found);
    return found;
  }

  /**
   * Creates a key (and a new account unless `accountId` names an existing one). The full key is
   * returned here only; the database keeps its SHA-256. Within `trx` when given, else in a
   * transaction of its own.
   */
  async function createKey(input: NewKey, within?: Kysely<Database>): Promise<CreatedKey> {
    const now = clock.now().toISOString();
    const key = `svc_${input.mode}_${secret()}`;
    const id = ids.uuid();
    const accountId = input.accountId ?? ids.uuid();
    const hash = sha256Hex(key);
    changes++;
    const insert = async (trx: Kysely<Database>) => {
      if (input.accountId) {
        if (!(await repository.accountExists(input.accountId, trx))) {
          throw new Error(`Account ${input.accountId} does not exist`);
        }
      } else {
        await repository.insertAccount(
          { id: accountId, name: input.accountName ?? null, created_at: now },
          trx,
        );
      }
      await repository.insertKey(
        {
          id,
          account_id: accountId,
          key_hash: hash,
          key_prefix: key.slice(0, 13),
          plan: input.plan,
          mode: input.mode,
          default_requester_vat: input.defaultRequesterVat ?? null,
          created_at: now,
          revoked_at: null,
        },
        trx,
      );
    };
    await (within ? insert(within) : db.transaction().execute(insert));
    changes++;
    misses?.delete(hash);
    finding.delete(hash);
    return {
      id,
      accountId,
      key,
      plan: input.plan,
      mode: input.mode,
      defaultRequesterVat: input.defaultRequesterVat ?? null,
    };
  }

  /** The clock's time (ms), for expiry checks. */
  function now(): number {
    return clock.millis();
  }

  /**
   * What this instance knows of a presented key without reading the database: its principal, why it
   * is refused (malformed, or refused within `cacheMs`), or `undefined` when only a read can tell.
   */
  function known(presented: string): KeyVerdict | undefined {
    if (!isWellFormedKey(presented)) return malformed(presented);
    const hash = sha256Hex(presented);
    return cache?.get(hash) ?? misses?.get(hash);
  }

  /**
   * The principal of a presented key, or why it is refused: not a key, not found, revoked, or its
   * account disabled. Expiry is for the caller to check against `policy.expiresAt` (it comes while
   * the principal is cached; `unexpired`).
   */
  async function verdict(presented: string): Promise<KeyVerdict> {
    const seen = known(presented);
    if (seen) return seen;
    const hash = sha256Hex(presented);
    const under = finding.get(hash);
    if (under) return under;
    const generation = changes;
    const read = repository
      .findByHash(hash)
      .then((row) => remember(hash, verdictOfRow(hash, row), generation))
      .finally(() => {
        if (finding.get(hash) === read) finding.delete(hash);
      });
    finding.set(hash, read);
    return read;
  }

  /**
   * Resolves a presented key to its principal, its expiry checked against the clock; refused, for the
   * reason the request's 401 gives, when the key is malformed or unknown (`key_unknown`), an admin
   * key (`admin_key`), revoked (`key_revoked`), of a disabled account (`key_account_disabled`) or
   * expired (`key_expired`).
   */
  async function authenticate(presented: string): Promise<KeyVerdict> {
    return unexpired(await verdict(presented), clock.millis());
  }

  /**
   * Drops what this instance remembers of keys, after a change made here or announced by another
   * instance: the keys with these ids, every key of these accounts, and refusals of these hashes.
   */
  function forget(what: {
    keyIds?: readonly string[];
    accountIds?: readonly string[];
    hashes?: readonly string[];
  }): void {
    changes++;
    finding.clear();
    const keyIds = new Set(what.keyIds ?? []);
    const accountIds = new Set(what.accountIds ?? []);
    if (cache && (keyIds.size > 0 || accountIds.size > 0)) {
      for (const [hash, { principal }] of cache.entries()) {
        if (keyIds.has(principal.id) || accountIds.has(principal.accountId)) cache.delete(hash);
      }
    }
    // A refusal is kept by hash only: a key or account change may lift one (a re-enabled account).
    if (keyIds.size > 0 || accountIds.size > 0) misses?.clear();
    for (const hash of what.hashes ?? []) misses?.delete(hash);
    for (const id of keyIds) {
      activity?.delete(id);
      reading.delete(id);
    }
    if (accountIds.size > 0) {
      activity?.clear();
      reading.clear();
    }
  }

  /**
   * The state of the key with this id for work done later on its behalf (batch jobs, monitors):
   * `active`, or why not: `revoked`, `account_disabled`, `rolled` (its overlap ended), `expired`,
   * `unknown`. The demo key is always active. Cached like `authenticate` (the expiry is checked
   * against the clock on every call): a key changed by this service, or announced by another
   * instance, is seen at once; one changed elsewhere without an announcement within `cacheMs`.
   */
  async function stateOf(id: string): Promise<KeyState> {
    if (id === PLAYGROUND_PRINCIPAL.id) return 'active';
    const cached = activity?.get(id) ?? (await readState(id));
    if (cached.state !== 'active') return cached.state;
    if (cached.expiresAt !== null && Date.parse(cached.expiresAt) <= clock.millis())
      return cached.rolled ? 'rolled' : 'expired';
    return 'active';
  }

  async function listKeys(): Promise<KeySummary[]> {
    return (await repository.list()).map(toSummary);
  }

  async function countKeys(trx?: Kysely<Database>): Promise<number> {
    return repository.countKeys(trx);
  }

  /** Revokes a key (when it was revoked); refused (`not_found`) when no active key has that id. */
  async function revokeKey(id: string): Promise<{ kind: 'ok'; revokedAt: string } | Refusal> {
    const at = clock.now().toISOString();
    changes++;
    const done = await repository.revoke(id, at);
    changes++;
    finding.clear();
    if (done && cache) {
      for (const [hash, { principal }] of cache.entries()) if (principal.id === id) cache.delete(hash);
    }
    activity?.delete(id);
    reading.delete(id);
    return done ? { kind: 'ok', revokedAt: at } : refusal('not_found', `No active key has the id ${id}.`);
  }

  return { createKey, now, known, verdict, authenticate, forget, stateOf, listKeys, countKeys, revokeKey };
}

export type KeysService = ReturnType<typeof createKeysService>;
