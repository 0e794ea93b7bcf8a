import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import {
  buildEvatrRequestBody,
  categoriseEvatrStatus,
  describeEvatrStatus,
  EVATR_STATUSES,
  type EvatrAnswer,
  type EvatrClient,
  type EvatrFailure,
  type EvatrField,
  type EvatrMatchCode,
  type EvatrMatches,
  type EvatrRequest,
  type EvatrResult,
  evatrNumberStatus,
} from '../../registries/evatr.js';

/**
 * The eVatR port for test keys: answers from the magic-number table below and never touches the
 * network. It builds the same `EvatrResult` values the real client does (with a synthetic raw
 * exchange), so everything after the port runs unchanged. Numbers are matched on the end of the
 * national part, whatever the country prefix (examples use Austria):
 *
 * | Target number ends in | Outcome |
 * |---|---|
 * | `…88881111` (e.g. `ATU88881111`) | valid, not qualified: name and town `A`, street and postcode `B` |
 * | `…88882222` (e.g. `ATU88882222`) | valid, not qualified: name and town `A`, street and postcode `D` (not provided by the registry) |
 * | `…88880502` (e.g. `ATU88880502`) | the authority cannot be reached (network failure) |
 * | `…88880504` (e.g. `ATU88880504`) | the authority does not answer in time |
 * | `…9999NNNN` where `evatr-NNNN` is a listed status | that status, e.g. `ATU99992001` invalid, `ATU99992002` not yet valid, `ATU99992006` expired, `ATU99990004` requester refused, `ATU99990008` session limit, `ATU99990011` unavailable |
 * | anything else | valid; every supplied field `A` (qualified when name and town are given) |
 *
 * As upstream, a request with a name but no town is only a simple check (`evatr-0003`).
 */
export const TEST_MODE_URL = 'test-mode:evatr/v1/abfrage';

const FIELDS: readonly EvatrField[] = ['name', 'street', 'postcode', 'town'];
const UPSTREAM_FIELD: Record<EvatrField, string> = {
  name: 'ergFirmenname',
  street: 'ergStrasse',
  postcode: 'ergPlz',
  town: 'ergOrt',
};

function supplied(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}

function isoDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** What the magic-number table answers: the status, its `gueltig*` fields and the `erg*` letters. */
interface TableAnswer {
  code: string;
  extra: Record<string, string>;
  letters: Partial<Record<EvatrField, EvatrMatchCode>>;
}

export function createTestModeEvatrClient(deps: { clock: Clock }): EvatrClient {
  async function confirm(request: EvatrRequest): Promise<EvatrResult> {
    const now = deps.clock.now();
    const requestBody = buildEvatrRequestBody(request);
    const target = request.vat.toUpperCase();
    // A number eVatR would refuse is refused here too, before any magic-number behaviour.
    const numberStatus = evatrNumberStatus(target.replace(/\s+/g, ''));
    if (numberStatus === null && (target.endsWith('88880502') || target.endsWith('88880504'))) {
      return unreachable(target, requestBody);
    }
    const table: TableAnswer =
      numberStatus !== null
        ? { code: numberStatus, extra: {}, letters: {} }
        : tableAnswer(request, target, now);
    return answerOf(request, table, requestBody, now);
  }

  return { confirm };
}

/** `…88880502`: the authority cannot be reached; `…88880504`: it does not answer in time. */
function unreachable(target: string, requestBody: string): EvatrFailure {
  const timeout = target.endsWith('88880504');
  return {
    kind: 'failure',
    reason: timeout ? 'timeout' : 'network',
    message: timeout ? 'No answer from eVatR in time (test mode)' : 'eVatR could not be reached (test mode)',
    raw: { url: TEST_MODE_URL, requestBody, responseBody: null, httpStatus: null, contentType: null },
  };
}

