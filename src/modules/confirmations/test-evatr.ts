import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import {
  buildEvatrRequestBody,
  categoriseEvatrStatus,
  describeEvatrStatus,
  EVATR_STATUSES,
  type EvatrClient,
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

export function createTestModeEvatrClient(deps: { clock: Clock }): EvatrClient {
  return {
    async confirm(request: EvatrRequest): Promise<EvatrResult> {
      const now = deps.clock.now();
      const requestBody = buildEvatrRequestBody(request);
      const target = request.vat.toUpperCase();
      // A number eVatR would refuse is refused here too, before any magic-number behaviour.
      const numberStatus = evatrNumberStatus(target.replace(/\s+/g, ''));

      if (numberStatus === null && (target.endsWith('88880502') || target.endsWith('88880504'))) {
        const timeout = target.endsWith('88880504');
        return {
          kind: 'failure',
          reason: timeout ? 'timeout' : 'network',
          message: timeout
            ? 'No answer from eVatR in time (test mode)'
            : 'eVatR could not be reached (test mode)',
          raw: { url: TEST_MODE_URL, requestBody, responseBody: null, httpStatus: null, contentType: null },
        };
      }

      const magic = /9999(\d{4})$/.exec(target);
      const magicCode = magic ? `evatr-${magic[1]}` : null;
      let code = 'evatr-0000';
      const extra: Record<string, string> = {};
      const letters: Partial<Record<EvatrField, EvatrMatchCode>> = {};
      if (numberStatus !== null) {
        code = numberStatus;
      } else if (
        magicCode !== null &&
        magicCode !== 'evatr-0000' &&
        Object.hasOwn(EVATR_STATUSES, magicCode)
      ) {
        code = magicCode;
        const year = now.getUTCFullYear();
        if (code === 'evatr-2002') extra.gueltigAb = isoDay(new Date(now.getTime() + 30 * 86_400_000));
        if (code === 'evatr-2006') {
          extra.gueltigAb = `${year - 5}-01-01`;
          extra.gueltigBis = `${year - 1}-12-31`;
        }
      } else if (supplied(request.name) !== supplied(request.town)) {
        code = 'evatr-0003';
      } else if (supplied(request.name)) {
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
      }

      const id = sha256Hex(`${requestBody}|${now.toISOString()}`).slice(0, 16);
      const responseFields: Record<string, string> = {
        id,
        anfrageZeitpunkt: now.toISOString(),
        status: code,
      };
      Object.assign(responseFields, extra);
      for (const field of FIELDS) {
        const letter = letters[field];
        if (letter) responseFields[UPSTREAM_FIELD[field]] = letter;
      }
      const matches = {} as EvatrMatches;
      for (const field of FIELDS) matches[field] = supplied(request[field]) ? (letters[field] ?? 'C') : 'C';
      const suppliedFields = FIELDS.filter((f) => supplied(request[f]));
      const allSuppliedFieldsMatch =
        suppliedFields.length > 0 && suppliedFields.every((f) => matches[f] === 'A');
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
          responseBody: JSON.stringify(responseFields),
          httpStatus,
          contentType: 'application/json',
        },
      };
    },
  };
}
