import type { Clock } from '../../lib/clock.js';
import type { ApiKeyPrincipal, Operation, Plan } from '../keys/index.js';
import type { UsageCount, UsageRepository } from './repository.js';

const DAY_MS = 86_400_000;

export interface UsageReport {
  key_id: string;
  plan: Plan;
  mode: 'live' | 'test';
  from: string;
  to: string;
  requests_per_minute: number;
  totals: { requests: number; errors: number };
  operations: Array<{ operation: string; requests: number; errors: number }>;
  daily: Array<{ date: string; requests: number; errors: number }>;
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Requests per key, UTC day and operation. Counting is a map update in this process; the counts are
 * added to the database every `flushMs` (and at shutdown), so a request costs no write of its own.
 * A crash loses at most the last interval's counts; a failed write keeps them for the next one.
 */
export function createUsageService(deps: {
  repository: UsageRepository;
  clock: Clock;
  requestsPerMinute: Readonly<Record<Plan, number>>;
  onError?: (error: unknown) => void;
}) {
  const { repository, clock, requestsPerMinute } = deps;
  let pending = new Map<string, UsageCount>();
  let writing: Promise<void> = Promise.resolve();
  let day = '';
  let dayEnds = 0;

  function today(): string {
    const now = clock.millis();
    if (now >= dayEnds || now < dayEnds - DAY_MS) {
      day = dayOf(now);
      dayEnds = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    }
    return day;
  }

  function merge(into: Map<string, UsageCount>, count: UsageCount) {
    const key = `${count.keyId}|${count.day}|${count.operation}`;
    const existing = into.get(key);
    if (existing) {
      existing.requests += count.requests;
      existing.errors += count.errors;
    } else {
      into.set(key, { ...count });
    }
  }

  /** Writes the pending counts; writes run one after another, and a failed one keeps its counts. */
  function flush(): Promise<void> {
    writing = writing.then(async () => {
      if (pending.size === 0) return;
      const batch = pending;
      pending = new Map();
      try {
        await repository.add([...batch.values()]);
      } catch (error) {
        for (const count of batch.values()) merge(pending, count);
        throw error;
      }
    });
    const done = writing;
    writing = writing.catch(() => {});
    return done;
  }

  return {
    /** Counts one answered request of a key. */
    record(keyId: string, operation: Operation, status: number): void {
      const d = today();
      const key = `${keyId}|${d}|${operation}`;
      const count = pending.get(key);
      if (count) {
        count.requests++;
        if (status >= 400) count.errors++;
      } else {
        pending.set(key, { keyId, day: d, operation, requests: 1, errors: status >= 400 ? 1 : 0 });
      }
    },

    flush,

    /** The key's usage over the last `days` UTC days, today included, with every day listed. */
    async report(principal: ApiKeyPrincipal, days: number): Promise<UsageReport> {
      await flush().catch(deps.onError ?? (() => {}));
      const to = today();
      const fromMs = Date.parse(`${to}T00:00:00Z`) - (days - 1) * DAY_MS;
      const from = dayOf(fromMs);
      const rows = await repository.list(principal.id, from, to);
      // Counts another write has not stored yet (the write failed) are still this key's usage.
      for (const count of pending.values()) {
        if (count.keyId === principal.id && count.day >= from) rows.push(count);
      }
      const daily = new Map<string, { date: string; requests: number; errors: number }>();
      for (let i = 0; i < days; i++) {
        const date = dayOf(fromMs + i * DAY_MS);
        daily.set(date, { date, requests: 0, errors: 0 });
      }
      const operations = new Map<string, { operation: string; requests: number; errors: number }>();
      const totals = { requests: 0, errors: 0 };
      for (const row of rows) {
        const d = daily.get(row.day);
        if (d) {
          d.requests += row.requests;
          d.errors += row.errors;
        }
        const op = operations.get(row.operation) ?? { operation: row.operation, requests: 0, errors: 0 };
        op.requests += row.requests;
        op.errors += row.errors;
        operations.set(row.operation, op);
        totals.requests += row.requests;
        totals.errors += row.errors;
      }
      return {
        key_id: principal.id,
        plan: principal.plan,
        mode: principal.mode,
        from,
        to,
        requests_per_minute: requestsPerMinute[principal.plan],
        totals,
        operations: [...operations.values()].sort(
          (a, b) => b.requests - a.requests || a.operation.localeCompare(b.operation),
        ),
        daily: [...daily.values()],
      };
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
