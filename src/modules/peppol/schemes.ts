import type { CodeListState } from './code-list-types.js';
import { PARTICIPANT_SCHEME_ROWS, PARTICIPANT_SCHEMES_VERSION } from './participant-schemes.js';

/** A participant identifier scheme of OpenPeppol's code list. */
export interface ParticipantScheme {
  /** ISO 6523 International Code Designator, 4 digits, e.g. `0208`. */
  readonly icd: string;
  /** The code list's scheme ID, e.g. `BE:EN`. */
  readonly schemeId: string;
  /** ISO 3166 country code, or `international`. */
  readonly country: string;
  readonly name: string;
  readonly state: CodeListState;
  /** The code list release that deprecated the scheme, when it is deprecated or removed. */
  readonly deprecatedIn: string | null;
  /** The day after which the scheme may no longer be used, when it is removed. */
  readonly removalDate: string | null;
}

/** Where the scheme table comes from, for answers and docs. */
export const PARTICIPANT_SCHEMES_SOURCE = Object.freeze({
  list: 'Peppol Code Lists - Participant identifier schemes',
  version: PARTICIPANT_SCHEMES_VERSION,
  publisher: 'OpenPeppol eDEC',
});

const SCHEMES: ReadonlyMap<string, ParticipantScheme> = new Map(
  PARTICIPANT_SCHEME_ROWS.map(([icd, schemeId, country, name, state, deprecatedIn, removalDate]) => [
    icd,
    Object.freeze({ icd, schemeId, country, name, state, deprecatedIn, removalDate }),
  ]),
);

/** The code list's entry for an ICD, or undefined when the code list has none. */
export function participantScheme(icd: string): ParticipantScheme | undefined {
  return SCHEMES.get(icd);
}

/** Every scheme of the code list, in its order. */
export function participantSchemes(): ParticipantScheme[] {
  return [...SCHEMES.values()];
}
