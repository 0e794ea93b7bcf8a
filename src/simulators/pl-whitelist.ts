/**
 * Polish white list of VAT payers simulator (Ministry of Finance, API 1.6): `GET
 * /api/search/nip/{nip}?date=YYYY-MM-DD` and `GET /api/search/nips/{nip,…}?date=…` (up to 30).
 *
 * Answers are built from recorded real ones: `{result: {subject, requestId, requestDateTime}}` with
 * the subject's fields in the recorded order, `subject: null` for a NIP the list does not hold, and
 * the batch's `result.entries[{identifier, subjects[] | error}]` in an order of its own (JacekSmi/
 * PolishOpenData tests/Fixtures/bialalista/search-nip-orlen.json, search-nip-notfound.json,
 * search-nips-mixed.json); errors are `{code, message}` with HTTP 400 (404 `WL-190` for an unknown
 * path), the recorded texts for WL-103, WL-115, WL-118 and WL-190 (error-400-wl103-future-date.json,
 * error-400-wl118-old-date.json, error-404-wl190-unknown-route.json, search-nips-mixed.json) and the
 * meanings of the other codes (myslak71/vater src/vater/errors.py) in Polish; maintenance is HTTP 503
 * `{"code":"HTTP-503","message":"Usługa niedostępna"}` (the body public client code compares
 * against, index id 18969627517). `requestDateTime` is Warsaw time, `dd-MM-yyyy HH:mm:ss`.
 *
 * Rule: a NIP with a valid check digit is `Czynny` when the shared rule registers it (as VIES does);
 * otherwise `(h >>> 8) % 3` picks `Zwolniony`, `Niezarejestrowany` (removed, `removalBasis`) or not on
 * the list (`subject: null`). Documented numbers (`PL_WHITELIST_NUMBERS`) answer one case each.
 *
 * Controls (`{"pl": {...}}`): `dailyLimit` (searches a Warsaw day; one more answers WL-191, as the
 * real list does for an IP address, `null` = off), `maintenance` (the HTTP-503 body), `updating`
 * (WL-196), and the shared ones: `serviceDown` (HTML 503), `down: ["PL"]` (the HTTP-503 body),
 * `hang`, `latencyMs`, `errorRate` with a code `WL-100`, `WL-195`, `WL-196`, `HTTP-503` or `HTML_500`,
 * `rateLimit` and `concurrencyLimit` (HTTP 429 with an empty body: how the list answers bursts is
 * not recorded).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { zoneDate, zoneWallTime } from '../registries/national-common.js';
import { plNip } from '../registries/national-ids.js';
import {
  type ControlledSimulator,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  sendJson,
} from './controls.js';
import { nationalCompany, nationalControls, token, unregisteredKind } from './national.js';

export type PlWhitelistSimulator = ControlledSimulator;

export type PlOutcome =
  | 'Czynny'
  | 'Zwolniony'
  | 'Niezarejestrowany'
  | 'not_listed'
  | 'WL-191'
  | 'WL-196'
  | 'HTTP-503';

/** Documented numbers: each answers one case whatever the rule says. */
export const PL_WHITELIST_NUMBERS: Readonly<Record<string, PlOutcome>> = Object.freeze({
  '1110000007': 'Czynny',
  '1110000013': 'Zwolniony',
  '1110000036': 'Niezarejestrowany',
  '1110000042': 'not_listed',
  '1110000059': 'WL-191',
  '1110000065': 'WL-196',
  '1110000071': 'HTTP-503',
});

/** What the list answers for a NIP with a valid check digit (controls aside). */
export function plOutcome(nip: string): PlOutcome {
  const documented = PL_WHITELIST_NUMBERS[nip];
  if (documented) return documented;
  if (nationalCompany('PL', nip).registered) return 'Czynny';
  return unregisteredKind('PL', nip, ['Zwolniony', 'Niezarejestrowany', 'not_listed'] as const);
}

