/** The OpenAPI description of `vatRatesOfOneCountry`. */
export const vatRatesOfOneCountryDescription =
  'Public: no key needed. `country` is an ISO 3166-1 alpha-2 code, case-insensitive (`XI` for Northern Ireland). With `date`, the rates in force that day.';
