// The openvat dashboard: a key holder's usage, webhooks and audit records, through the public API.
// Everything shown is built with textContent, never parsed as HTML: webhook URLs and stored
// responses are other people's input.

const STORAGE = 'openvat.dashboard.key';
const $ = (id) => document.getElementById(id);

let apiKey = sessionStorage.getItem(STORAGE);

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? null;
  }
}

async function api(method, path, body) {
  const headers = { authorization: `Bearer ${apiKey}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function button(label, onClick, className) {
  const b = el('button', label, className);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell ?? '—';
    tr.append(td);
  }
  return tr;
}

function show(node, message) {
  node.textContent = message ?? '';
  node.hidden = !message;
}

function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

function facts(dl, pairs) {
  dl.replaceChildren();
  for (const [name, value] of pairs) dl.append(el('dt', name), el('dd', value));
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
  await loadWebhooks();
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
  const chart = $('usage-chart');
  chart.replaceChildren();
  const peak = Math.max(1, ...data.daily.map((d) => d.requests));
  for (const day of data.daily) {
    const bar = el('div', null, 'bar');
    bar.title = `${day.date}: ${day.requests} requests, ${day.errors} errors`;
    const ok = el('div', null, 'ok');
    ok.style.height = `${((day.requests - day.errors) / peak) * 100}%`;
    const failed = el('div', null, 'failed');
    failed.style.height = `${(day.errors / peak) * 100}%`;
    bar.append(failed, ok);
    chart.append(bar);
  }
  const body = $('usage-operations').tBodies[0];
  body.replaceChildren();
  if (data.operations.length === 0) body.append(row(['No requests in this period', '', '']));
  for (const op of data.operations) {
    const tr = row([op.operation, op.requests.toLocaleString(), op.errors.toLocaleString()]);
    tr.cells[1].className = 'num';
    tr.cells[2].className = 'num';
    body.append(tr);
  }
}

$('days').addEventListener('change', () => loadUsage().catch(report($('sign-in-error'))));
$('refresh').addEventListener('click', () => {
  loadUsage().catch(report($('sign-in-error')));
  loadWebhooks();
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
  if (endpoints.length === 0) body.append(row(['No endpoints yet', '', '', '', '']));
  for (const endpoint of endpoints) {
    const state = endpoint.disabled ? 'disabled' : endpoint.failing ? 'failing' : 'active';
    const last = endpoint.last_delivery
      ? `${endpoint.last_delivery.status} (${endpoint.last_delivery.http_status ?? 'no answer'}) ${when(endpoint.last_delivery.at)}`
      : null;
    const actions = el('span', null, 'actions');
    actions.append(
      button('Deliveries', () => loadDeliveries(endpoint)),
      button('Send test', () => act(() => sendTest(endpoint))),
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
    const tr = row([endpoint.url, when(endpoint.created_at), state, last, actions]);
    tr.cells[2].className = `state ${state}`;
    body.append(tr);
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
      : `Test event not delivered to ${endpoint.url}: ${result.status === null ? 'no answer' : `HTTP ${result.status}`}.`,
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
  if (data.length === 0) body.append(row(['No deliveries yet', '', '', '', '', '']));
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
    body.append(
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

const REGISTRY_NAMES = { vies: 'VIES', hmrc: 'HMRC', bfs: 'Swiss UID', brreg: 'Brønnøysund', evatr: 'eVatR' };

async function loadRegistryStatus() {
  try {
    const res = await fetch('/v1/status', { cache: 'no-store' });
    const json = await res.json();
    if (!res.ok) throw new ApiError(res.status, json);
    const { shared, instances, registries } = json.data;
    const count = instances === null ? 'unknown' : String(instances);
    $('registry-summary').textContent =
      `${shared ? 'Limits shared through Redis' : 'Limits per instance'} · instances: ${count}` +
      (registries.length === 0 ? ' · no registry called since start' : '');
    const body = $('registry-table').tBodies[0];
    body.replaceChildren();
    for (const r of registries) {
      const tr = row([
        REGISTRY_NAMES[r.registry] ?? r.registry,
        r.country ?? '—',
        r.breaker.replace('_', '-'),
        String(r.in_flight),
        String(r.queued),
        when(r.last_success_at),
        when(r.last_failure_at),
        r.retry_after_seconds === null ? '—' : `${r.retry_after_seconds} s`,
      ]);
      tr.className = `breaker-${r.breaker}`;
      for (const i of [3, 4, 7]) tr.cells[i].className = 'num';
      body.append(tr);
    }
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
