/**
 * Slovak Financial Administration open data simulator (information lists API): `GET
 * /api/data/{slug}/search?column=ic_dph&search=SK…&page=1` with the header `key`, and `GET
 * /api/lists`.
 *
 * Answers are built from the recorded `ds_dphs` answer in MarcelGeo/openapi-financna-sprava
 * README.md (`{page, pages, itemsCount, itemsPerPage: 1000, data: [{ic_dph, ico, nazov_ds, obec, psc,
 * ulica_cislo, stat, druh_reg_dph: "§4", datum_reg: "11.10.2000", datum_zmeny_druhu_reg: null}]}`),
 * the paths, the `key` header and the 400/404 cases of its generator/swagger-iz.yaml ("Minimum search
 * len is 5", "Column is not searchable", "List not found"), and the search miss public client code
 * compares against verbatim: HTTP 404 `{"status":"error","code":"404","message":"Page doesn't
 * exists"}` (index id 66106846814). The `ds_dphz` and `ds_dphv` rows carry the columns of the
 * Administration's XML exports in lower case (index id 68326505257: `ic_dph, ico, nazov, obec, psc,
 * adresa, rok_porusenia, dat_zverejnenia`, and `dat_vymazu` for `ds_dphv`). A missing or refused key
 * is HTTP 401 (index ids 29206028240, 30145780736); its body is not recorded, so it, the 400s and the
 * 429 carry the miss's envelope with their own code and words.
 *
 * Rule: an IČ DPH is on `ds_dphs` when the shared rule registers its 10 digits (as VIES does);
 * otherwise `(h >>> 8) % 2` puts it on `ds_dphv` (deregistered) or on no list. Documented numbers
 * (`SK_FINANCNASPRAVA_NUMBERS`, the 10 digits) answer one case each.
 *
 * Controls (`{"sk": {...}}`): the shared ones (`serviceDown` and `down: ["SK"]` answer an HTML 503,
 * `hang`, `latencyMs`, `errorRate` with `HTTP_500` or `HTML_503`, `rateLimit` and
 * `concurrencyLimit` answer 429), and `keyRejected: true` (every key answers 401, as an expired key
 * does); the option `apiKey` accepts only that key (default: any non-empty one).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ControlledSimulator,
  fnv1a32,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  sendJson,
} from './controls.js';
import { nationalCompany, nationalControls, unregisteredKind } from './national.js';

export type SkFinancnaSpravaSimulator = ControlledSimulator;

export type SkOutcome =
  | 'registered'
  | 'registered_with_grounds'
  | 'deregistered'
  | 'not_found'
  | 'server_error';

/** Documented numbers, by the IČ DPH's 10 digits. */
export const SK_FINANCNASPRAVA_NUMBERS: Readonly<Record<string, SkOutcome>> = Object.freeze({
  '2120000003': 'registered',
  '2120000014': 'registered_with_grounds',
  '2120000025': 'deregistered',
  '2120000036': 'not_found',
  '2120000047': 'server_error',
});

/** What the lists hold for an IČ DPH's 10 digits (controls aside). */
export function skOutcome(digits: string): SkOutcome {
  const documented = SK_FINANCNASPRAVA_NUMBERS[digits];
  if (documented) return documented;
  if (nationalCompany('SK', digits).registered) return 'registered';
  return unregisteredKind('SK', digits, ['deregistered', 'not_found'] as const);
}

const LISTS: Record<string, { name: string; searchable: string[] }> = {
  ds_dphs: { name: 'Zoznam subjektov registrovaných k DPH', searchable: ['ic_dph'] },
  ds_dphz: {
    name: 'Zoznam platiteľov dane z pridanej hodnoty, u ktorých nastali dôvody na zrušenie registrácie pre DPH',
    searchable: ['ic_dph'],
  },
  ds_dphv: { name: 'Zoznam vymazaných platiteľov DPH', searchable: ['ic_dph'] },
};

const envelope = (code: number, message: string) => ({ status: 'error', code: String(code), message });

export interface SkSimulatorOptions extends RegistrySimulatorOptions {
  /** The one key accepted; default any non-empty key. */
  apiKey?: string;
}

