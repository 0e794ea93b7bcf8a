// DOM helpers of the pages that hold a key (the dashboard and the admin console). Everything shown
// is built with textContent, never parsed as HTML.

export const $ = (id) => document.getElementById(id);

export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

export function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell ?? '—';
    tr.append(td);
  }
  return tr;
}

/** Appends a row to a table body, naming each cell after its column (narrow screens show it). */
export function add(body, tr) {
  const names = [...(body.parentElement?.tHead?.rows[0]?.cells ?? [])].map((th) => th.textContent);
  for (const [i, td] of [...tr.cells].entries()) td.dataset.label = names[i] ?? '';
  body.append(tr);
  return tr;
}

export function show(node, message) {
  node.textContent = message ?? '';
  node.hidden = !message;
}

export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A refusal of this server, with the message of its error envelope. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? null;
  }
}

/**
 * Calls this server with `key` as the bearer token: answers the parsed body, or throws `Failure`
 * (an ApiError) with the status and the body (null when there is none or it is not JSON).
 */
export async function request(key, method, path, body, Failure = ApiError) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) throw new Failure(res.status, json);
  return json;
}
