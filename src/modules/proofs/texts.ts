/** The proof's words in each language, and the rule that picks the language. */
import type { LanguagePreference, MatchCode, ProofLanguage } from './types.js';

/** `2026-11-28T03:50:00.123Z` → `2026-11-28 03:50:00.123 UTC`; anything else as given. */
export function formatTime(value: string | null, none: string): string {
  if (value === null) return none;
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:Z|\+00:00)$/.exec(value);
  return m ? `${m[1]} ${m[2]} UTC` : value;
}

export const PROOF_LANGUAGES: readonly ProofLanguage[] = ['de', 'en'];

/** Requester countries whose proofs are in German (Switzerland: its German-speaking majority). */
const GERMAN_SPEAKING = new Set(['DE', 'AT', 'CH', 'LI']);

function isProofLanguage(value: string): value is ProofLanguage {
  return (PROOF_LANGUAGES as readonly string[]).includes(value);
}

/** The first language of an `Accept-Language` header that a proof exists in (by weight; `*` names none). */
function fromAcceptLanguage(header: string): ProofLanguage | null {
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q ? Number(q.slice(2)) : 1;
      return { primary: tag.trim().toLowerCase().split('-')[0] ?? '', weight, index };
    })
    .filter((entry) => Number.isFinite(entry.weight) && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const entry of ranked) if (isProofLanguage(entry.primary)) return entry.primary;
  return null;
}

/**
 * The language of a proof: `?lang=` when given; else the first language of `Accept-Language` that a
 * proof exists in; else the requester's country (German for DE, AT, CH and LI requesters); else English.
 */
export function chooseLanguage(preference: LanguagePreference, requesterVat: string | null): ProofLanguage {
  if (preference.lang && isProofLanguage(preference.lang)) return preference.lang;
  const accepted = preference.acceptLanguage ? fromAcceptLanguage(preference.acceptLanguage) : null;
  if (accepted) return accepted;
  const country = (requesterVat ?? '').slice(0, 2).toUpperCase();
  return GERMAN_SPEAKING.has(country) ? 'de' : 'en';
}

export interface ProofTexts {
  title: { confirmation: string; validation: string };
  subtitle: string;
  testMode: string;
  sections: {
    asked: string;
    answer: string;
    times: string;
    evidence: string;
    timestamp: string;
    verify: string;
  };
  fields: Record<
    | 'requester'
    | 'vatNumber'
    | 'name'
    | 'street'
    | 'postcode'
    | 'town'
    | 'address'
    | 'authority'
    | 'statusCode'
    | 'valid'
    | 'qualified'
    | 'validFrom'
    | 'validTo'
    | 'taxauthId'
    | 'consultationNumber'
    | 'authorityTime'
    | 'received'
    | 'answered'
    | 'stored'
    | 'keptUntil'
    | 'recordId'
    | 'requestId'
    | 'hash'
    | 'hashCheck'
    | 'seq'
    | 'prevHash'
    | 'headSeq'
    | 'headHash'
    | 'signature'
    | 'signatureCheck'
    | 'publicKey'
    | 'tokenHead'
    | 'genTime'
    | 'tsa'
    | 'viesReason'
    | 'registerStatus'
    | 'scope'
    | 'dataDate'
    | 'identifiers'
    | 'flags',
    string
  >;
  /** What a domestic register's answer proves (and does not). */
  domesticScope: string;
  grid: { field: string; asked: string; code: string; meaning: string };
  match: Record<MatchCode, string>;
  yes: string;
  no: string;
  none: string;
  notSent: string;
  matches: string;
  doesNotMatch: string;
  signatureValid: string;
  signatureInvalid: string;
  unsigned: string;
  notChecked: string;
  auditNotInChain: string;
  noToken: string;
  authorities: Record<string, string>;
  page(n: number, of: number): string;
  generated(at: string): string;
  steps: {
    confirmation(id: string, seq: number, tokenHeadSeq: number | null): string[];
    validation(id: string, keptUntil: string, shown: { consultation: boolean; register: boolean }): string[];
  };
}

