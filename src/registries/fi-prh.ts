/**
 * Finnish Business Information System (PRH/YTJ) open data, API v3:
 * `GET {base}/opendata-ytj-api/v3/companies?businessId=NNNNNNN-N` (base `https://avoindata.prh.fi`),
 * no key, licence CC BY 4.0. One business ID per request.
 *
 * The answer `{totalResults, companies: [{businessId{value}, names[{name, type, endDate}],
 * registeredEntries[{type, descriptions[], registrationDate, endDate, register, authority}],
 * addresses[{type, street, buildingNumber, entrance, apartmentNumber, postCode, postOffices[{city,
 * languageCode}], postOfficeBox, country}], status, …}]}`. Register `6` is the VAT register
 * (arvonlisäverovelvollisten rekisteri, kept by the Tax Administration, authority `1`); its entries'
 * types say what the company is VAT-liable for (`80` business activity, `82` the transfer of rights
 * to use immovable property, `83` agriculture and forestry), from `registrationDate` to `endDate` (the
 * last day). A company is registered when a register-6 entry runs on the date asked. An unknown
 * business ID is not an error: PRH answers `{totalResults: 0, companies: []}`, which is `valid:
 * false`, as is a company without a running register-6 entry. Errors are `{timestamp, message,
 * errorcode}` bodies (400 for a bad parameter).
 *
 * Sources: the recorded answers in stella/stella packages/business-registries/src/prh/__fixtures__/
 * (lookup-nokia.json, lookup-not-found.json) and its client.ts (no 404 for a missing ID; the error
 * body); the same Nokia answer captured on 2026-10-05 (index id 71201165206); register 6 and the entry
 * types as StephenAbbott/opencheck backend/opencheck/sources/prh.py and index id 52200297848 read them.
 */
import {
  cleanText,
  excerpt,
  type FetchFn,
  type HttpResponse,
  isRecord,
  joinUrl,
  parseJson,
  transportFor,
} from './http.js';
import {
  isoDay,
  nationalAddress,
  nationalAnswer,
  nationalTransportFailure,
  unexpectedStatus,
  zoneDate,
} from './national-common.js';
import { fiBusinessId } from './national-ids.js';
import {
  type NationalAddress,
  type NationalLimits,
  type NationalLookup,
  type NationalRegistration,
  type NationalRegistryClient,
  type NationalResult,
  nationalUnavailable,
} from './national-port.js';

export interface FiPrhClientOptions {
  /** API host as documented, e.g. `https://avoindata.prh.fi`; the client adds `/opendata-ytj-api/v3/companies`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

const SOURCE = 'fi_prh';
const LABEL = 'PRH/YTJ';
export const FI_PRH_PATH = '/opendata-ytj-api/v3/companies';
export const FI_TIME_ZONE = 'Europe/Helsinki';
/** The VAT register in `registeredEntries[].register`. */
export const FI_VAT_REGISTER = '6';

/** PRH publishes no request limit for the open data API (300 a minute is a third-party claim). */
export const FI_PRH_LIMITS: NationalLimits = Object.freeze({
  concurrency: null,
  rates: [],
  daily: null,
  numbersPerRequest: 1,
  maintenance: null,
  published: false,
  source: 'none published by PRH; one business ID per request',
});

/** PRH's language codes: 1 Finnish, 2 Swedish, 3 English. */
const FINNISH = '1';
const ENGLISH = '3';

export function createFiPrhClient(options: FiPrhClientOptions): NationalRegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  async function lookup(request: NationalLookup): Promise<NationalResult> {
    const businessId = fiBusinessId(request.vat.national);
    if (!businessId.ok) return nationalUnavailable(SOURCE, 'rejected', businessId.message);
    const outcome = await send({
      url: `${joinUrl(options.baseUrl, FI_PRH_PATH)}?businessId=${encodeURIComponent(businessId.id)}`,
      method: 'GET',
      headers: { accept: 'application/json' },
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) return nationalTransportFailure(SOURCE, LABEL, outcome);
    const received = now();
    return interpretFiCompanies(
      outcome,
      businessId.id,
      request.date ?? zoneDate(FI_TIME_ZONE, received),
      received,
    );
  }

  return { source: SOURCE, country: 'FI', limits: FI_PRH_LIMITS, lookup };
}

/** The answer about `businessId` on `date` (pure: the HTTP answer and when it arrived). */
export function interpretFiCompanies(
  outcome: HttpResponse,
  businessId: string,
  date: string,
  received: Date,
): NationalResult {
  const json = parseJson(outcome.body);
  const national = businessId.replace('-', '');
  if (outcome.status === 400 && isRecord(json) && typeof json.message === 'string') {
    return nationalUnavailable(
      SOURCE,
      'rejected',
      `${LABEL} refused the request: ${excerpt(json.message, 160)}`,
      {
        ...(json.errorcode !== undefined ? { upstreamCode: String(json.errorcode) } : {}),
      },
    );
  }
  const companies = isRecord(json) && Array.isArray(json.companies) ? json.companies : null;
  if (outcome.status !== 200 || !isRecord(json) || typeof json.totalResults !== 'number' || !companies) {
    return unexpectedStatus(SOURCE, LABEL, outcome, received);
  }
  const identifiers = { businessId };
  if (companies.length === 0) {
    if (json.totalResults !== 0) {
      return nationalUnavailable(
        SOURCE,
        'bad_response',
        `${LABEL} answered totalResults ${json.totalResults} without companies`,
      );
    }
    return nationalAnswer({
      source: SOURCE,
      country: 'FI',
      national,
      valid: false,
      identifiers,
      checkedAt: received,
    });
  }
  const company = companies.find(
    (candidate) =>
      isRecord(candidate) && isRecord(candidate.businessId) && candidate.businessId.value === businessId,
  );
  if (!isRecord(company)) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered other companies than ${businessId}`,
    );
  }
  const entries = Array.isArray(company.registeredEntries)
    ? company.registeredEntries.filter(isRecord)
    : null;
  if (!entries) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered ${businessId} without registeredEntries`,
    );
  }
  const vatEntries = entries.filter((entry) => String(entry.register) === FI_VAT_REGISTER);
  const running = vatEntries.filter((entry) => runsOn(entry, date));
  return nationalAnswer({
    source: SOURCE,
    country: 'FI',
    national,
    valid: running.length > 0,
    registerStatus: running.length > 0 ? running.map((entry) => String(entry.type)).join(',') : null,
    name: currentName(company.names),
    address: fiAddress(company.addresses),
    identifiers,
    registrations: vatEntries.map(registration),
    checkedAt: received,
  });
}

