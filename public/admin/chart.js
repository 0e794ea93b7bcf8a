// The usage chart (shared with the dashboard) and the sums of the admin API's usage rows it draws.

export { drawChart } from './shared/usage-chart.js';

/** The UTC days from `days - 1` days ago to today, as `YYYY-MM-DD`. */
export function lastDays(days) {
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) =>
    new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

/** Usage rows of the admin API summed per day (every day of `dates`, empty ones too) and per operation. */
export function summarize(rows, dates) {
  const perDay = new Map(dates.map((date) => [date, { date, requests: 0, errors: 0 }]));
  const perOperation = new Map();
  for (const r of rows) {
    const day = perDay.get(r.day);
    if (day) {
      day.requests += r.requests;
      day.errors += r.errors;
    }
    const op = perOperation.get(r.operation) ?? { operation: r.operation, requests: 0, errors: 0 };
    op.requests += r.requests;
    op.errors += r.errors;
    perOperation.set(r.operation, op);
  }
  return {
    daily: [...perDay.values()],
    operations: [...perOperation.values()].sort((a, b) => b.requests - a.requests),
  };
}
