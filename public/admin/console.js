// The openvat admin console: signs in with an admin key and shows one view at a time, chosen by
// the address's fragment: #/accounts, #/accounts/<id>, #/audit?actor=…&target=…, #/status.

import { loadAccounts, openAccount } from './accounts.js';
import { loadAudit } from './audit.js';
import { $, api, onSubmit, session, show } from './lib.js';
import { loadStatus } from './status.js';

const VIEWS = ['accounts-view', 'account-view', 'audit-view', 'status-view'];
const NAV = {
  'accounts-view': 'nav-accounts',
  'account-view': 'nav-accounts',
  'audit-view': 'nav-audit',
  'status-view': 'nav-status',
};

function signedIn(on) {
  $('sign-in').hidden = on;
  $('signed-in').hidden = !on;
  $('who').hidden = !on;
  for (const id of ['nav-accounts', 'nav-audit', 'nav-status']) $(id).hidden = !on;
  const me = session.me;
  $('who-key').textContent = on && me ? `${me.name} (${me.role})` : '';
  document.body.dataset.role = on && me ? me.role : '';
  $('read-note').hidden = !(on && me?.role === 'read');
}

function showView(id) {
  for (const view of VIEWS) $(view).hidden = view !== id;
  for (const [view, nav] of Object.entries(NAV)) {
    if (view === id) $(nav).setAttribute('aria-current', 'page');
    else if (NAV[id] !== nav) $(nav).removeAttribute('aria-current');
  }
}

let lastView = null;

async function route() {
  if (!session.me) return;
  const [path, search = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [view, id] = path.split('/');
  const params = Object.fromEntries(new URLSearchParams(search));
  const target =
    view === 'accounts' && id
      ? 'account-view'
      : view === 'audit'
        ? 'audit-view'
        : view === 'status'
          ? 'status-view'
          : 'accounts-view';
  showView(target);
  // The view's heading takes the focus when the view changes, so a keyboard user starts there.
  if (lastView !== null && lastView !== target) $(target).querySelector('h2')?.focus?.();
  lastView = target;
  if (target === 'account-view') await openAccount(decodeURIComponent(id));
  else if (target === 'audit-view') await loadAudit(params);
  else if (target === 'status-view') await loadStatus();
  else await loadAccounts();
}

for (const view of VIEWS) $(view).querySelector('h2')?.setAttribute('tabindex', '-1');

async function signIn(key) {
  session.key = key;
  try {
    const { data } = await api('GET', '/admin/v1/me');
    session.save(key);
    session.me = data;
  } catch (error) {
    session.clear();
    signedIn(false);
    throw new Error(error.status === 401 ? `This admin key was refused: ${error.message}` : error.message);
  }
  show($('sign-in-error'), null);
  signedIn(true);
  await route();
}

onSubmit($('sign-in-form'), $('sign-in-error'), async () => {
  const key = $('admin-key').value.trim();
  $('admin-key').value = '';
  await signIn(key);
});

$('sign-out').addEventListener('click', () => {
  session.clear();
  signedIn(false);
  lastView = null;
  $('admin-key').focus();
});

window.addEventListener('hashchange', route);

// The registry status is kept current while it is in view.
setInterval(() => {
  if (document.visibilityState === 'visible' && session.me && !$('status-view').hidden) loadStatus();
}, 10_000);

if (session.key) signIn(session.key).catch((error) => show($('sign-in-error'), error.message));
else signedIn(false);