/** Whether an entry runs on `date`: begun by then, and not ended before it (`endDate` is its last day). */
function runsOn(entry: Record<string, unknown>, date: string): boolean {
  const from = isoDay(entry.registrationDate);
  const to = isoDay(entry.endDate);
  return from !== null && from <= date && (to === null || to >= date);
}

function registration(entry: Record<string, unknown>): NationalRegistration {
  const type = entry.type === undefined || entry.type === null ? null : String(entry.type);
  const words = description(entry.descriptions, ENGLISH) ?? description(entry.descriptions, FINNISH);
  return {
    from: isoDay(entry.registrationDate),
    to: isoDay(entry.endDate),
    kind: [type, words].filter(Boolean).join(' ') || null,
  };
}

function description(value: unknown, language: string): string | null {
  if (!Array.isArray(value)) return null;
  const hit = value.find((item) => isRecord(item) && item.languageCode === language);
  return isRecord(hit) ? cleanText(hit.description) : null;
}

/** The current main name: `type` 1 without `endDate`. */
function currentName(value: unknown): string | null {
  if (!Array.isArray(value)) return null;
  const names = value.filter(isRecord);
  const main = names.find((name) => String(name.type) === '1' && !isoDay(name.endDate));
  return cleanText(main?.name);
}

/** The current street address (`type` 1), else the postal address (`type` 2). */
export function fiAddress(value: unknown): NationalAddress | null {
  if (!Array.isArray(value)) return null;
  const current = value.filter((address) => isRecord(address) && !isoDay(address.endDate)) as Record<
    string,
    unknown
  >[];
  const chosen =
    current.find((address) => address.type === 1) ?? current.find((address) => address.type === 2);
  if (!chosen) return null;
  const house = [chosen.buildingNumber, chosen.entrance, chosen.apartmentNumber]
    .map((part) => cleanText(part))
    .filter(Boolean)
    .join(' ');
  const streetName = cleanText(chosen.street);
  const box = cleanText(chosen.postOfficeBox);
  const street =
    streetName && house ? `${streetName} ${house}` : streetName || house || (box ? `PL ${box}` : null);
  const offices = Array.isArray(chosen.postOffices) ? chosen.postOffices.filter(isRecord) : [];
  const office = offices.find((item) => item.languageCode === FINNISH) ?? offices[0];
  const co = cleanText(chosen.co);
  return nationalAddress({
    street: street ?? cleanText(chosen.freeAddressLine),
    postcode: cleanText(chosen.postCode),
    city: cleanText(office?.city),
    country: cleanText(chosen.country),
    lines: [
      co ? `c/o ${co}` : null,
      street ?? cleanText(chosen.freeAddressLine),
      [cleanText(chosen.postCode), cleanText(office?.city)].filter(Boolean).join(' ') || null,
    ],
  });
}
