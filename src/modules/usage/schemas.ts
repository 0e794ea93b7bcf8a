/** The OpenAPI description of `thisKeySRequestsPerDayAndOperation`. */
export const usageReportDescription =
  "Requests made with this key over the last `days` UTC days (default 30, at most 366), per day and per operation, with the key's plan and rate limit. Requests refused for a missing or unknown key are not counted; every other answer is, errors included. Counts from other instances can take a few seconds to appear.";
