/**
 * The state of an entry in OpenPeppol's code lists: `active`; `deprecated` (still allowed, to be
 * replaced); `removed` (no longer allowed after its removal date).
 */
export type CodeListState = 'active' | 'deprecated' | 'removed';
