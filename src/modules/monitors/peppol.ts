/**
 * A monitor's Peppol reachability (`"peppol": true`): what a check's Peppol look-up says, and
 * whether that is a change of the last known state. Pure functions, no I/O.
 *
 * A Peppol outage is never a change: a look-up that did not answer, or answered only from a stored
 * answer because the SML could not be asked (`degraded`), leaves the state as it is. Nor is an
 * unknown `can_receive_invoices` (no registered participant's SMP could be read): the last known
 * value is kept.
 */
import type { MonitorsTable } from '../../db/schema.js';
import type { PeppolData, PeppolOutcome, PeppolPart } from '../peppol/index.js';

/** What a monitor knows of a company's Peppol reachability. */
export interface PeppolState {
  reachable: boolean;
  can_receive_invoices: boolean | null;
}

/** `monitor.peppol`: null for a monitor that does not check Peppol. */
export interface MonitorPeppolView {
  /** Null until a Peppol look-up answered. */
  reachable: boolean | null;
  can_receive_invoices: boolean | null;
  /** When the last known state was learnt; null before. */
  checked_at: string | null;
}

export function storedPeppolState(row: Pick<MonitorsTable, 'peppol_state'>): PeppolState | null {
  if (row.peppol_state === null) return null;
  try {
    return JSON.parse(row.peppol_state) as PeppolState;
  } catch {
    return null;
  }
}

export function monitorPeppolView(
  row: Pick<MonitorsTable, 'peppol' | 'peppol_state' | 'peppol_checked_at'>,
): MonitorPeppolView | null {
  if (row.peppol !== 1) return null;
  const state = storedPeppolState(row);
  return {
    reachable: state?.reachable ?? null,
    can_receive_invoices: state?.can_receive_invoices ?? null,
    checked_at: row.peppol_checked_at,
  };
}

/** The answer a check's look-up gives, or null when it gave none that may change the state. */
export function peppolAnswerOf(outcome: PeppolOutcome | null): PeppolData | null {
  if (outcome?.kind !== 'ok' || outcome.meta.source_status === 'degraded') return null;
  return outcome.data;
}

/** The state after an answer, and whether it changed (the first answer is no change). */
export function nextPeppolState(
  before: PeppolState | null,
  answer: Pick<PeppolData, 'reachable' | 'can_receive_invoices'>,
): { state: PeppolState; changed: boolean } {
  const state: PeppolState = {
    reachable: answer.reachable,
    can_receive_invoices: answer.can_receive_invoices ?? before?.can_receive_invoices ?? null,
  };
  const changed =
    before !== null &&
    (before.reachable !== state.reachable || before.can_receive_invoices !== state.can_receive_invoices);
  return { state, changed };
}

/** The Peppol part of a check's audit record, as `include=peppol` gives it. */
export function peppolPartOf(outcome: PeppolOutcome | null): PeppolPart {
  if (!outcome) return { error: { code: 'registry_unavailable', message: 'The Peppol look-up failed.' } };
  switch (outcome.kind) {
    case 'ok':
      return outcome.data;
    case 'unavailable':
      return { error: { code: 'registry_unavailable', message: outcome.message } };
    case 'country_unsupported':
    case 'invalid_format':
      return { error: { code: outcome.kind, message: outcome.message } };
    default:
      return { error: { code: 'registry_unavailable', message: 'The Peppol look-up failed.' } };
  }
}
