import { MAX_ENDPOINTS_PER_KEY } from './service.js';

/** The OpenAPI description of `registerAWebhookEndpoint`. */
export const registerAWebhookEndpointDescription = `Registers an HTTPS URL to receive the \`validation.completed\`, \`batch.completed\`, \`vat_number.changed\`, \`vat_number.check_failed\` and \`peppol.changed\` events of this key, or only the events listed in \`events\` (which may include \`rates.changed\`: the VAT rates in force for a country change, sent to every endpoint that lists it). At most ${MAX_ENDPOINTS_PER_KEY} endpoints per key (disabled ones count; the same URL twice uses two slots). The host must resolve to public addresses only. The response has no \`{data, meta}\` wrapper (it carries \`events\` when the registration named them) and is the only time the secret is shown.`;

/** The OpenAPI description of `sendATestEvent`. */
export const sendATestEventDescription =
  'Sends a signed `test` event to the endpoint now, bypassing the queue (one attempt, no retry). The response has no `{data, meta}` wrapper: `status` is the receiver\'s HTTP status, or 0 when it did not answer (`error` then says why). A disabled endpoint receives no events, so it is sent none: 400 `invalid_format` with `error.details.reason` `endpoint_disabled` (enable it with `PATCH /v1/webhooks/{id}` and `{"disabled": false}`).';

/** The OpenAPI description of `listDeliveriesAndTheirAttempts`. */
export const listDeliveriesAndTheirAttemptsDescription =
  'The most recent deliveries to this endpoint, newest first, each with its attempts (delivery id, number, status, HTTP status, latency, error) and the time of the next attempt.';