/** The table's answer for a well-formed number: a listed `…9999NNNN` status, a simple check, or valid. */
function tableAnswer(request: EvatrRequest, target: string, now: Date): TableAnswer {
  const magic = /9999(\d{4})$/.exec(target);
  const magicCode = magic ? `evatr-${magic[1]}` : null;
  if (magicCode !== null && magicCode !== 'evatr-0000' && Object.hasOwn(EVATR_STATUSES, magicCode)) {
    return { code: magicCode, extra: validityDates(magicCode, now), letters: {} };
  }
  if (supplied(request.name) !== supplied(request.town))
    return { code: 'evatr-0003', extra: {}, letters: {} };
  return {
    code: 'evatr-0000',
    extra: {},
    letters: supplied(request.name) ? matchLetters(request, target) : {},
  };
}

/** `gueltigAb`/`gueltigBis` of a number not yet valid (`evatr-2002`) or no longer valid (`evatr-2006`). */
function validityDates(code: string, now: Date): Record<string, string> {
  const extra: Record<string, string> = {};
  const year = now.getUTCFullYear();
  if (code === 'evatr-2002') extra.gueltigAb = isoDay(new Date(now.getTime() + 30 * 86_400_000));
  if (code === 'evatr-2006') {
    extra.gueltigAb = `${year - 5}-01-01`;
    extra.gueltigBis = `${year - 1}-12-31`;
  }
  return extra;
}

/** The letter of each supplied field: `A`, but street and postcode `B` for `…88881111` and `D` for `…88882222`. */
function matchLetters(request: EvatrRequest, target: string): Partial<Record<EvatrField, EvatrMatchCode>> {
  const letters: Partial<Record<EvatrField, EvatrMatchCode>> = {};
  for (const field of FIELDS) {
    if (!supplied(request[field])) continue;
    const addressField = field === 'street' || field === 'postcode';
    letters[field] =
      addressField && target.endsWith('88881111')
        ? 'B'
        : addressField && target.endsWith('88882222')
          ? 'D'
          : 'A';
  }
  return letters;
}

/** The answer the real client would read from the table's answer, with a synthetic raw exchange. */
function answerOf(request: EvatrRequest, table: TableAnswer, requestBody: string, now: Date): EvatrAnswer {
  const { code, extra, letters } = table;
  const id = sha256Hex(`${requestBody}|${now.toISOString()}`).slice(0, 16);
  const matches = {} as EvatrMatches;
  for (const field of FIELDS) matches[field] = supplied(request[field]) ? (letters[field] ?? 'C') : 'C';
  const suppliedFields = FIELDS.filter((f) => supplied(request[f]));
  const allSuppliedFieldsMatch = suppliedFields.length > 0 && suppliedFields.every((f) => matches[f] === 'A');
  const httpStatus = EVATR_STATUSES[code]?.httpStatus ?? 400;
  return {
    kind: 'answer',
    status: code,
    category: categoriseEvatrStatus(code, { allSuppliedFieldsMatch }),
    known: true,
    description: describeEvatrStatus(code),
    httpStatus,
    id,
    matches,
    upstreamMatches: {
      name: letters.name ?? null,
      street: letters.street ?? null,
      postcode: letters.postcode ?? null,
      town: letters.town ?? null,
    },
    validFrom: extra.gueltigAb ?? null,
    validTo: extra.gueltigBis ?? null,
    answeredAt: now.toISOString(),
    upstreamTimestamp: now.toISOString(),
    company: { name: null, street: null, postcode: null, town: null },
    raw: {
      url: TEST_MODE_URL,
      requestBody,
      responseBody: responseBodyOf(id, table, now),
      httpStatus,
      contentType: 'application/json',
    },
  };
}

/** The JSON the authority would have sent: id, time and status, then the `gueltig*` fields and the letters. */
function responseBodyOf(id: string, table: TableAnswer, now: Date): string {
  const responseFields: Record<string, string> = {
    id,
    anfrageZeitpunkt: now.toISOString(),
    status: table.code,
  };
  Object.assign(responseFields, table.extra);
  for (const field of FIELDS) {
    const letter = table.letters[field];
    if (letter) responseFields[UPSTREAM_FIELD[field]] = letter;
  }
  return JSON.stringify(responseFields);
}
