/**
 * The eVatR status list: every `evatr-XXXX` code the BZSt service answers, with its official text and
 * the category our service gives it (DESIGN, "Qualified confirmation"), and the statuses eVatR
 * answers for a requested number it cannot take, whatever the register says.
 */

/** How our service treats an upstream status (DESIGN, "Qualified confirmation"). */
export type EvatrCategory =
  | 'qualified'
  | 'valid_not_qualified'
  | 'invalid'
  | 'caller_error'
  | 'requester_refused'
  | 'session_limit'
  | 'unavailable';

/**
 * The category of a status code on its own. `valid` (only `evatr-0000`) becomes `qualified` or
 * `valid_not_qualified` once the match codes are known.
 */
export type EvatrStatusCategory = 'valid' | Exclude<EvatrCategory, 'qualified'>;

export interface EvatrStatusInfo {
  code: string;
  /** Upstream `kategorie`. */
  kind: 'Ergebnis' | 'Hinweis' | 'Fehler';
  /** `httpcode` of the official status list; `null` where the list gives none (`evatr-0001`). */
  httpStatus: number | null;
  /** Upstream `feld`: the request field the status refers to. */
  field: string | null;
  /** Official German text (`meldung`). */
  german: string;
  /** English description (unofficial translation), for error messages. */
  english: string;
  category: EvatrStatusCategory;
}

const TRY_LATER_DE =
  'Eine Bearbeitung Ihrer Anfrage ist zurzeit nicht möglich. Bitte versuchen Sie es später noch einmal.';
const TRY_LATER_EN = 'The authority cannot process the request at the moment; try again later.';

function status(
  code: string,
  kind: EvatrStatusInfo['kind'],
  httpStatus: number | null,
  field: string | null,
  category: EvatrStatusCategory,
  german: string,
  english: string,
): EvatrStatusInfo {
  return { code, kind, httpStatus, field, german, english, category };
}

/**
 * The complete official status list (`GET /v1/info/statusmeldungen`), with our category for each code.
 * `evatr-0001` belongs to the authority's web form and is not in the mapping table, so it is treated
 * like an unknown code: unavailable.
 */
