// The openvat dashboard: a key holder's usage, webhooks, monitors and audit records, through the public API.
// Everything shown is built with textContent, never parsed as HTML: webhook URLs and stored
// responses are other people's input.

import { $, add, el, row, send, show, when } from './shared/dom.js';
import { renderRegistries } from './shared/registry-status.js';
import { drawChart } from './shared/usage-chart.js';

const STORAGE = 'openvat.dashboard.key';

let apiKey = sessionStorage.getItem(STORAGE);

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? null;
  }
}

async function api(method, path, body) {
  const { ok, status, json } = await send(apiKey, method, path, body);
  if (!ok) throw new ApiError(status, json);
  return json;
}

function button(label, onClick, className) {
  const b = el('button', label, className);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

function facts(dl, pairs) {
  dl.replaceChildren();
  for (const [name, value] of pairs) dl.append(el('dt', name), el('dd', value));
}

// ---- panels ----------------------------------------------------------------------------------
// Every panel is a <section class="panel"> on the page (see index.html) with a loader registered
// here: `panel(sectionId, load)`. Loaders run after sign-in and on Refresh; a loader that throws
// shows its message at the top of its own panel and leaves the others alone.

const panels = [];

function panel(id, load) {
  panels.push({ id, load });
}

async function loadPanels() {
  await Promise.all(
    panels.map(async ({ id, load }) => {
      const section = $(id);
      let error = section.querySelector(':scope > .panel-error');
      try {
        await load(section);
        if (error) show(error, null);
      } catch (failure) {
        if (!error) {
          error = el('p', null, 'error panel-error');
          error.setAttribute('role', 'alert');
          section.querySelector('h2')?.after(error);
        }
        show(error, failure.message);
      }
    }),
  );
}

// ---- sign-in ---------------------------------------------------------------------------------

function signedIn(on) {
  $('sign-in').hidden = on;
  $('signed-in').hidden = !on;
  $('who').hidden = !on;
  $('who-key').textContent = on ? `${apiKey.slice(0, 13)}…` : '';
}

async function signIn(key) {
  apiKey = key;
  try {
    await loadUsage();
  } catch (error) {
    apiKey = null;
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
  apiKey = null;
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

// ---- monitors --------------------------------------------------------------------------------

const CHANGE_NAMES = {
  became_invalid: 'became invalid',
  became_valid: 'became valid',
  name_changed: 'name changed',
  address_changed: 'address changed',
};
const CHANGES_DAYS = 30;

let monitorsCursor = null;

function monitorsQuery(cursor) {
  const params = new URLSearchParams({ limit: '50' });
  const filter = $('monitors-status').value;
  if (filter === 'stale') params.set('stale', 'true');
  else if (filter) params.set('status', filter);
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}

async function loadMonitors() {
  let summary;
  try {
    ({ data: summary } = await api('GET', '/v1/monitors/summary'));
  } catch (error) {
    // Plans without monitoring (free, starter) are refused: say so instead of showing an error.
    if (error.status === 402 || error.status === 403) {
      $('monitors-body').hidden = true;
      show($('monitors-note'), "Monitoring is part of the Pro and Business plans; this key's plan has none.");
      return;
    }
    throw error;
  }
  show($('monitors-note'), null);
  $('monitors-body').hidden = false;
  facts($('monitors-facts'), [
    ['Monitored', `${summary.total.toLocaleString()} of ${summary.max.toLocaleString()}`],
    ['Valid', summary.valid.toLocaleString()],
    ['Invalid', summary.invalid.toLocaleString()],
    ['Unknown', summary.unknown.toLocaleString()],
    ['Stale', summary.stale.toLocaleString()],
  ]);
  const page = await api('GET', `/v1/monitors?${monitorsQuery(null)}`);
  $('monitor-list').tBodies[0].replaceChildren();
  renderMonitors(page);
  const since = new Date(Date.now() - CHANGES_DAYS * 86_400_000).toISOString();
  const recent = new URLSearchParams({ since, limit: '20' });
  const { data: changes } = await api('GET', `/v1/monitors/changes?${recent}`);
  renderChanges(changes);
}

function monitorState(monitor) {
  const state = el('span', null, 'flags');
  state.append(el('span', monitor.status, `state ${monitor.status}`));
  if (monitor.stale) state.append(el('span', 'stale', 'state stale'));
  return state;
}

function renderMonitors(page) {
  const body = $('monitor-list').tBodies[0];
  if (page.data.length === 0 && body.rows.length === 0) {
    add(
      body,
      row([$('monitors-status').value ? 'No monitors match' : 'No monitors yet', '', '', '', '', '', '']),
    );
  }
  for (const monitor of page.data) {
    const company = monitor.company
      ? [monitor.company.name, monitor.company.address].filter(Boolean).join(', ') || null
      : null;
    const checked = monitor.failing_since
      ? `${when(monitor.last_checked_at)} (failing since ${when(monitor.failing_since)})`
      : when(monitor.last_checked_at);
    const actions = el('span', null, 'actions');
    actions.append(button('Check now', (event) => checkMonitor(monitor, event.currentTarget)));
    const tr = add(
      body,
      row([
        monitor.vat_number,
        monitor.reference,
        monitorState(monitor),
        company,
        checked,
        when(monitor.next_check_at),
        actions,
      ]),
    );
    tr.cells[0].className = 'vat';
    tr.cells[1].className = 'reference';
  }
  monitorsCursor = page.meta.next_cursor;
  $('monitors-more').hidden = !monitorsCursor;
}

function renderChanges(changes) {
  const body = $('monitor-changes').tBodies[0];
  body.replaceChildren();
  if (changes.length === 0) add(body, row([`No changes in ${CHANGES_DAYS} days`, '', '', '']));
  for (const change of changes) {
    const tr = add(
      body,
      row([
        when(change.detected_at),
        change.reference ? `${change.vat_number} (${change.reference})` : change.vat_number,
        CHANGE_NAMES[change.type] ?? change.type,
        `${change.before ?? '—'} → ${change.after ?? '—'}`,
      ]),
    );
    tr.cells[2].className = `state ${change.type}`;
  }
}

async function checkMonitor(monitor, trigger) {
  show($('monitors-error'), null);
  show($('monitors-message'), null);
  trigger.disabled = true;
  try {
    const { data } = await api('POST', `/v1/monitors/${monitor.id}/check`);
    const found =
      data.check?.outcome === 'unavailable'
        ? `the registry did not answer (${data.check.error ?? 'unavailable'}); it is retried later`
        : data.changes.length > 0
          ? `${data.monitor.status}; ${data.changes.map((c) => CHANGE_NAMES[c.type] ?? c.type).join(', ')}`
          : `${data.monitor.status}, no change`;
    show($('monitors-message'), `${monitor.vat_number} checked now: ${found}.`);
  } catch (error) {
    show($('monitors-error'), error.message);
  }
  try {
    await loadMonitors();
  } catch (error) {
    show($('monitors-error'), error.message);
  }
}

$('monitors-status').addEventListener('change', () =>
  loadMonitors().catch((error) => show($('monitors-error'), error.message)),
);
$('monitors-more').addEventListener('click', async () => {
  try {
    renderMonitors(await api('GET', `/v1/monitors?${monitorsQuery(monitorsCursor)}`));
  } catch (error) {
    show($('monitors-error'), error.message);
  }
});

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

if (apiKey) signIn(apiKey);
else signedIn(false);
