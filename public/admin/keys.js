// An account's keys: the list, a new key (its secret shown once, with a copy button), and the
// dialogs that edit, roll and revoke one.

import {
  $,
  add,
  api,
  button,
  el,
  keyVocabulary,
  link,
  onSubmit,
  openDialog,
  query,
  row,
  show,
  when,
} from './lib.js';

let accountId = null;
let keys = [];
let editing = null;

const label = (key) => `${key.prefix}…${key.name ? ` ${key.name}` : ''}`;

function keyState(key) {
  const cell = el('span', key.status, `state ${key.status}`);
  if (key.rolled_to && key.status === 'active') {
    const box = el('span', null, 'flags');
    box.append(cell, el('span', `rolled, works until ${when(key.expires_at)}`, 'note'));
    return box;
  }
  return cell;
}

function renderKeys() {
  const body = $('key-list').tBodies[0];
  body.replaceChildren();
  if (keys.length === 0) add(body, row(['No keys', '', '', '', '', '', '']));
  for (const key of keys) {
    const actions = el('div', null, 'actions');
    if (key.status !== 'revoked') {
      actions.append(
        button('Edit', () => edit(key), { write: true, title: `Edit ${label(key)}` }),
        button('Roll', () => roll(key), { write: true, title: `Roll ${label(key)}` }),
        button('Revoke', () => revoke(key), {
          write: true,
          className: 'danger',
          title: `Revoke ${label(key)}`,
        }),
      );
    }
    actions.append(link('History', `#/audit?target=${key.id}`));
    const quota = key.monthly_quota === null ? '' : ` / ${key.monthly_quota.toLocaleString()}`;
    const tr = add(
      body,
      row([
        label(key),
        `${key.plan} · ${key.mode}`,
        keyState(key),
        when(key.expires_at),
        `${key.usage_this_month.toLocaleString()}${quota}`,
        key.last_used_at,
        actions,
      ]),
    );
    tr.dataset.id = key.id;
    tr.cells[0].className = 'id';
    tr.cells[4].className = 'num';
  }
}

export async function loadKeys(id) {
  accountId = id;
  show($('keys-error'), null);
  try {
    await fillVocabulary();
    const page = await api(
      'GET',
      `/admin/v1/keys${query({ account_id: id, status: $('key-status').value, limit: 200 })}`,
    );
    keys = page.data;
    renderKeys();
  } catch (error) {
    show($('keys-error'), error.message);
  }
}

$('key-status').addEventListener('change', () => loadKeys(accountId));

async function fillVocabulary() {
  if ($('key-plan').options.length > 0) return;
  const { plans, modes, scopes } = await keyVocabulary();
  for (const plan of plans) $('key-plan').append(new Option(plan, plan, plan === 'pro', plan === 'pro'));
  for (const mode of modes) $('key-mode').append(new Option(mode, mode, mode === 'live', mode === 'live'));
  for (const scope of scopes) {
    const box = el('input');
    box.type = 'checkbox';
    box.value = scope;
    box.name = 'scope';
    const item = el('label', null, 'check');
    item.append(box, ` ${scope}`);
    $('edit-scopes').append(item);
  }
}

// ---- the secret of a new key: shown once --------------------------------------------------------

function showSecret(title, secret) {
  $('secret-title').textContent = title;
  $('secret-value').value = secret;
  show($('secret-copied'), null);
  $('secret').hidden = false;
  $('secret-copy').focus();
}

