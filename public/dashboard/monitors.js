// The Monitors panel: the key's monitored VAT numbers, their states and recent changes.

import { api, button, facts } from './page.js';
import { $, add, el, row, show, when } from './shared/dom.js';

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

export async function loadMonitors() {
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
