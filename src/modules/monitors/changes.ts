import type { MonitorsTable } from '../../db/schema.js';
import type { ValidationOutcome } from '../validation/index.js';
import type { ChangeType } from './views.js';

/** Compared without case and spacing differences, which registries produce without any real change. */
function comparable(value: string | null): string | null {
  return value === null ? null : value.replace(/\s+/g, ' ').trim().toUpperCase();
}

/** What a check found, before it is compared with the monitor's last known state. */
export type Finding =
  | { ok: true; valid: boolean; name: string | null; address: string | null; outcome: ValidationOutcome }
  | {
      ok: false;
      message: string;
      outcome: ValidationOutcome | null;
      /** What a national register answered while VIES could not: kept on the check, never a change. */
      register?: { valid: boolean; name: string | null; address: string | null };
    };

/**
 * A national register's answer while VIES could not answer: what it said is kept on the check, but
 * a domestic register alone is not the state the monitor follows (VIES's), so it records no change
 * and the check counts as failed (VIES is asked again at the next retry).
 */
function registerFinding(outcome: Extract<ValidationOutcome, { kind: 'ok' }>): Finding {
  const { data, meta } = outcome;
  const status = meta.fallback?.register_status ? `, ${meta.fallback.register_status}` : '';
  const said = data.valid ? 'registered' : 'not registered';
  return {
    ok: false,
    message:
      `VIES did not answer (${meta.fallback?.reason ?? 'unavailable'}); the national register ${meta.source} ` +
      `answered (${said}${status}), which alone records no change.`,
    outcome,
    register: { valid: data.valid, name: data.company?.name ?? null, address: data.company?.address ?? null },
  };
}

export function findingOf(outcome: ValidationOutcome): Finding {
  switch (outcome.kind) {
    case 'ok':
      // A stored answer served because the registry is down is not a check: the state is unknown now.
      if (outcome.meta.source_status === 'degraded') {
        return {
          ok: false,
          message: `The ${outcome.meta.source} registry did not answer; only an answer stored at ${outcome.meta.cached_at ?? outcome.data.verified_at} is available.`,
          outcome,
        };
      }
      if (outcome.meta.source_status === 'fallback') return registerFinding(outcome);
      return {
        ok: true,
        valid: outcome.data.valid,
        name: outcome.data.company?.name ?? null,
        address: outcome.data.company?.address ?? null,
        outcome,
      };
    case 'refused':
      return { ok: false, message: outcome.message, outcome };
  }
}

/** The changes between a monitor's last known state and a successful check. */
export function detectChanges(
  before: Pick<MonitorsTable, 'status' | 'name' | 'address'>,
  after: { valid: boolean; name: string | null; address: string | null },
): Array<{ type: ChangeType; before: string | null; after: string | null }> {
  if (before.status === 'unknown') return [];
  if (before.status === 'valid' && !after.valid)
    return [{ type: 'became_invalid', before: 'valid', after: 'invalid' }];
  if (before.status === 'invalid' && after.valid)
    return [{ type: 'became_valid', before: 'invalid', after: 'valid' }];
  if (!after.valid) return [];
  const changes: Array<{ type: ChangeType; before: string | null; after: string | null }> = [];
  // A registry that stops sharing a value (`---`) has not changed it: only two known values are compared.
  if (before.name !== null && after.name !== null && comparable(before.name) !== comparable(after.name))
    changes.push({ type: 'name_changed', before: before.name, after: after.name });
  if (
    before.address !== null &&
    after.address !== null &&
    comparable(before.address) !== comparable(after.address)
  )
    changes.push({ type: 'address_changed', before: before.address, after: after.address });
  return changes;
}
