import { BULK_LIMIT } from './service.js';
import { monitorTestModeTable } from './test-answers.js';

/** The OpenAPI description of `monitorManyVatNumbers`. */
export const monitorManyVatNumbersDescription = `Creates up to ${BULK_LIMIT.toLocaleString('en')} monitors in one call (more is \`400 batch_too_large\`); \`interval\` at the top applies to rows without their own (default \`daily\`). Answered at once: each new monitor is checked soon after, paced per member state. One result per row, in input order: a malformed or unsupported number, or one over the plan's cap (\`monitor_limit_reached\`), is listed with its reason while the other rows are created. Numbers the key already monitors are returned with \`created: false\`.`;

/** The OpenAPI description of `listMonitors`. */
export const listMonitorsDescription =
  "This key's monitors in creation order, a page at a time: pass `meta.next_cursor` as `cursor` for the next page (null on the last). Filters: `status`, `stale`, and `changed_since` (monitors with a change at or after that time).";

/** The OpenAPI description of `recentChanges`. */
export const recentChangesDescription =
  "The changes found on this key's monitors, newest first, each with its monitor's number and reference: a review of what changed since a date (`since`, ISO 8601).";

/** The OpenAPI description of `changeAMonitor`. */
export const changeAMonitorDescription =
  'Changes the interval, `reference` or `metadata` (`null` clears the last two); the history stays. A new interval moves the next check to the monitor’s place in it.';

/** The OpenAPI description of `checkAMonitorNow`. */
export const checkAMonitorNowDescription =
  'Asks the registry now (counts against the key\'s rate limit) and answers with the check and any change found, which is also sent as `vat_number.changed`. A registry that does not answer gives `200` with `check.outcome: "unavailable"`: the monitor keeps its state and is retried later.';

/** The OpenAPI description of `POST /v1/monitors`, with the plans' caps. */
export function createMonitorDescription(maxPerKey: Readonly<Record<'pro' | 'business', number>>): string {
  return `Keeps a VAT number checked (Pro: up to ${maxPerKey.pro.toLocaleString('en')} numbers per key, Business: ${maxPerKey.business.toLocaleString('en')}; more is \`403 monitor_limit_reached\`). Answers \`201\` with the monitor and its first check, made at once (a fresh stored answer is used). A number this key already monitors answers \`200\` with the existing monitor and its latest check. A malformed number gets the same errors as \`GET /v1/validate\`.\n\nEach later check asks the registry; a change (\`became_invalid\`, \`became_valid\`, \`name_changed\`, \`address_changed\`) is recorded and sent as a \`vat_number.changed\` webhook event. A registry that does not answer is never a change: the monitor keeps its state, the check is retried, and after a while without a successful check the monitor is flagged \`stale\` and \`vat_number.check_failed\` is sent once. Monitors of test keys send these events too, and have magic numbers:\n\n${monitorTestModeTable()}`;
}
