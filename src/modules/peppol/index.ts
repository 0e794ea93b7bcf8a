// Peppol participant and document type identifiers: parsing, the VAT number mapping and the
// document types code list. Pure functions and data, no I/O.
export type { CodeListState } from './code-list-types.js';
export {
  type BillingKind,
  billingKind,
  DOCUMENT_TYPES_SOURCE,
  type DocumentTypeInfo,
  type DocumentTypeParts,
  describeDocumentType,
  documentTypeParts,
  knownDocumentTypes,
  PEPPOL_BIS_BILLING_3,
} from './document-classes.js';
export {
  type DerivedParticipantId,
  type DeriveOptions,
  deriveParticipantIds,
  looksLikeParticipantId,
  MAX_PARTICIPANT_VALUE_LENGTH,
  PARTICIPANT_ID_SCHEME,
  type ParticipantId,
  type ParticipantIdFailure,
  type ParticipantIdFailureReason,
  type ParticipantIdResult,
  type PeppolIdentifierResult,
  parseParticipantId,
  parsePeppolIdentifier,
  vatSchemeTable,
} from './identifiers.js';
export {
  INCLUDE_VALUES,
  type IncludeParse,
  type IncludeValue,
  PEPPOL_SCOPE_MESSAGE,
  type PeppolPart,
  parseInclude,
  peppolAllowed,
  peppolPart,
} from './include.js';
export {
  PARTICIPANT_SCHEMES_SOURCE,
  type ParticipantScheme,
  participantScheme,
  participantSchemes,
} from './schemes.js';
export type { PeppolService } from './service.js';
export type { PeppolData, PeppolOutcome, PeppolPort, PeppolStatus } from './types.js';
