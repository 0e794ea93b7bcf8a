// The audit log: every admin write, newest first, filtered by actor and target.

import { $, add, api, button, el, onSubmit, query, row, show, when } from './lib.js';

let nextCursor = null;

/** A filter button: shows the entries of that actor or target. */
function filterBy(field, id, text) {
  const b = button(
    text,
    () => {
      location.hash = `#/audit?${field}=${id}`;
    },
    { className: 'link-button', title: `Show the entries of ${field} ${id}` },
  );
  b.title = id;
  return b;
}

function describeChanges(changes) {
  const entries = Object.entries(changes ?? {});
  if (entries.length === 0) return '—';
  const text = (value) => (value === null ? 'none' : JSON.stringify(value));
  // A change is `{ from, to }`; what was set on a creation is the value itself.
  const line = ([field, value]) =>
    value !== null && typeof value === 'object' && 'from' in value && 'to' in value
      ? `${field}: ${text(value.from)} → ${text(value.to)}`
      : `${field}: ${text(value)}`;
  return el('code', entries.map(line).join('\n'));
}

function render(entries, append) {
  const body = $('audit-list').tBodies[0];
  if (!append) body.replaceChildren();
  if (!append && entries.length === 0) add(body, row(['No entries match', '', '', '', '', '']));
  for (const entry of entries) {
    const request = el('span', entry.request_id ?? '—');
    if (entry.client_address) request.append(el('br'), el('span', `from ${entry.client_address}`, 'note'));
    const tr = add(
      body,
      row([
        when(entry.created_at),
        filterBy('actor', entry.actor.id, entry.actor.name),
        entry.action,
        filterBy('target', entry.target.id, `${entry.target.type} ${entry.target.id.slice(-12)}`),
        describeChanges(entry.changes),
        request,
      ]),
    );
    tr.cells[3].className = 'id';
    tr.cells[4].className = 'changes';
    tr.cells[5].className = 'id';
  }
}

export async function loadAudit(filters = {}, append = false) {
  if (!append) {
    $('audit-actor').value = filters.actor ?? '';
    $('audit-target').value = filters.target ?? '';
  }
  show($('audit-error'), null);
  try {
    const page = await api(
      'GET',
      `/admin/v1/audit-log${query({
        actor_id: $('audit-actor').value.trim(),
        target_id: $('audit-target').value.trim(),
        limit: 50,
        cursor: append ? nextCursor : '',
      })}`,
    );
    nextCursor = page.meta.next_cursor;
    $('audit-more').hidden = !nextCursor;
    render(page.data, append);
  } catch (error) {
    show($('audit-error'), error.message);
  }
}

onSubmit($('audit-filter'), $('audit-error'), async () => {
  const params = query({ actor: $('audit-actor').value.trim(), target: $('audit-target').value.trim() });
  if (location.hash === `#/audit${params}`) await loadAudit(Object.fromEntries(new URLSearchParams(params)));
  else location.hash = `#/audit${params}`;
});
$('audit-clear').addEventListener('click', () => {
  location.hash = '#/audit';
});
$('audit-more').addEventListener('click', () => loadAudit({}, true));