const MESSAGES: Readonly<Record<string, string>> = Object.freeze({
  'WL-100': 'Wystąpił nieoczekiwany błąd serwera.',
  'WL-101': 'Pole data nie może być puste.',
  'WL-102': 'Pole data ma nieprawidłowy format. Dozwolony format RRRR-MM-DD.',
  'WL-103': 'Data nie może być datą przyszłą.',
  'WL-112': 'Pole NIP nie może być puste.',
  'WL-113': 'Pole NIP ma nieprawidłową długość. Wymagane 10 znaków.',
  'WL-114': 'Pole NIP zawiera niedozwolone znaki. Wymagane tylko cyfry.',
  'WL-115': 'Nieprawidłowy NIP.',
  'WL-118': 'Data sprzed zakresu rejestru.',
  'WL-130': 'Przekroczono maksymalną liczbę argumentów.',
  'WL-190': 'Niepoprawne żądanie.',
  'WL-191': 'Wyczerpano dzienny limit zapytań dla tego adresu IP.',
  'WL-195': 'Baza danych została zaktualizowana. Wyślij zapytanie ponownie.',
  'WL-196': 'Trwa aktualizacja bazy danych. Spróbuj ponownie później.',
});

/** The first day the list answers for (the white list started on 1 September 2019). */
const REGISTRY_START = '2019-09-01';
const MAX_BATCH = 30;
const TIME_ZONE = 'Europe/Warsaw';

export function createPlWhitelistSimulator(options: RegistrySimulatorOptions = {}): PlWhitelistSimulator {
  const { controls, now } = nationalControls(options);
  let dailyLimit: number | null = null;
  let maintenance = false;
  let updating = false;
  let day = '';
  let searches = 0;
  let counter = 0;

  const error = (res: ServerResponse, code: string, status = 400) => {
    controls.recordError('PL', code);
    sendJson(res, status, { code, message: MESSAGES[code] ?? 'Niepoprawne żądanie.' });
  };

  function requestMeta(seed: string) {
    counter++;
    const wall = zoneWallTime(TIME_ZONE, now());
    const two = (n: number) => String(n).padStart(2, '0');
    return {
      requestId: `${token(seed, counter, 5)}-${token(`${seed}#`, counter, 8)}`,
      requestDateTime: `${two(wall.day)}-${two(wall.month)}-${wall.year} ${two(wall.hour)}:${two(wall.minute)}:${two(wall.second)}`,
    };
  }

  /** Counts one search against the Warsaw day's limit: `false` when the limit is already used up. */
  function countSearch(): boolean {
    const today = zoneDate(TIME_ZONE, now());
    if (today !== day) {
      day = today;
      searches = 0;
    }
    if (dailyLimit !== null && searches >= dailyLimit) return false;
    searches++;
    return true;
  }

  /** Checks the `date` parameter: the WL code it fails with, or `null`. */
  function dateProblem(date: string | null): string | null {
    if (date === null || date === '') return 'WL-101';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date))) return 'WL-102';
    if (date > zoneDate(TIME_ZONE, now())) return 'WL-103';
    if (date < REGISTRY_START) return 'WL-118';
    return null;
  }

  function nipProblem(nip: string): string | null {
    if (nip === '') return 'WL-112';
    if (!/^\d+$/.test(nip)) return 'WL-114';
    if (nip.length !== 10) return 'WL-113';
    return plNip(nip).ok ? null : 'WL-115';
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const url = new URL(path, 'http://sim');
    const match = /^\/api\/search\/(nip|nips)\/([^/]*)$/.exec(url.pathname.replace(/\/+$/, ''));
    if (req.method !== 'GET' || !match) return error(res, 'WL-190', 404);
    const admission = controls.admit('PL');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError('PL', 'HTML_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    if (admission.kind !== 'admitted') {
      controls.recordError('PL', 'HTTP_429');
      return send(res, 429, 'text/plain', '', { 'retry-after': '1' });
    }
    try {
      await controls.delay('PL');
      if (maintenance || controls.isDown('PL')) return error(res, 'HTTP-503', 503);
      if (updating) return error(res, 'WL-196');
      const injected = controls.injectedError('PL');
      if (injected === 'HTML_500') {
        controls.recordError('PL', injected);
        return send(res, 500, 'text/html', '<html><body><h1>500 Internal Server Error</h1></body></html>');
      }
      if (injected) return error(res, injected, injected === 'HTTP-503' ? 503 : 400);
      const date = url.searchParams.get('date');
      const badDate = dateProblem(date);
      if (badDate) return error(res, badDate);
      const arg = decodeURIComponent(match[2] ?? '');
      if (match[1] === 'nip') return answerOne(res, arg, date as string);
      return answerMany(res, arg, date as string);
    } finally {
      admission.release();
    }
  }

  function answerOne(res: ServerResponse, nip: string, date: string) {
    const problem = nipProblem(nip);
    if (problem) return error(res, problem);
    const outcome = plOutcome(nip);
    if (outcome === 'WL-191' || outcome === 'WL-196') return error(res, outcome);
    if (outcome === 'HTTP-503') return error(res, outcome, 503);
    if (!countSearch()) return error(res, 'WL-191');
    sendJson(res, 200, { result: { subject: subjectOf(nip, outcome, date), ...requestMeta(nip) } });
  }

  function answerMany(res: ServerResponse, list: string, date: string) {
    const nips = list.split(',').map((nip) => nip.trim());
    if (nips.length > MAX_BATCH) return error(res, 'WL-130');
    const special = nips.map((nip) => (nipProblem(nip) ? null : plOutcome(nip)));
    const failing = special.find(
      (outcome) => outcome === 'WL-191' || outcome === 'WL-196' || outcome === 'HTTP-503',
    );
    if (failing) return error(res, failing, failing === 'HTTP-503' ? 503 : 400);
    if (!countSearch()) return error(res, 'WL-191');
    const entries = nips.map((nip) => {
      const problem = nipProblem(nip);
      if (problem) return { identifier: nip, error: { code: problem, message: MESSAGES[problem] } };
      const subject = subjectOf(nip, plOutcome(nip), date);
      return { identifier: nip, subjects: subject ? [subject] : [] };
    });
    // The real list does not keep the order asked (search-nips-mixed.json).
    entries.reverse();
    const meta = requestMeta(list);
    sendJson(res, 200, {
      result: { entries, requestDateTime: meta.requestDateTime, requestId: meta.requestId },
    });
  }

  return {
    prefix: '/pl-whitelist',
    handle,
    control(command) {
      if (command.reset === true) {
        dailyLimit = null;
        maintenance = false;
        updating = false;
        searches = 0;
      }
      if (command.dailyLimit === null || typeof command.dailyLimit === 'number') {
        dailyLimit = command.dailyLimit === null ? null : Math.max(0, command.dailyLimit);
      }
      if (typeof command.maintenance === 'boolean') maintenance = command.maintenance;
      if (typeof command.updating === 'boolean') updating = command.updating;
      return { ...controls.apply(command), dailyLimit, maintenance, updating };
    },
    stats: () => ({ ...controls.stats(), searchesToday: searches }),
    controls,
  };
}

