/**
 * The identifiers the national registers are asked by, derived from the VAT number's national part
 * (already normalised by the vat-numbers module; separators and a repeated prefix are tolerated
 * here as well). Each answers the identifier or why the number cannot be looked up: a number the
 * register cannot be asked about is not sent, and the answer is unavailability, never "not valid".
 *
 * - PL: NIP, the 10 digits (weights 6 5 7 2 3 4 5 6 7, check = sum mod 11, 10 never issued).
 * - CZ: DIČ digits, 8 (legal persons: the IČO, weights 8..2, check (11 − sum mod 11) with 10→0
 *   and 11→1) or 9–10 (individuals and special entities; checked offline by the vat-numbers module).
 * - RO: CUI, 2 to 10 digits without a leading zero (check digit (10 × Σ wᵢdᵢ) mod 11 mod 10, weights
 *   7 5 3 2 1 7 5 3 2 right-aligned); the register takes it as a JSON number.
 * - FI: Y-tunnus `NNNNNNN-N`, the VAT number's 8 digits with a hyphen before the check digit
 *   (weights 7 9 10 5 8 4 2, check 11 − sum mod 11, 0 when the remainder is 0, none when it is 1).
 * - SK: IČ DPH `SK` + 10 digits, the first not 0, as the Financial Administration's lists search it
 *   (`column=ic_dph`); the divisibility and birth-number rules are the vat-numbers module's.
 * - SI: davčna številka, 8 digits, the first not 0 (weights 8..2, check 11 − sum mod 11 with 10
 *   written 0 and 11 never issued): the key of FURS's files.
 * - LV: `LV` + 11 digits, as the `Numurs` column of VID's file holds it (the legal-entity and
 *   personal-code checks are the vat-numbers module's).
 *
 * Sources: the European Commission's VIES check-digit specification; python-stdnum `pl/nip.py`,
 * `cz/dic.py`, `ro/cui.py`, `fi/ytunnus.py`, `sk/dph.py`, `si/ddv.py`, `lv/pvn.py`.
 */

export type NationalId<T> = { ok: true; id: T } | { ok: false; message: string };

function digitsOf(national: string, prefix: string): string {
  const compact = national.replace(/[\s.\-/]/g, '').toUpperCase();
  return compact.startsWith(prefix) ? compact.slice(prefix.length) : compact;
}

function weighted(digits: string, weights: readonly number[], offset = 0): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += Number(digits[offset + i]) * (weights[i] ?? 0);
  return sum;
}

const NIP_WEIGHTS = [6, 5, 7, 2, 3, 4, 5, 6, 7] as const;

/** PL: the NIP the white list is asked by. */
export function plNip(national: string): NationalId<string> {
  const nip = digitsOf(national, 'PL');
  if (!/^\d{10}$/.test(nip)) return { ok: false, message: 'a Polish NIP has 10 digits' };
  const check = weighted(nip, NIP_WEIGHTS) % 11;
  if (check === 10 || check !== Number(nip[9])) {
    return { ok: false, message: `${nip} is not a valid NIP (check digit)` };
  }
  return { ok: true, id: nip };
}

const ICO_WEIGHTS = [8, 7, 6, 5, 4, 3, 2] as const;

/** CZ: the DIČ digits the register of VAT payers is asked by. */
export function czDic(national: string): NationalId<string> {
  const dic = digitsOf(national, 'CZ');
  if (!/^\d{8,10}$/.test(dic)) return { ok: false, message: 'a Czech DIČ has 8, 9 or 10 digits' };
  if (dic.length === 8) {
    const remainder = weighted(dic, ICO_WEIGHTS) % 11;
    const expected = remainder === 0 ? 1 : remainder === 1 ? 0 : 11 - remainder;
    if (Number(dic[7]) !== expected) {
      return { ok: false, message: `${dic} is not a valid IČO (check digit)` };
    }
  }
  return { ok: true, id: dic };
}

const CUI_WEIGHTS = [7, 5, 3, 2, 1, 7, 5, 3, 2] as const;

/** RO: the CUI ANAF is asked by, as the number it is sent as. */
export function roCui(national: string): NationalId<number> {
  const cui = digitsOf(national, 'RO');
  if (/^\d{13}$/.test(cui)) {
    return { ok: false, message: 'ANAF is asked by CUI; a 13-digit personal numeric code is not looked up' };
  }
  if (!/^[1-9]\d{1,9}$/.test(cui)) {
    return { ok: false, message: 'a Romanian CUI has 2 to 10 digits and no leading zero' };
  }
  const body = cui.slice(0, -1);
  const sum = weighted(body, CUI_WEIGHTS.slice(CUI_WEIGHTS.length - body.length));
  if (((sum * 10) % 11) % 10 !== Number(cui[cui.length - 1])) {
    return { ok: false, message: `${cui} is not a valid CUI (check digit)` };
  }
  return { ok: true, id: Number(cui) };
}

const YTUNNUS_WEIGHTS = [7, 9, 10, 5, 8, 4, 2] as const;

/** FI: the Y-tunnus (business ID) PRH is asked by, `NNNNNNN-N`. */
export function fiBusinessId(national: string): NationalId<string> {
  const digits = digitsOf(national, 'FI');
  if (!/^\d{8}$/.test(digits)) return { ok: false, message: 'a Finnish VAT number has 8 digits' };
  const remainder = weighted(digits, YTUNNUS_WEIGHTS) % 11;
  if (remainder === 1 || (remainder === 0 ? 0 : 11 - remainder) !== Number(digits[7])) {
    return { ok: false, message: `${digits} is not a valid Y-tunnus (check digit)` };
  }
  return { ok: true, id: `${digits.slice(0, 7)}-${digits[7]}` };
}

/** SK: the IČ DPH the Financial Administration's lists are searched by, `SK` + 10 digits. */
export function skIcDph(national: string): NationalId<string> {
  const digits = digitsOf(national, 'SK');
  if (!/^[1-9]\d{9}$/.test(digits)) {
    return { ok: false, message: 'a Slovak IČ DPH has 10 digits and does not start with 0' };
  }
  return { ok: true, id: `SK${digits}` };
}

/** SI: the tax number (davčna številka) FURS's files are keyed by, 8 digits. */
export function siTaxNumber(national: string): NationalId<string> {
  const digits = digitsOf(national, 'SI');
  if (!/^[1-9]\d{7}$/.test(digits)) {
    return { ok: false, message: 'a Slovenian tax number has 8 digits and does not start with 0' };
  }
  let sum = 0;
  for (let i = 0; i < 7; i++) sum += (8 - i) * Number(digits[i]);
  const check = 11 - (sum % 11);
  if (check === 11 || check % 10 !== Number(digits[7])) {
    return { ok: false, message: `${digits} is not a valid Slovenian tax number (check digit)` };
  }
  return { ok: true, id: digits };
}

/** LV: the PVN number as VID's file writes it in `Numurs`, `LV` + 11 digits. */
export function lvVatNumber(national: string): NationalId<string> {
  const digits = digitsOf(national, 'LV');
  if (!/^\d{11}$/.test(digits)) return { ok: false, message: 'a Latvian VAT number has 11 digits' };
  return { ok: true, id: `LV${digits}` };
}
