/**
 * The VIES simulator's approximate matching: the member state's verdict on each trader field sent
 * (REST `traderName`, `traderStreet`, `traderPostalCode`, `traderCity`, `traderCompanyType`; SOAP
 * `checkVatApprox`), as the real service answers it:
 *
 * - a field not sent is `NOT_PROCESSED` ("Fields you do not submit come back as NotProcessed",
 *   znojil/vies `README.md`; every recorded answer without trader fields, e.g. znojil/vies
 *   `tests/Fixtures/data/check-vat-number/valid.json`);
 * - a member state that does not disclose name and address may still compare them: Spain answers
 *   `---` for both yet matches (`traderNameMatch` 1, `traderStreetMatch` 1, `traderPostcodeMatch` 1,
 *   `traderCityMatch` 2, `traderCompanyTypeMatch` 3 in the `checkVatApprox` answer recorded in
 *   infiniteloopltd/CheckVatNumberSpain `README.md`);
 * - Germany answers `NOT_PROCESSED` for every field: it discloses nothing through VIES and gives its
 *   verdicts only through the BZSt's own qualified confirmation (eVatR). No recorded German
 *   `trader*Match` answer was found; this is the simulator's assumption, kept in one list;
 * - the company type is `NOT_PROCESSED` (the simulated register keeps no coded company type, as
 *   the Spanish answer above);
 * - a number that is not valid has nothing to compare: `NOT_PROCESSED`.
 *
 * How strictly a member state compares differs by state and is not published (an Austrian answer
 * rejecting a name typed "exactly": aimeos/aimeos-typo3#244). The simulator compares the way a
 * strict state does: equal once upper-cased, without accents and with punctuation and spaces
 * collapsed; the name may leave out its legal form (the last word of the simulated names).
 */
import { simulatedCompany } from './controls.js';

export type SimTraderField = 'name' | 'street' | 'postcode' | 'city' | 'companyType';

export const SIM_TRADER_FIELDS: readonly SimTraderField[] = [
  'name',
  'street',
  'postcode',
  'city',
  'companyType',
];

/** The fields sent; `''` is not sent. */
export type SimTrader = Record<SimTraderField, string>;

export type SimMatchCode = 'VALID' | 'INVALID' | 'NOT_PROCESSED';

export type SimTraderMatch = Record<SimTraderField, SimMatchCode>;

/** Member states that answer `NOT_PROCESSED` for every trader field. */
export const NOT_MATCHING_COUNTRIES: readonly string[] = ['DE'];

export const NO_TRADER: SimTrader = { name: '', street: '', postcode: '', city: '', companyType: '' };

const plain = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** Whether any trader field was sent. */
export function traderSent(trader: SimTrader): boolean {
  return SIM_TRADER_FIELDS.some((field) => trader[field].trim() !== '');
}

/** The member state's verdicts for a number (`valid` as answered). */
export function approximateMatch(
  country: string,
  national: string,
  valid: boolean,
  trader: SimTrader,
): SimTraderMatch {
  const company = simulatedCompany(country, national);
  const registered: Record<SimTraderField, string[]> = {
    name: [company.name, company.name.split(' ').slice(0, -1).join(' ')],
    street: [company.street],
    postcode: [company.postcode],
    city: [company.town],
    companyType: [],
  };
  const processes = valid && !NOT_MATCHING_COUNTRIES.includes(country);
  const verdict = (field: SimTraderField): SimMatchCode => {
    const sent = trader[field];
    if (sent.trim() === '' || !processes || registered[field].length === 0) return 'NOT_PROCESSED';
    const postcode = field === 'postcode' ? (text: string) => plain(text).replace(/ /g, '') : plain;
    return registered[field].some((value) => postcode(value) === postcode(sent)) ? 'VALID' : 'INVALID';
  };
  return {
    name: verdict('name'),
    street: verdict('street'),
    postcode: verdict('postcode'),
    city: verdict('city'),
    companyType: verdict('companyType'),
  };
}

/** SOAP `matchCode`: 1 VALID, 2 INVALID, 3 NOT_PROCESSED (the production WSDL). */
export const SOAP_MATCH_CODES: Readonly<Record<SimMatchCode, string>> = {
  VALID: '1',
  INVALID: '2',
  NOT_PROCESSED: '3',
};