/** The list's subject for a NIP (fields in the recorded order), or `null` when it is not listed. */
function subjectOf(nip: string, outcome: PlOutcome, date: string): Record<string, unknown> | null {
  if (outcome !== 'Czynny' && outcome !== 'Zwolniony' && outcome !== 'Niezarejestrowany') return null;
  const company = nationalCompany('PL', nip);
  const postcode = `${company.postcode.slice(0, 2)}-${company.postcode.slice(2)}`;
  const removed = outcome === 'Niezarejestrowany';
  const regon = String(100_000_000 + (company.hash % 899_999_999)).slice(0, 9);
  const account = `${String(10 + (company.hash % 89))}1020${String(company.hash).padStart(10, '0')}0000${nip.slice(0, 6)}`;
  return {
    name: company.name,
    nip,
    statusVat: outcome,
    regon,
    pesel: null,
    krs: String(company.hash % 1_000_000).padStart(10, '0'),
    residenceAddress: null,
    workingAddress: `${company.street}, ${postcode} ${company.town}`,
    representatives: [],
    authorizedClerks: [],
    partners: [],
    registrationLegalDate: '2005-03-01',
    registrationDenialBasis: null,
    registrationDenialDate: null,
    restorationBasis: null,
    restorationDate: null,
    removalBasis: removed ? 'Art. 96 ust. 9 pkt 1' : null,
    removalDate: removed ? (date < '2021-06-30' ? date : '2021-06-30') : null,
    exemptionSmeDate: null,
    accountNumbers: removed ? [] : [account],
    hasVirtualAccounts: false,
  };
}
