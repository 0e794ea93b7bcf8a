// The openvat dashboard: a key holder's usage, webhooks, monitors and audit records, through the public API.
// Everything shown is built with textContent, never parsed as HTML: webhook URLs and stored
// responses are other people's input.

import { loadMonitors } from './monitors.js';
import { api, button, facts, loadPanels, panel, STORAGE, session } from './page.js';
import { $, ApiError, add, el, row, show, when } from './shared/dom.js';
import { renderRegistries } from './shared/registry-status.js';
import { drawChart } from './shared/usage-chart.js';

// ---- sign-in ---------------------------------------------------------------------------------

function signedIn(on) {
  $('sign-in').hidden = on;
  $('signed-in').hidden = !on;
  $('who').hidden = !on;
  $('who-key').textContent = on ? `${session.key.slice(0, 13)}…` : '';
}

async function signIn(key) {
  session.key = key;
  try {
    await loadUsage();
  } catch (error) {
    session.key = null;
    sessionStorage.removeItem(STORAGE);
    signedIn(false);
    show(
      $('sign-in-error'),
      error.status === 401 ? 'This key is not valid or has been revoked.' : error.message,
    );
    return;
  }
  sessionStorage.setItem(STORAGE, key);
  show($('sign-in-error'), null);
  signedIn(true);
  await loadPanels();
}

$('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('key').value.trim();
  $('key').value = '';
  signIn(key);
});

$('sign-out').addEventListener('click', () => {
  session.key = null;
  sessionStorage.removeItem(STORAGE);
  signedIn(false);
});

// ---- usage -----------------------------------------------------------------------------------

async function loadUsage() {
  const { data } = await api('GET', `/v1/usage?days=${$('days').value}`);
  facts($('usage-facts'), [
    ['Plan', data.plan],
    ['Mode', data.mode],
    ['Rate limit', `${data.requests_per_minute.toLocaleString()} requests per minute`],
    ['Period', `${data.from} – ${data.to} (UTC)`],
    ['Requests', data.totals.requests.toLocaleString()],
    ['Errors', data.totals.errors.toLocaleString()],
  ]);
  drawChart($('usage-chart'), data.daily);
  // Free keys keep no audit records: say so instead of offering a look-up that can only fail.
  const noAudits = data.plan === 'free';
  show(
    $('audits-note'),
    noAudits
      ? "Audit records are kept on the Starter, Pro and Business plans; this key's plan keeps none."
      : null,
  );
  $('audit-form').hidden = noAudits;
  const body = $('usage-operations').tBodies[0];
  body.replaceChildren();
  if (data.operations.length === 0) add(body, row(['No requests in this period', '', '']));
  for (const op of data.operations) {
    const tr = add(body, row([op.operation, op.requests.toLocaleString(), op.errors.toLocaleString()]));
    tr.cells[1].className = 'num';
    tr.cells[2].className = 'num';
  }
}

$('days').addEventListener('change', () => loadUsage().catch(report($('sign-in-error'))));
$('refresh').addEventListener('click', () => {
  loadUsage().catch(report($('sign-in-error')));
  loadPanels();
});

function report(node) {
  return (error) => show(node, error.message);
}

// ---- webhooks --------------------------------------------------------------------------------

let openEndpoint = null;

async function loadWebhooks() {
  const note = $('webhooks-note');
  try {
    const { data } = await api('GET', '/v1/webhooks');
    show(note, null);
    show($('webhooks-error'), null);
    $('webhooks-body').hidden = false;
    renderEndpoints(data);
  } catch (error) {
    if (error.status === 402) {
      $('webhooks-body').hidden = true;
      show(note, error.message);
      return;
    }
    show($('webhooks-error'), error.message);
  }
}

function renderEndpoints(endpoints) {
  const body = $('webhook-list').tBodies[0];
  body.replaceChildren();
  if (endpoints.length === 0) add(body, row(['No endpoints yet', '', '', '', '']));
  for (const endpoint of endpoints) {
    const state = endpoint.disabled ? 'disabled' : endpoint.failing ? 'failing' : 'active';
    const last = endpoint.last_delivery
      ? `${endpoint.last_delivery.status} (${endpoint.last_delivery.http_status ?? 'no answer'}) ${when(endpoint.last_delivery.at)}`
      : null;
    const actions = el('span', null, 'actions');
    actions.append(
      button('Deliveries', () => loadDeliveries(endpoint)),
      // A disabled endpoint is sent nothing, test events included (the API refuses them).
      Object.assign(
        button('Send test', () => act(() => sendTest(endpoint))),
        {
          disabled: endpoint.disabled,
          title: endpoint.disabled ? 'Enable the endpoint to send it a test event' : '',
        },
      ),
      button(endpoint.disabled ? 'Enable' : 'Disable', () =>
        act(() => api('PATCH', `/v1/webhooks/${endpoint.id}`, { disabled: !endpoint.disabled })),
      ),
      button(
        'Delete',
        () => {
          if (confirm(`Delete the endpoint ${endpoint.url} and its delivery log?`)) {
            act(() => api('DELETE', `/v1/webhooks/${endpoint.id}`));
          }
        },
        'danger',
      ),
    );
    const tr = add(body, row([endpoint.url, when(endpoint.created_at), state, last, actions]));
    tr.cells[0].className = 'url';
    tr.cells[2].className = `state ${state}`;
  }
}