const DE: ProofTexts = {
  title: {
    confirmation: 'Nachweis einer qualifizierten Bestätigungsanfrage (§\u00a018e\u00a0UStG)',
    validation: 'Nachweis einer Prüfung der USt-IdNr.',
  },
  subtitle: 'Aus dem gespeicherten Datensatz erzeugt; die Angaben der Behörde sind unverändert übernommen.',
  testMode: 'TESTMODUS: keine Antwort einer Behörde, ohne Beweiswert.',
  sections: {
    asked: 'Anfrage',
    answer: 'Antwort der Behörde',
    times: 'Zeitpunkte',
    evidence: 'Datensatz und Nachweiskette',
    timestamp: 'Vertrauenswürdiger Zeitstempel (RFC 3161)',
    verify: 'Prüfung',
  },
  fields: {
    requester: 'Anfragende USt-IdNr.',
    vatNumber: 'Angefragte USt-IdNr.',
    name: 'Firmenname',
    street: 'Straße',
    postcode: 'PLZ',
    town: 'Ort',
    address: 'Anschrift',
    authority: 'Behörde',
    statusCode: 'Statuscode',
    valid: 'USt-IdNr. gültig',
    qualified: 'Qualifiziert bestätigt',
    validFrom: 'Gültig ab',
    validTo: 'Gültig bis',
    taxauthId: 'Anfrage-ID der Behörde',
    consultationNumber: 'Abfragenummer',
    authorityTime: 'Anfragezeitpunkt laut Behörde',
    received: 'Anfrage bei openvat eingegangen',
    answered: 'Antwort der Behörde',
    stored: 'Gespeichert',
    keptUntil: 'Aufbewahrt bis',
    recordId: 'Nachweis-ID',
    requestId: 'Request-ID',
    hash: 'Hash des Datensatzes (SHA-256)',
    hashCheck: 'Hash neu berechnet',
    seq: 'Position in der Kette (seq)',
    prevHash: 'Hash des vorigen Glieds',
    headSeq: 'Neuester Kettenkopf (seq)',
    headHash: 'Hash des Kettenkopfs',
    signature: 'Ed25519-Signatur des Kettenkopfs',
    signatureCheck: 'Signatur geprüft',
    publicKey: 'Öffentlicher Schlüssel',
    tokenHead: 'Zeitstempel über Kettenkopf (seq)',
    genTime: 'Zeit laut Zeitstempeldienst',
    tsa: 'Zeitstempeldienst (TSA)',
    viesReason: 'VIES antwortete nicht',
    registerStatus: 'Status laut Register',
    scope: 'Umfang der Registrierung',
    dataDate: 'Stand der Registerdatei',
    identifiers: 'Kennungen des Registers',
    flags: 'Hinweise des Registers',
  },
  domesticScope: 'inländisch: kein Nachweis einer Registrierung für innergemeinschaftliche Umsätze',
  grid: { field: 'Feld', asked: 'Angefragt', code: 'Ergebnis', meaning: 'Bedeutung' },
  match: {
    A: 'stimmt überein',
    B: 'stimmt nicht überein',
    C: 'nicht angefragt',
    D: 'vom Mitgliedstaat nicht mitgeteilt',
  },
  yes: 'ja',
  no: 'nein',
  none: '—',
  notSent: '(nicht angegeben)',
  matches: 'stimmt überein',
  doesNotMatch: 'STIMMT NICHT ÜBEREIN',
  signatureValid: 'gültig',
  signatureInvalid: 'UNGÜLTIG',
  unsigned: 'nicht signiert (kein Nachweisschlüssel eingerichtet)',
  notChecked: 'nicht geprüft (kein öffentlicher Schlüssel)',
  auditNotInChain:
    'Prüfprotokolle sind nicht Teil der Nachweiskette. Der Hash ist SHA-256 über die gespeicherte Antwort, Byte für Byte.',
  noToken: 'Noch kein Zeitstempel-Token deckt diesen Datensatz ab.',
  authorities: {
    taxauth: 'Bundeszentralamt für Steuern (eVatR)',
    vies: 'Europäische Kommission (VIES)',
    hmrc: 'HM Revenue & Customs (Vereinigtes Königreich)',
    bfs: 'Bundesamt für Statistik (UID-Register, Schweiz)',
    brreg: 'Brønnøysundregistrene (Norwegen)',
    pl_whitelist: 'Finanzministerium Polen (Weiße Liste der MwSt-Pflichtigen)',
    cz_adis: 'Finanzverwaltung Tschechien (Register der MwSt-Zahler, ADIS)',
    ro_anaf: 'ANAF Rumänien (Register der MwSt-Zahler)',
    fi_prh: 'Patent- und Registeramt Finnland (PRH/YTJ, MwSt-Register)',
    sk_financnasprava: 'Finanzverwaltung Slowakei (Register der MwSt-Zahler)',
    si_furs: 'Finanzverwaltung Slowenien (FURS, Verzeichnis der MwSt-Pflichtigen)',
    lv_vid: 'Staatliche Steuerverwaltung Lettland (VID, MwSt-Register)',
  },
  page: (n, of) => `Seite ${n} von ${of}`,
  generated: (at) => `Erstellt von openvat am ${at}`,
  steps: {
    confirmation: (id, seq, tokenHeadSeq) => [
      `GET /v1/confirmations/${id} liefert den gespeicherten Datensatz: die Anfrage und die Antwort der Behörde Byte für Byte.`,
      'Der Hash ist SHA-256 über das JSON-Array der Felder des Datensatzes (Aufbau in docs/confirmations.md); prev_hash ist der Hash des vorigen Glieds.',
      `„openvat evidence verify --public-key <Datei> --head <exportierter Kettenkopf>${tokenHeadSeq === null ? '' : ' --tsa-roots <Wurzelzertifikate des Zeitstempeldienstes>'}“ prüft alle Glieder bis zum Kettenkopf, Glied ${seq} eingeschlossen, und die Ed25519-Signatur des Kettenkopfs${tokenHeadSeq === null ? '' : ', dazu die Zeitstempel-Token gegen diese Wurzelzertifikate'}.`,
      tokenHeadSeq === null
        ? 'Sobald ein Zeitstempel-Token diesen Datensatz abdeckt, nennt es ein neu erzeugter Nachweis.'
        : `„openvat evidence export-token --seq ${tokenHeadSeq} --tsa-roots <Wurzelzertifikate des Zeitstempeldienstes>“ schreibt den Kettenkopf und sein Zeitstempel-Token; „openssl ts -verify“ prüft es ohne openvat gegen das Wurzelzertifikat, das der Zeitstempeldienst veröffentlicht (Befehle in docs/evidence.md). Das Token beweist, dass alle Glieder bis seq ${tokenHeadSeq} zu seiner Zeit bestanden.`,
    ],
    validation: (id, keptUntil, shown) => [
      `GET /v1/audits/${id} liefert die gespeicherte Antwort; ihr SHA-256 ist der oben genannte Hash.`,
      ...(shown.register
        ? [
            'VIES konnte nicht antworten; die Antwort stammt aus dem nationalen Register des Mitgliedstaats (meta.fallback der gespeicherten Antwort) und belegt nur eine inländische Registrierung.',
          ]
        : []),
      ...(shown.consultation
        ? [
            'Die Abfragenummer wurde vom Register des Mitgliedstaats vergeben; die Steuerverwaltungen können die Abfrage mit ihr nachvollziehen.',
          ]
        : []),
      `Das Prüfprotokoll wird bis ${keptUntil} aufbewahrt; danach ist es nicht mehr abrufbar.`,
    ],
  },
};