export const EVATR_STATUSES: Readonly<Record<string, EvatrStatusInfo>> = Object.freeze(
  Object.fromEntries(
    [
      status(
        'evatr-0000',
        'Ergebnis',
        200,
        null,
        'valid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig.',
        'The requested VAT number is valid at the time of the request.',
      ),
      status(
        'evatr-0001',
        'Hinweis',
        null,
        'datenschutz',
        'unavailable',
        'Bitte bestätigen Sie den Datenschutzhinweis.',
        'Please confirm the privacy notice.',
      ),
      status(
        'evatr-0002',
        'Hinweis',
        400,
        'angefragteUstid',
        'caller_error',
        'Mindestens eins der Pflichtfelder ist nicht besetzt.',
        'At least one mandatory field is missing.',
      ),
      status(
        'evatr-0003',
        'Hinweis',
        400,
        'firmenname,ort',
        'valid_not_qualified',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig. Mindestens eines der Pflichtfelder für eine qualifizierte Bestätigungsanfrage ist nicht besetzt.',
        'The requested VAT number is valid, but a mandatory field for a qualified confirmation (company name or town) is missing, so only a simple check was made.',
      ),
      status(
        'evatr-0004',
        'Fehler',
        400,
        'anfragendeUstid',
        'requester_refused',
        'Die anfragende DE USt-IdNr. ist syntaktisch falsch. Sie passt nicht in das deutsche Erzeugungsschema.',
        'The requesting German VAT number is syntactically wrong (it does not fit the German scheme, check digit included).',
      ),
      status(
        'evatr-0005',
        'Fehler',
        400,
        'angefragteUstid',
        'caller_error',
        'Die angegebene angefragte USt-IdNr. ist syntaktisch falsch.',
        'The requested VAT number is syntactically wrong.',
      ),
      status(
        'evatr-0006',
        'Hinweis',
        403,
        'anfragendeUstid',
        'requester_refused',
        'Die anfragende DE USt-IdNr. ist nicht berechtigt eine DE USt-IdNr. anzufragen.',
        'The requesting German VAT number may not query a German VAT number.',
      ),
      status('evatr-0007', 'Hinweis', 403, null, 'caller_error', 'Fehlerhafter Aufruf.', 'Faulty call.'),
      status(
        'evatr-0008',
        'Hinweis',
        403,
        null,
        'session_limit',
        'Die maximale Anzahl von qualifizierten Bestätigungsabfragen für diese Session wurde erreicht. Bitte starten Sie erneut mit einer einfachen Bestätigungsabfrage.',
        'The maximum number of qualified confirmation requests for this session has been reached; start again with a simple request.',
      ),
      status('evatr-0011', 'Fehler', 503, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status(
        'evatr-0012',
        'Fehler',
        400,
        'angefragteUstid',
        'caller_error',
        'Die angefragte USt-IdNr. ist syntaktisch falsch. Sie passt nicht in das Erzeugungsschema.',
        "The requested VAT number does not fit its country's number scheme.",
      ),
      status('evatr-0013', 'Fehler', 503, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1001', 'Fehler', 503, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1002', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1003', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1004', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status(
        'evatr-2001',
        'Hinweis',
        404,
        'angefragteUstid',
        'invalid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt nicht vergeben.',
        'The requested VAT number is not assigned at the time of the request.',
      ),
      status(
        'evatr-2002',
        'Hinweis',
        200,
        'angefragteUstid',
        'invalid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt nicht gültig. Sie ist erst gültig ab dem Datum im Feld gueltigAb.',
        'The requested VAT number is not yet valid; it is valid from the date in gueltigAb.',
      ),
      status(
        'evatr-2003',
        'Fehler',
        400,
        'angefragteUstid',
        'caller_error',
        'Das angegebene Länderkennzeichen der angefragten USt-IdNr. ist nicht gültig.',
        'The country prefix of the requested VAT number is not valid.',
      ),
      status('evatr-2004', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status(
        'evatr-2005',
        'Fehler',
        404,
        'anfragendeUstid',
        'requester_refused',
        'Die angegebene eigene DE USt-IdNr. ist zum Anfragezeitpunkt nicht gültig.',
        "The requester's own German VAT number is not valid at the time of the request.",
      ),
      status(
        'evatr-2006',
        'Hinweis',
        200,
        'angefragteUstid',
        'invalid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt nicht gültig. Sie war gültig im Zeitraum, der durch die Werte in den Feldern gueltigAb und gueltigBis beschrieben ist.',
        'The requested VAT number is no longer valid; it was valid from gueltigAb to gueltigBis.',
      ),
      status(
        'evatr-2007',
        'Fehler',
        500,
        null,
        'unavailable',
        'Bei der Verarbeitung der Daten aus dem angefragten EU-Mitgliedstaat ist ein Fehler aufgetreten. Ihre Anfrage kann deshalb nicht bearbeitet werden.',
        "An error occurred while processing the member state's data; the request cannot be processed.",
      ),
      status(
        'evatr-2008',
        'Hinweis',
        200,
        null,
        'valid_not_qualified',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig. Für die qualifizierte Bestätigungsanfrage liegt einer Besonderheit vor. Für Rückfragen wenden Sie sich an das BZSt.',
        'The requested VAT number is valid, but the qualified confirmation has a special case; contact the BZSt.',
      ),
      status('evatr-2011', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-3011', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
    ].map((s) => [s.code, Object.freeze(s)]),
  ),
);

/** Every code of the official list, in list order. */
export const EVATR_STATUS_CODES: readonly string[] = Object.freeze(Object.keys(EVATR_STATUSES));

/** Status code → category (the DESIGN mapping table). Codes not listed are `unavailable`. */
export const EVATR_STATUS_CATEGORIES: Readonly<Record<string, EvatrStatusCategory>> = Object.freeze(
  Object.fromEntries(Object.values(EVATR_STATUSES).map((s) => [s.code, s.category])),
);

/**
 * Categorises an upstream status. `evatr-0000` is `qualified` only when `allSuppliedFieldsMatch` is
 * true (at least one field was supplied and every supplied field came back `A`), otherwise
 * `valid_not_qualified`. Unknown codes are `unavailable`.
 */
export function categoriseEvatrStatus(
  code: string,
  options: { allSuppliedFieldsMatch?: boolean } = {},
): EvatrCategory {
  const category = Object.hasOwn(EVATR_STATUS_CATEGORIES, code) ? EVATR_STATUS_CATEGORIES[code] : undefined;
  if (category === undefined) return 'unavailable';
  if (category === 'valid')
    return options.allSuppliedFieldsMatch === true ? 'qualified' : 'valid_not_qualified';
  return category;
}

/** English description of a status code, for error messages; unknown codes get a generic text. */
export function describeEvatrStatus(code: string): string {
  const info = Object.hasOwn(EVATR_STATUSES, code) ? EVATR_STATUSES[code] : undefined;
  return info?.english ?? `Unknown status ${code} from the authority; treated as unavailable.`;
}

/** The number scheme of each prefix eVatR confirms (EU member states as VIES writes them, and XI). */
const EVATR_NUMBER_SCHEMES: Readonly<Record<string, RegExp>> = {
  AT: /^U\d{8}$/,
  BE: /^[01]\d{9}$/,
  BG: /^\d{9,10}$/,
  CY: /^\d{8}[A-Z]$/,
  CZ: /^\d{8,10}$/,
  DK: /^\d{8}$/,
  EE: /^\d{9}$/,
  EL: /^\d{9}$/,
  ES: /^[A-Z0-9]\d{7}[A-Z0-9]$/,
  FI: /^\d{8}$/,
  FR: /^[A-HJ-NP-Z0-9]{2}\d{9}$/,
  HR: /^\d{11}$/,
  HU: /^\d{8}$/,
  IE: /^(\d{7}[A-W][A-I]?|\d[A-Z+*]\d{5}[A-W])$/,
  IT: /^\d{11}$/,
  LT: /^(\d{9}|\d{12})$/,
  LU: /^\d{8}$/,
  LV: /^\d{11}$/,
  MT: /^\d{8}$/,
  NL: /^\d{9}B\d{2}$/,
  PL: /^\d{10}$/,
  PT: /^\d{9}$/,
  RO: /^[1-9]\d{1,9}$/,
  SE: /^\d{10}01$/,
  SI: /^\d{8}$/,
  SK: /^\d{10}$/,
  XI: /^(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
};

/**
 * The status eVatR answers, without looking anything up, for a requested number (compact and
 * upper-case) it cannot take: `evatr-0005` when it is not two letters and 2–12 characters with a
 * digit, `evatr-2003` when the prefix is not a member state's, `evatr-0012` when the national part
 * does not fit the country's scheme; `null` when the number is well formed. Test mode applies the
 * same rules, so a test key is refused exactly where a live key is.
 */
export function evatrNumberStatus(target: string): 'evatr-0005' | 'evatr-2003' | 'evatr-0012' | null {
  if (!/^[A-Z]{2}[A-Z0-9+*]{2,12}$/.test(target) || !/\d/.test(target)) return 'evatr-0005';
  const scheme = EVATR_NUMBER_SCHEMES[target.slice(0, 2)];
  if (!scheme) return 'evatr-2003';
  if (!scheme.test(target.slice(2))) return 'evatr-0012';
  return null;
}
