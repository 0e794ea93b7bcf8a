// The dashboard's plumbing: the API key of this tab, calls to the public API with it, and the panels
// that load after sign-in.

import { $, el, request, show } from './shared/dom.js';

export const STORAGE = 'openvat.dashboard.key';

/** The API key of this tab: kept in sessionStorage, sent only as the Authorization header. */
export const session = { key: sessionStorage.getItem(STORAGE) };

/** Calls the public API with this tab's key; answers the envelope, throws ApiError with its message. */
export const api = (method, path, body) => request(session.key, method, path, body);

export function button(label, onClick, className) {
  const b = el('button', label, className);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

export function facts(dl, pairs) {
  dl.replaceChildren();
  for (const [name, value] of pairs) dl.append(el('dt', name), el('dd', value));
}

// ---- panels ----------------------------------------------------------------------------------
// Every panel is a <section class="panel"> on the page (see index.html) with a loader registered
// here: `panel(sectionId, load)`. Loaders run after sign-in and on Refresh; a loader that throws
// shows its message at the top of its own panel and leaves the others alone.

const panels = [];

export function panel(id, load) {
  panels.push({ id, load });
}

export async function loadPanels() {
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