const EN: ProofTexts = {
  title: {
    confirmation: 'Proof of a qualified VAT number confirmation (§18e\u00a0UStG)',
    validation: 'Proof of a VAT number validation',
  },
  subtitle: "Generated from the stored record; the authority's statements are reproduced unchanged.",
  testMode: 'TEST MODE: not an answer of the authority, of no value as evidence.',
  sections: {
    asked: 'What was asked',
    answer: 'What the authority answered',
    times: 'When',
    evidence: 'Record and evidence chain',
    timestamp: 'Trusted time-stamp (RFC 3161)',
    verify: 'How to verify',
  },
  fields: {
    requester: 'Requester VAT number',
    vatNumber: 'Requested VAT number',
    name: 'Company name',
    street: 'Street',
    postcode: 'Postcode',
    town: 'Town',
    address: 'Address',
    authority: 'Authority',
    statusCode: 'Status code',
    valid: 'VAT number valid',
    qualified: 'Qualified confirmation',
    validFrom: 'Valid from',
    validTo: 'Valid to',
    taxauthId: "Authority's request id",
    consultationNumber: 'Consultation number',
    authorityTime: 'Time of request stated by the authority',
    received: 'Request received by openvat',
    answered: "Authority's answer",
    stored: 'Stored',
    keptUntil: 'Kept until',
    recordId: 'Record id',
    requestId: 'Request id',
    hash: 'Record hash (SHA-256)',
    hashCheck: 'Hash computed again',
    seq: 'Position in the chain (seq)',
    prevHash: "Previous link's hash",
    headSeq: 'Newest chain head (seq)',
    headHash: "Chain head's hash",
    signature: "Chain head's Ed25519 signature",
    signatureCheck: 'Signature checked',
    publicKey: 'Public key',
    tokenHead: 'Token over chain head (seq)',
    genTime: 'Time stated by the TSA',
    tsa: 'Time-stamping authority (TSA)',
    viesReason: 'VIES did not answer',
    registerStatus: "Register's status",
    scope: 'Registration scope',
    dataDate: 'Date of the register file',
    identifiers: "Register's identifiers",
    flags: "Register's flags",
  },
  domesticScope: 'domestic: not proof of registration for intra-EU supplies',
  grid: { field: 'Field', asked: 'Asked', code: 'Result', meaning: 'Meaning' },
  match: {
    A: 'matches',
    B: 'does not match',
    C: 'not requested',
    D: 'not provided by the member state',
  },
  yes: 'yes',
  no: 'no',
  none: '—',
  notSent: '(not sent)',
  matches: 'matches',
  doesNotMatch: 'DOES NOT MATCH',
  signatureValid: 'valid',
  signatureInvalid: 'INVALID',
  unsigned: 'not signed (no evidence key configured)',
  notChecked: 'not checked (no public key)',
  auditNotInChain:
    'Audit records are not part of the evidence chain. The hash is SHA-256 over the stored response, byte for byte.',
  noToken: 'No time-stamp token yet covers this record.',
  authorities: {
    taxauth: 'German Federal Central Tax Office (eVatR)',
    vies: 'European Commission (VIES)',
    hmrc: 'HM Revenue & Customs (United Kingdom)',
    bfs: 'Swiss Federal Statistical Office (UID register)',
    brreg: 'Brønnøysund Register Centre (Norway)',
    pl_whitelist: 'Polish Ministry of Finance (white list of VAT payers)',
    cz_adis: 'Czech Financial Administration (register of VAT payers, ADIS)',
    ro_anaf: 'Romanian ANAF (register of VAT payers)',
    fi_prh: 'Finnish Patent and Registration Office (PRH/YTJ, VAT register)',
    sk_financnasprava: 'Slovak Financial Administration (register of VAT payers)',
    si_furs: 'Slovenian Financial Administration (FURS, list of VAT payers)',
    lv_vid: 'Latvian State Revenue Service (VID, VAT register)',
  },
  page: (n, of) => `Page ${n} of ${of}`,
  generated: (at) => `Generated by openvat on ${at}`,
  steps: {
    confirmation: (id, seq, tokenHeadSeq) => [
      `GET /v1/confirmations/${id} returns the stored record: the request and the authority's answer, byte for byte.`,
      "The hash is SHA-256 over the JSON array of the record's fields (layout in docs/confirmations.md); prev_hash is the hash of the link before it.",
      `“openvat evidence verify --public-key <file> --head <exported head>${tokenHeadSeq === null ? '' : " --tsa-roots <the authority's root certificates>"}” checks every link up to the chain head, link ${seq} included, and the head's Ed25519 signature${tokenHeadSeq === null ? '' : ', and the time-stamp tokens against those roots'}.`,
      tokenHeadSeq === null
        ? 'Once a time-stamp token covers this record, a proof generated again names it.'
        : `“openvat evidence export-token --seq ${tokenHeadSeq} --tsa-roots <the authority's root certificates>” writes the chain head and its time-stamp token; “openssl ts -verify” checks it without openvat against the root the authority publishes (commands in docs/evidence.md). The token proves that every link up to seq ${tokenHeadSeq} existed at its time.`,
    ],
    validation: (id, keptUntil, shown) => [
      `GET /v1/audits/${id} returns the stored response; its SHA-256 is the hash above.`,
      ...(shown.register
        ? [
            "VIES could not answer; the answer is the member state's own national register's (meta.fallback of the stored response) and shows a domestic registration only.",
          ]
        : []),
      ...(shown.consultation
        ? [
            "The consultation number was issued by the member state's registry; tax administrations can trace the check with it.",
          ]
        : []),
      `The audit record is kept until ${keptUntil}; after that it can no longer be retrieved.`,
    ],
  },
};

export const PROOF_TEXTS: Readonly<Record<ProofLanguage, ProofTexts>> = { de: DE, en: EN };
