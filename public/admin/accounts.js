// Accounts: the searchable list, a new account, and one account's facts and usage.

import { drawChart, lastDays, summarize } from './chart.js';
import { loadKeys } from './keys.js';
import { $, add, api, el, facts, link, onSubmit, openDialog, query, row, show, when } from './lib.js';

let nextCursor = null;
let current = null;

function state(account) {
  return el(
    'span',
    account.disabled ? 'disabled' : 'active',
    `state ${account.disabled ? 'revoked' : 'active'}`,
  );
}

function renderAccounts(accounts, append) {
  const body = $('account-list').tBodies[0];
  if (!append) body.replaceChildren();
  if (!append && accounts.length === 0) {
    add(body, row([$('account-q').value ? 'No account matches' : 'No accounts yet', '', '', '']));
  }
  for (const account of accounts) {
    const tr = add(
      body,
      row([
        link(account.name ?? account.id, `#/accounts/${account.id}`),
        account.external_id,
        state(account),
        when(account.created_at),
      ]),
    );
    tr.cells[0].className = 'id';
  }
}

export async function loadAccounts(append = false) {
  show($('accounts-error'), null);
  try {
    const page = await api(
      'GET',
      `/admin/v1/accounts${query({ q: $('account-q').value.trim(), limit: 50, cursor: append ? nextCursor : '' })}`,
    );
    nextCursor = page.meta.next_cursor;
    $('accounts-more').hidden = !nextCursor;
    renderAccounts(page.data, append);
  } catch (error) {
    show($('accounts-error'), error.message);
  }
}

onSubmit($('account-search'), $('accounts-error'), () => loadAccounts());
$('accounts-more').addEventListener('click', () => loadAccounts(true));

onSubmit($('account-form'), $('account-form-error'), async () => {
  const external = $('account-external').value.trim();
  const { data } = await api('POST', '/admin/v1/accounts', {
    name: $('account-name').value.trim(),
    ...(external ? { external_id: external } : {}),
  });
  $('account-form').reset();
  location.hash = `#/accounts/${data.id}`;
});

// ---- one account -----------------------------------------------------------------------------

function renderAccount(account) {
  current = account;
  $('account-title').textContent = account.name ?? account.id;
  facts($('account-facts'), [
    ['Id', account.id],
    ['External id', account.external_id],
    ['State', state(account)],
    ['Created', when(account.created_at)],
    ['Metadata', Object.keys(account.metadata).length ? JSON.stringify(account.metadata) : null],
  ]);
  $('account-toggle').textContent = account.disabled ? 'Enable account' : 'Disable account';
  $('account-toggle').classList.toggle('danger', !account.disabled);
  $('account-history').href = `#/audit?target=${account.id}`;
}

export async function openAccount(id) {
  show($('account-error'), null);
  show($('keys-error'), null);
  show($('keys-message'), null);
  if (current?.id !== id) {
    $('secret').hidden = true;
    $('secret-value').value = '';
    for (const part of ['account-facts', 'usage-facts', 'usage-chart']) $(part).replaceChildren();
    $('usage-operations').tBodies[0].replaceChildren();
    $('key-list').tBodies[0].replaceChildren();
    $('account-title').textContent = 'Account';
  }
  try {
    const { data } = await api('GET', `/admin/v1/accounts/${encodeURIComponent(id)}`);
    renderAccount(data);
  } catch (error) {
    show($('account-error'), error.message);
    return;
  }
  await Promise.all([loadUsage(), loadKeys(id)]);
}

$('account-toggle').addEventListener('click', async () => {
  show($('account-error'), null);
  try {
    const { data } = await api('PATCH', `/admin/v1/accounts/${current.id}`, { disabled: !current.disabled });
    renderAccount(data);
    await loadKeys(current.id);
  } catch (error) {
    show($('account-error'), error.message);
  }
});

$('account-edit').addEventListener('click', () => {
  $('edit-account-name').value = current?.name ?? '';
  $('edit-account-external').value = current?.external_id ?? '';
  openDialog($('account-dialog'));
});

onSubmit($('account-edit-form'), $('account-edit-error'), async () => {
  const external = $('edit-account-external').value.trim();
  const { data } = await api('PATCH', `/admin/v1/accounts/${current.id}`, {
    name: $('edit-account-name').value.trim(),
    external_id: external || null,
  });
  renderAccount(data);
  $('account-dialog').close();
});

// ---- usage -----------------------------------------------------------------------------------

async function loadUsage() {
  if (!current) return;
  show($('usage-error'), null);
  const dates = lastDays(Number($('usage-days').value));
  try {
    const { data } = await api(
      'GET',
      `/admin/v1/usage${query({ account_id: current.id, from: dates[0], to: dates.at(-1) })}`,
    );
    const { daily, operations } = summarize(data, dates);
    const total = daily.reduce((sum, d) => sum + d.requests, 0);
    const errors = daily.reduce((sum, d) => sum + d.errors, 0);
    facts($('usage-facts'), [
      ['Period', `${dates[0]} – ${dates.at(-1)} (UTC)`],
      ['Requests', total.toLocaleString()],
      ['Errors', errors.toLocaleString()],
    ]);
    drawChart($('usage-chart'), daily);
    const body = $('usage-operations').tBodies[0];
    body.replaceChildren();
    if (operations.length === 0) add(body, row(['No requests in this period', '', '']));
    for (const op of operations) {
      const tr = add(body, row([op.operation, op.requests.toLocaleString(), op.errors.toLocaleString()]));
      tr.cells[1].className = 'num';
      tr.cells[2].className = 'num';
    }
  } catch (error) {
    show($('usage-error'), error.message);
  }
}

$('usage-days').addEventListener('change', loadUsage);

export const currentAccount = () => current;
