/** The OpenAPI description of `retrieveAPastResponse`. */
export const pastResponseDescription =
  'Returns the stored record of a previous validate, decide, batch or confirm call made with this key. Kept 7 days (Starter), 30 (Pro) or 90 (Business); Free keys, other keys, unknown and expired ids all get the same 404.';
