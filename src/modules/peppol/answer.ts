/**
 * The answer of a look-up from its participants' parts: each document type described from the code
 * list, `reachable` and `can_receive_invoices`. Pure functions.
 */
import { describeDocumentType } from './document-classes.js';
import { participantScheme } from './schemes.js';
import type { PeppolData, PeppolParticipant, StoredParticipant } from './types.js';

/** A participant whose SML look-up failed (and of which nothing is stored): unknown. */
export interface UnknownParticipant {
  unavailable: true;
  id: string;
  icd: string;
  message: string;
}

function schemeName(icd: string): string {
  return participantScheme(icd)?.schemeId ?? icd;
}

export function describeParticipant(stored: StoredParticipant | UnknownParticipant): PeppolParticipant {
  if ('unavailable' in stored) {
    return {
      id: stored.id,
      icd: stored.icd,
      scheme_name: schemeName(stored.icd),
      registered: null,
      sml_status: 'unavailable',
      sml_error: stored.message,
      smp_url: null,
      smp_status: null,
      document_types: null,
      business_card: null,
    };
  }
  return {
    id: stored.id,
    icd: stored.icd,
    scheme_name: schemeName(stored.icd),
    registered: stored.registered,
    sml_status: 'ok',
    sml_error: null,
    smp_url: stored.smp_url,
    smp_status: stored.smp_status,
    document_types:
      stored.document_types === null
        ? null
        : stored.document_types.map((id) => {
            const info = describeDocumentType(id);
            return { id, name: info.name, invoice: info.invoice };
          }),
    business_card: stored.business_card,
  };
}

/**
 * True when a registered participant's SMP lists an invoice of BIS Billing 3.0 or another EN 16931
 * CIUS; false when none does and at least one registered participant's SMP was read (or none is
 * registered at all); null when participants are registered but no SMP of theirs could be read,
 * and whenever a participant's SML look-up failed (it might have listed an invoice).
 */
export function canReceiveInvoices(participants: readonly PeppolParticipant[]): boolean | null {
  const registered = participants.filter((p) => p.registered === true);
  const read = registered.filter((p) => p.document_types !== null);
  if (read.some((p) => p.document_types?.some((d) => d.invoice))) return true;
  if (participants.some((p) => p.sml_status === 'unavailable')) return null;
  if (registered.length === 0) return false;
  return read.length > 0 ? false : null;
}

export function peppolData(
  identifier: string,
  stored: ReadonlyArray<StoredParticipant | UnknownParticipant>,
  checkedAt: Date,
): PeppolData {
  const participants = stored.map(describeParticipant);
  return {
    identifier,
    reachable: participants.some((p) => p.registered === true),
    can_receive_invoices: canReceiveInvoices(participants),
    participants,
    checked_at: checkedAt.toISOString(),
  };
}