export function createSkFinancnaSpravaSimulator(options: SkSimulatorOptions = {}): SkFinancnaSpravaSimulator {
  const { controls, now } = nationalControls(options);
  let keyRejected = false;

  const error = (res: ServerResponse, status: number, message: string) => {
    controls.recordError('SK', `HTTP_${status}`);
    sendJson(res, status, envelope(status, message));
  };

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const url = new URL(path, 'http://sim');
    const route = url.pathname.replace(/\/+$/, '');
    if (req.method !== 'GET' || !route.startsWith('/api/')) {
      return send(res, 404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>');
    }
    const admission = controls.admit('SK');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') return htmlDown(res);
    if (admission.kind !== 'admitted') return error(res, 429, 'Too Many Requests');
    try {
      await controls.delay('SK');
      if (controls.isDown('SK')) return htmlDown(res);
      const injected = controls.injectedError('SK');
      if (injected === 'HTML_503') return htmlDown(res);
      if (injected) return error(res, 500, 'Internal Server Error');
      const key = req.headers.key;
      const given = typeof key === 'string' ? key.trim() : '';
      if (keyRejected || given === '' || (options.apiKey !== undefined && given !== options.apiKey)) {
        return error(res, 401, 'Unauthorized');
      }
      answer(res, route, url.searchParams);
    } finally {
      admission.release();
    }
  }

  function htmlDown(res: ServerResponse) {
    controls.recordError('SK', 'HTML_503');
    send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
  }

  function answer(res: ServerResponse, route: string, query: URLSearchParams) {
    if (route === '/api/lists') {
      return sendJson(res, 200, Object.fromEntries(Object.keys(LISTS).map((slug) => [slug, listOf(slug)])));
    }
    const listMatch = /^\/api\/lists\/([a-z_]+)$/.exec(route);
    if (listMatch) {
      const slug = listMatch[1] ?? '';
      return LISTS[slug] ? sendJson(res, 200, listOf(slug)) : error(res, 404, 'List not found');
    }
    const searchMatch = /^\/api\/data\/([a-z_]+)\/search$/.exec(route);
    if (!searchMatch) return error(res, 404, 'Page not found');
    const slug = searchMatch[1] ?? '';
    const list = LISTS[slug];
    if (!list) return error(res, 404, 'List not found');
    const page = Number(query.get('page'));
    if (!Number.isInteger(page) || page < 1) return error(res, 400, 'Invalid query page');
    const column = query.get('column') ?? '';
    if (!list.searchable.includes(column)) return error(res, 400, 'Column is not searchable');
    const search = (query.get('search') ?? '').trim().toUpperCase();
    if (search.length < 5) return error(res, 400, 'Minimum search len is 5');
    const match = /^SK(\d{10})$/.exec(search);
    const rows = match ? rowsOf(slug, match[1] ?? '') : [];
    if (rows === 'server_error') return error(res, 500, 'Internal Server Error');
    // A search without results (or a page past the last) answers the recorded miss.
    if (rows.length === 0 || page > 1) {
      controls.recordError('SK', 'HTTP_404');
      return sendJson(res, 404, envelope(404, "Page doesn't exists"));
    }
    sendJson(res, 200, { page: 1, pages: 1, itemsCount: rows.length, itemsPerPage: 1000, data: rows });
  }

  function listOf(slug: string) {
    const list = LISTS[slug];
    const day = now().toISOString().slice(0, 10);
    return {
      name: list?.name,
      slug,
      url: `https://report.financnasprava.sk/${slug}.zip`,
      update_date: `${day} 05:00:02`,
      searchable: list?.searchable ?? [],
    };
  }

  return {
    prefix: '/sk-financnasprava',
    handle,
    control: (command) => {
      if (command.reset === true) keyRejected = false;
      if (typeof command.keyRejected === 'boolean') keyRejected = command.keyRejected;
      return { ...controls.apply(command), keyRejected };
    },
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}

/** The rows a list holds for an IČ DPH's digits, or `server_error`. */
function rowsOf(slug: string, digits: string): Record<string, unknown>[] | 'server_error' {
  const outcome = skOutcome(digits);
  if (outcome === 'server_error') return 'server_error';
  const company = nationalCompany('SK', digits);
  const ico = String(30_000_000 + (fnv1a32(`SK-ICO:${digits}`) % 9_999_999));
  const registered = outcome === 'registered' || outcome === 'registered_with_grounds';
  if (slug === 'ds_dphs' && registered) {
    return [
      {
        ic_dph: `SK${digits}`,
        ico,
        nazov_ds: company.name,
        obec: company.town,
        psc: company.postcode,
        ulica_cislo: company.street,
        stat: 'Slovensko',
        druh_reg_dph: '§4',
        datum_reg: '01.05.2004',
        datum_zmeny_druhu_reg: null,
      },
    ];
  }
  const listed = {
    ic_dph: `SK${digits}`,
    ico,
    nazov: company.name,
    obec: company.town,
    psc: company.postcode,
  };
  if (slug === 'ds_dphz' && outcome === 'registered_with_grounds') {
    return [{ ...listed, adresa: company.street, rok_porusenia: '2025', dat_zverejnenia: '15.03.2026' }];
  }
  if (slug === 'ds_dphv' && outcome === 'deregistered') {
    return [
      {
        ...listed,
        adresa: company.street,
        rok_porusenia: '2023',
        dat_zverejnenia: '01.02.2024',
        dat_vymazu: '30.06.2024',
      },
    ];
  }
  return [];
}
