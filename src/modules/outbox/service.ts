import type { Kysely } from 'kysely';
import { createGroupCommit, type GroupCommitOptions } from '../../db/group-commit.js';
import type { Database, RegistryAnswersTable } from '../../db/schema.js';
import type { AuditInput } from '../audits/service.js';
import type { DomainEvent, StoredEvent } from '../events/service.js';
import type { ApiKeyPrincipal } from '../keys/service.js';

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
    store(answer: RegistryAnswer, trx: Kysely<Database>): Promise<void>;
    /** After commit: keep the stored answers in this process's memory. */
    remember(answers: readonly RegistryAnswer[]): void;
  };
  audits: { record(principal: ApiKeyPrincipal, input: AuditInput, trx: Kysely<Database>): Promise<void> };
  events: { record(event: DomainEvent, trx: Kysely<Database>): Promise<StoredEvent> };
  deliveries: {
    /** Queues the event's webhook deliveries; returns how many. */
    enqueue(event: StoredEvent, trx: Kysely<Database>): Promise<number>;
    /** After commit: deliveries were queued. */
    notify(): void;
  };
  /** Told of every committed group's size (metrics). */
  onCommit?: (units: number) => void;
}

/**
 * The completion step of every audited piece of work — validate, decide, confirm, a synchronous
 * batch, a batch job's items and its completion, a monitor's check, the CLI's direct mode: one
 * transaction (grouped with other callers' transactions) writes the caller's own rows, the registry
 * answers, the audit record, the events and their webhook deliveries. Only after the commit are
 * in-memory caches updated and workers woken, and only then does the caller answer.
 */
export function createOutbox(ports: OutboxPorts) {
  /** What was written: the facts and how many webhook deliveries were queued; `false` for nothing. */
  type Written = { facts: Facts; deliveries: number } | false;

  async function write(entry: Entry, trx: Kysely<Database>): Promise<Written> {
    let facts: Facts = entry;
    if (entry.own) {
      const more = await entry.own(trx);
      if (more === false) return false;
      if (more) facts = { ...entry, ...more };
    }
    for (const answer of facts.answers ?? []) await ports.answers.store(answer, trx);
    if (facts.audit) {
      const { principal, ...input } = facts.audit;
      await ports.audits.record(principal, input, trx);
    }
    let deliveries = 0;
    for (const event of facts.events ?? []) {
      deliveries += await ports.deliveries.enqueue(await ports.events.record(event, trx), trx);
    }
    return { facts, deliveries };
  }

  function afterCommit(written: Written): boolean {
    if (written === false) return false;
    if (written.facts.answers?.length) ports.answers.remember(written.facts.answers);
    if (written.deliveries > 0) ports.deliveries.notify();
    return true;
  }

  function lane(options: Omit<GroupCommitOptions, 'onCommit'> = {}) {
    const commit = createGroupCommit(ports.db, {
      ...options,
      ...(ports.onCommit ? { onCommit: ports.onCommit } : {}),
    });
    return {
      /**
       * Writes the entry in the next group transaction; resolves once committed: `true` when it was
       * recorded, `false` when its own writes declined (nothing was written).
       */
      async record(entry: Entry): Promise<boolean> {
        return afterCommit(await commit.run((trx) => write(entry, trx)));
      },
    };
  }

  const requests = lane();
  return {
    record: requests.record,
    /**
     * A lane of its own: its groups wait `delayMs` for more units (work that finishes one unit at a
     * time) and hold at most `maxUnits`.
     */
    lane,
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
export type OutboxLane = ReturnType<Outbox['lane']>;
