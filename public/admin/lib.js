// The console's plumbing: the admin key of this tab, calls to the admin API, and DOM helpers.
// Everything shown is built with textContent, never parsed as HTML: names, metadata and audit
// changes are other people's input.

import { $, add, el, request, row, ApiError as SharedApiError, show, when } from './shared/dom.js';

export { $, add, el, row, show, when };

const STORAGE = 'openvat.admin.key';

/** The admin key of this tab: kept in sessionStorage, sent only as the Authorization header. */
export const session = {
  key: sessionStorage.getItem(STORAGE),
  /** The signed-in admin key's `{ id, name, role }` (from GET /admin/v1/me). */
  me: null,
  save(key) {
    this.key = key;
    sessionStorage.setItem(STORAGE, key);
  },
  clear() {
    this.key = null;
    this.me = null;
    sessionStorage.removeItem(STORAGE);
  },
  get canWrite() {
    return this.me?.role === 'admin';
  },
};

export class ApiError extends SharedApiError {
  constructor(status, body) {
    super(status, body);
    // A refusal for the key's role is worded as such, whatever the view that met it.
    if (status === 403) this.message = `Not allowed: ${this.message}`;
  }
}

/** Calls the admin API with this tab's key; answers the envelope, throws ApiError with its message. */
export const api = (method, path, body) => request(session.key, method, path, body, ApiError);

/** A query string of the given values, leaving out the empty ones. */
export function query(values) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A button; `write` marks it as one a `read` key does not see. */
export function button(label, onClick, { className, write = false, title } = {}) {
  const b = el('button', label, className);
  b.type = 'button';
  if (write) b.dataset.write = '';
  if (title) b.setAttribute('aria-label', title);
  b.addEventListener('click', onClick);
  return b;
}

export function link(text, href) {
  const a = el('a', text);
  a.href = href;
  return a;
}

export function facts(dl, pairs) {
  dl.replaceChildren();
  for (const [name, value] of pairs) {
    const dd = el('dd');
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value ?? '—';
    dl.append(el('dt', name), dd);
  }
}

/** Runs a form's action on submit (Enter included), showing a failure in `error`. */
export function onSubmit(form, error, action) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const submit = form.querySelector('button[type="submit"]');
    if (submit) submit.disabled = true;
    show(error, null);
    try {
      await action();
    } catch (failure) {
      show(error, failure.message);
    } finally {
      if (submit) submit.disabled = false;
    }
  });
}

/** Opens a modal dialog (Escape closes it, as do its Cancel buttons); focus returns where it was. */
export function openDialog(dialog) {
  const opener = document.activeElement;
  for (const node of dialog.querySelectorAll('.error')) show(node, null);
  dialog.addEventListener('close', () => opener?.focus?.(), { once: true });
  dialog.showModal();
}

for (const cancel of document.querySelectorAll('dialog .cancel')) {
  cancel.addEventListener('click', () => cancel.closest('dialog').close());
}

/** The words a field of the admin API accepts, read from its OpenAPI document (`enum`, `const`, `anyOf`). */
export function words(schema) {
  if (!schema) return [];
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  // A nullable field is a list of types (`["array", "null"]`).
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('array')) return words(schema.items);
  return (schema.anyOf ?? schema.oneOf ?? []).flatMap(words);
}

let vocabulary = null;

/** Plans, modes and scopes, as the admin API's document describes `POST /admin/v1/keys`. */
export async function keyVocabulary() {
  if (vocabulary) return vocabulary;
  const res = await fetch('/admin/openapi.json', { cache: 'no-store' });
  if (!res.ok) throw new ApiError(res.status, null);
  const document = await res.json();
  const body =
    document.paths['/admin/v1/keys'].post.requestBody.content['application/json'].schema.properties;
  vocabulary = { plans: words(body.plan), modes: words(body.mode), scopes: words(body.scopes) };
  return vocabulary;
}