async function act(action) {
  show($('webhooks-error'), null);
  try {
    await action();
  } catch (error) {
    show($('webhooks-error'), error.message);
  }
  await loadWebhooks();
  if (openEndpoint) await loadDeliveries(openEndpoint);
}

async function sendTest(endpoint) {
  const result = await api('POST', `/v1/webhooks/${endpoint.id}/test`);
  show(
    $('webhook-status'),
    result.delivered
      ? `Test event delivered to ${endpoint.url}: HTTP ${result.status} in ${result.latency_ms} ms.`
      : // status 0 (or null): nothing came back; `error` says why (a timeout, a refused connection).
        `Test event not delivered to ${endpoint.url}: ${result.status ? `HTTP ${result.status}` : 'no answer'}${result.error ? ` (${result.error})` : ''}.`,
  );
}

$('webhook-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const url = $('webhook-url').value.trim();
  await act(async () => {
    const created = await api('POST', '/v1/webhooks', { url });
    $('webhook-url').value = '';
    show(
      $('webhook-secret'),
      `Registered. Its signing secret is shown only now; store it to verify signatures: ${created.secret}`,
    );
  });
});

async function loadDeliveries(endpoint) {
  openEndpoint = endpoint;
  const box = $('deliveries');
  box.hidden = false;
  $('deliveries-url').textContent = endpoint.url;
  const body = box.querySelector('tbody');
  body.replaceChildren();
  let data;
  try {
    ({ data } = await api('GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=50`));
  } catch (error) {
    if (error.status === 404) {
      openEndpoint = null;
      box.hidden = true;
      return;
    }
    show($('webhooks-error'), error.message);
    return;
  }
  if (data.length === 0) add(body, row(['No deliveries yet', '', '', '', '', '']));
  for (const delivery of data) {
    const attempts = delivery.attempts
      .map((a) => `#${a.attempt} ${a.status} ${a.http_status ?? '—'} ${a.latency_ms} ms`)
      .join('; ');
    const replay =
      delivery.status === 'failed'
        ? button('Replay', () =>
            act(() => api('POST', `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`)),
          )
        : '';
    add(
      body,
      row([
        delivery.event,
        when(delivery.created_at),
        delivery.status,
        attempts || '—',
        delivery.last_error,
        replay,
      ]),
    );
  }
}

panel('webhooks', loadWebhooks);

panel('monitors', loadMonitors);

// ---- audit look-up ---------------------------------------------------------------------------

$('audit-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const id = $('audit-id').value.trim();
  show($('audit-error'), null);
  $('audit-result').hidden = true;
  try {
    const { data } = await api('GET', `/v1/audits/${encodeURIComponent(id)}`);
    facts($('audit-facts'), [
      ['Endpoint', data.endpoint],
      ['Status', data.status_code],
      ['Valid', data.valid === null ? '—' : String(data.valid)],
      ['Created', when(data.created_at)],
      ['Kept until', when(data.expires_at)],
      ['Latency', data.latency_ms === null ? '—' : `${data.latency_ms} ms`],
    ]);
    $('audit-response').textContent = JSON.stringify(
      { request: data.request_body, response: data.response },
      null,
      2,
    );
    $('audit-result').hidden = false;
  } catch (error) {
    show($('audit-error'), error.message);
  }
});

// ---- registry status (public: GET /v1/status needs no key) -----------------------------------

async function loadRegistryStatus() {
  try {
    const res = await fetch('/v1/status', { cache: 'no-store' });
    const json = await res.json();
    if (!res.ok) throw new ApiError(res.status, json);
    renderRegistries(json.data);
    show($('registry-error'), null);
  } catch (error) {
    show($('registry-error'), `Registry status unavailable: ${error.message}`);
  }
}

loadRegistryStatus();
setInterval(() => {
  if (document.visibilityState === 'visible') loadRegistryStatus();
}, 10_000);

// ---- start -----------------------------------------------------------------------------------

if (session.key) signIn(session.key);
else signedIn(false);
