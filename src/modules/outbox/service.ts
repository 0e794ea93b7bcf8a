import type { Kysely } from 'kysely';
import { createGroupWriter, type GroupCommitOptions } from '../../db/group-commit.js';
import type { Database, RegistryAnswersTable } from '../../db/schema.js';
import type { AuditInput } from '../audits/index.js';
import type { BroadcastEvent, DomainEvent, StoredEvent } from '../events/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';

/** A registry's answer, stored so later look-ups (on every instance) are served from it. */
export type RegistryAnswer = RegistryAnswersTable;

/** The audit record of a served call: the response exactly as sent, under the key that asked. */
export interface AuditFact extends AuditInput {
  principal: ApiKeyPrincipal;
}

/**
 * What a served call leaves behind besides its own rows. Everything in it is written in one
 * transaction, or nothing is.
 */
export interface Facts {
  /** Fresh registry answers for the shared answer cache. */
  answers?: readonly RegistryAnswer[];
  audit?: AuditFact;
  /** Domain events; each gets its webhook deliveries in the same transaction. */
  events?: readonly DomainEvent[];
  /** Events of no key, already stored by the caller's own writes; each gets its webhook deliveries. */
  broadcasts?: readonly BroadcastEvent[];
}

/**
 * A feature's own rows of the same call (a confirmation's evidence, a batch item's result, a
 * monitor's state), written first. It may add facts it could only know inside the transaction, or
 * return `false` to record nothing at all (its work was taken over by another worker).
 */
export type OwnWrites = (trx: Kysely<Database>) => Promise<Facts | false | undefined>;

export interface Entry extends Facts {
  own?: OwnWrites;
}

/** The side effects the outbox writes through and tells after commit, wired in the container. */
export interface OutboxPorts {
  db: Kysely<Database>;
  answers: {
    /** Stores answers, each unless a newer one of its number is stored. */
    storeMany(answers: readonly RegistryAnswer[], trx: Kysely<Database>): Promise<void>;
    /** After commit: keep the stored answers in this process's memory. */
    remember(answers: readonly RegistryAnswer[]): void;
  };
  audits: { recordMany(records: readonly AuditFact[], trx: Kysely<Database>): Promise<void> };
  events: { recordMany(events: readonly DomainEvent[], trx: Kysely<Database>): Promise<StoredEvent[]> };
  deliveries: {
    /** Queues the events' webhook deliveries; returns how many. */
    enqueueMany(events: readonly StoredEvent[], trx: Kysely<Database>): Promise<number>;
    /** Queues the deliveries of broadcast events to the endpoints that subscribe to them; returns how many. */
    enqueueBroadcasts(events: readonly BroadcastEvent[], trx: Kysely<Database>): Promise<number>;
    /** After commit: deliveries were queued. */
    notify(): void;
  };
  /** Told of every committed group's size (metrics). */
  onCommit?: (units: number) => void;
}

/** What was written of one entry (its facts), and whether its group queued webhook deliveries. */
type Written = { facts: Facts; deliveries: boolean } | false;

/**
 * The completion step of every audited piece of work — validate, decide, confirm, a synchronous
 * batch, a batch job's items and its completion, a monitor's check, the CLI's direct mode: one
 * transaction (grouped with other callers') writes the callers' own rows, then the group's registry
 * answers, audit records, events and webhook deliveries with one statement per table. Only after the
 * commit are in-memory caches updated and workers woken, and only then does a caller answer.
 */
export function createOutbox(ports: OutboxPorts) {
  /**
   * Writes a group of entries. Each entry's own rows come first, in arrival order (they may decline,
   * or add facts); then the facts of all of them, one statement per table: on PostgreSQL every
   * statement is a round trip, and a group of 50 calls costs 4 instead of 150.
   */
  async function write(trx: Kysely<Database>, entries: Entry[]): Promise<Written[]> {
    const written: Array<{ facts: Facts } | false> = [];
    for (const entry of entries) {
      if (!entry.own) {
        written.push({ facts: entry });
        continue;
      }
      const more = await entry.own(trx);
      written.push(more === false ? false : { facts: more ? { ...entry, ...more } : entry });
    }
    const kept = written.filter((w): w is { facts: Facts } => w !== false).map((w) => w.facts);
    const answers = kept.flatMap((f) => f.answers ?? []);
    const audits = kept.flatMap((f) => (f.audit ? [f.audit] : []));
    const events = kept.flatMap((f) => f.events ?? []);
    const broadcasts = kept.flatMap((f) => f.broadcasts ?? []);
    if (answers.length > 0) await ports.answers.storeMany(answers, trx);
    if (audits.length > 0) await ports.audits.recordMany(audits, trx);
    let deliveries =
      events.length > 0 &&
      (await ports.deliveries.enqueueMany(await ports.events.recordMany(events, trx), trx)) > 0;
    if (broadcasts.length > 0 && (await ports.deliveries.enqueueBroadcasts(broadcasts, trx)) > 0)
      deliveries = true;
    return written.map((w) => (w === false ? false : { facts: w.facts, deliveries }));
  }

  function afterCommit(written: Written): boolean {
    if (written === false) return false;
    if (written.facts.answers?.length) ports.answers.remember(written.facts.answers);
    if (written.deliveries) ports.deliveries.notify();
    return true;
  }

  /**
   * A group whose entries hold nothing but audit records (test keys' validations and decisions) is
   * written with one statement, atomic without a transaction around it.
   */
  function needsTransaction(entries: Entry[]): boolean {
    return entries.some(
      (e) =>
        e.own !== undefined ||
        (e.answers?.length ?? 0) > 0 ||
        (e.events?.length ?? 0) > 0 ||
        (e.broadcasts?.length ?? 0) > 0,
    );
  }

  /**
   * A lane of its own: its groups wait `delayMs` for more units (work that finishes one unit at a
   * time) and hold at most `maxUnits`.
   */
  function lane(options: Omit<GroupCommitOptions, 'onCommit'> = {}) {
    const writer = createGroupWriter<Entry, Written>(ports.db, {
      ...options,
      ...(ports.onCommit ? { onCommit: ports.onCommit } : {}),
      write,
      needsTransaction,
    });
    /**
     * Writes the entry in the next group transaction; resolves once committed: `true` when it was
     * recorded, `false` when its own writes declined (nothing was written).
     */
    async function record(entry: Entry): Promise<boolean> {
      return afterCommit(await writer.run(entry));
    }
    return { record };
  }

  const requests = lane();
  return { record: requests.record, lane };
}

export type Outbox = ReturnType<typeof createOutbox>;
export type OutboxLane = ReturnType<Outbox['lane']>;
