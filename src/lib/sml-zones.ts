/** SML zones. OpenPeppol's own SML replaced the European Commission's on 2026-03-19 (peppol-commons ESML). */
export const SML_ZONES = Object.freeze({
  /** OpenPeppol production SML, from 2026-03-19. */
  peppolProduction: 'participant.sml.prod.tech.peppol.org',
  /** OpenPeppol test SML, from 2026-03-19. */
  peppolTest: 'participant.sml.test.tech.peppol.org',
  /** The European Commission's production SML (DIGIT), before. */
  ecProduction: 'edelivery.tech.ec.europa.eu',
  /** The European Commission's acceptance SML (SMK), before. */
  ecAcceptance: 'acc.edelivery.tech.ec.europa.eu',
});