async function copySecret() {
  const value = $('secret-value').value;
  try {
    await navigator.clipboard.writeText(value);
    show($('secret-copied'), 'Copied to the clipboard.');
    return;
  } catch {
    // No Clipboard API (a page over plain http on another host) or no permission: select it instead.
  }
  $('secret-value').focus();
  $('secret-value').select();
  const copied = document.execCommand?.('copy') === true;
  show($('secret-copied'), copied ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (⌘C) to copy.');
}

$('secret-copy').addEventListener('click', copySecret);
$('secret-done').addEventListener('click', () => {
  $('secret-value').value = '';
  $('secret').hidden = true;
  $('key-name').focus();
});

onSubmit($('key-form'), $('key-form-error'), async () => {
  const name = $('key-name').value.trim();
  const { data } = await api('POST', '/admin/v1/keys', {
    account_id: accountId,
    plan: $('key-plan').value,
    mode: $('key-mode').value,
    ...(name ? { name } : {}),
  });
  $('key-name').value = '';
  await loadKeys(accountId);
  showSecret(`New key ${data.prefix}…`, data.key);
});

// ---- edit ------------------------------------------------------------------------------------

const pad = (n) => String(n).padStart(2, '0');

/** An ISO time as the value of a datetime-local input (the browser's time zone). */
function localInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function scopeBoxes() {
  return [...$('edit-scopes').querySelectorAll('input')];
}

function syncScopes() {
  for (const box of scopeBoxes()) box.disabled = $('edit-all-scopes').checked;
}
$('edit-all-scopes').addEventListener('change', syncScopes);

function edit(key) {
  editing = key;
  $('key-dialog-title').textContent = `Edit ${label(key)}`;
  $('edit-name').value = key.name ?? '';
  $('edit-all-scopes').checked = key.scopes === null;
  for (const box of scopeBoxes()) box.checked = key.scopes === null || key.scopes.includes(box.value);
  syncScopes();
  $('edit-expires').value = localInput(key.expires_at);
  $('edit-allowlist').value = (key.ip_allowlist ?? []).join('\n');
  $('edit-rate').value = key.rate_limit_per_minute ?? '';
  $('edit-quota').value = key.monthly_quota ?? '';
  openDialog($('key-dialog'));
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const whole = (value) => (value.trim() === '' ? null : Number(value));

/** The fields the form changes, and only those (an unchanged expiry in the past is not sent again). */
function changes(key) {
  const expires = $('edit-expires').value;
  const allowlist = $('edit-allowlist')
    .value.split(/[\s,]+/)
    .filter((entry) => entry !== '');
  const next = {
    name: $('edit-name').value.trim() || null,
    scopes: $('edit-all-scopes').checked
      ? null
      : scopeBoxes()
          .filter((box) => box.checked)
          .map((box) => box.value),
    expires_at: expires ? new Date(expires).toISOString() : null,
    ip_allowlist: allowlist.length ? allowlist : null,
    rate_limit_per_minute: whole($('edit-rate').value),
    monthly_quota: whole($('edit-quota').value),
  };
  const patch = {};
  for (const [field, value] of Object.entries(next)) {
    const before = field === 'expires_at' ? localInput(key.expires_at) : key[field];
    const after = field === 'expires_at' ? expires : value;
    if (!same(before ?? null, after === '' ? null : after)) patch[field] = value;
  }
  return patch;
}

onSubmit($('key-edit'), $('key-edit-error'), async () => {
  const patch = changes(editing);
  if (Object.keys(patch).length > 0) {
    const { data } = await api('PATCH', `/admin/v1/keys/${editing.id}`, patch);
    show($('keys-message'), `${label(data)}: saved (${Object.keys(patch).join(', ')}).`);
  }
  $('key-dialog').close();
  await loadKeys(accountId);
});

// ---- roll and revoke -------------------------------------------------------------------------

function roll(key) {
  editing = key;
  $('roll-dialog-title').textContent = `Roll ${label(key)}`;
  openDialog($('roll-dialog'));
}

onSubmit($('roll-form'), $('roll-error'), async () => {
  const overlap = Number($('roll-overlap').value);
  const { data } = await api('POST', `/admin/v1/keys/${editing.id}/roll`, { overlap_seconds: overlap });
  $('roll-dialog').close();
  await loadKeys(accountId);
  showSecret(`New key ${data.prefix}… (rolled from ${editing.prefix}…)`, data.key);
});

function revoke(key) {
  editing = key;
  $('revoke-dialog-title').textContent = `Revoke ${label(key)}`;
  $('revoke-text').textContent =
    `${label(key)} stops working at once, on every instance. This cannot be undone.`;
  openDialog($('revoke-dialog'));
}

onSubmit($('revoke-form'), $('revoke-error'), async () => {
  const { data } = await api('POST', `/admin/v1/keys/${editing.id}/revoke`);
  $('revoke-dialog').close();
  show($('keys-message'), `${label(data)}: revoked.`);
  await loadKeys(accountId);
});
