/**
 * Latvian VID register of VAT payers simulator: the data.gov.lv download of the `pvn-maksataji`
 * file, `GET /resource/610910e9-e086-4c5b-a7ea-0a896a697672/download/pdb_pvnmaksataji_odata.csv`
 * under the dataset base (and, with `redirect: true`, a 302 to `/files/pdb_pvnmaksataji_odata.csv`
 * first, as the portal's downloads may redirect: public importers follow redirects for this file,
 * index id 52647573314).
 *
 * The file is the recorded one's shape (index ids 52722317638, 71153370174, 55906256709): UTF-8
 * with a byte-order mark, CRLF, comma-separated, the header `Numurs,Nosaukums,Aktivs,Registrets,
 * Buvniecibas_pazime,PVN139_2_pazime,Izslegts`, `ir`/`nav`, dates `DD.MM.YYYY`, names quoted when
 * they hold a comma or a quote (`SIA "Piemērs"`), with fictitious payers.
 *
 * The file holds the documented numbers (`LV_VID_NUMBERS`) and `rows` more (default 50) from the
 * valid legal-entity numbers from 40003000000 up, `ir` when the shared rule registers them and `nav`
 * with an exclusion date otherwise; any other number is not on the file.
 *
 * Controls (`{"lv": {...}}`): the shared ones (`serviceDown` and `down: ["LV"]` answer an HTML 503,
 * `hang`, `latencyMs`, `errorRate` with `HTTP_500` or `HTML_503`) and the file controls of
 * national-files.ts (`html`, `truncated: "bytes" | "lines"`, `cutConnection`, `redirect`,
 * `conditional`, `dataDate`, `omit`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ControlledSimulator,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  simulatedCompany,
} from './controls.js';
import { nationalControls } from './national.js';
import { applyFileControls, csvField, defaultFileControls, serveFile } from './national-files.js';

export type LvVidSimulator = ControlledSimulator;

export type LvOutcome = 'active' | 'excluded' | 'reregistered' | 'not_listed';

/** Documented VAT numbers, by the 11 digits. */
export const LV_VID_NUMBERS: Readonly<Record<string, LvOutcome>> = Object.freeze({
  '40003000002': 'active',
  '40003000017': 'excluded',
  '40003000021': 'reregistered',
  '40003000036': 'not_listed',
});

const DOWNLOAD = '/resource/610910e9-e086-4c5b-a7ea-0a896a697672/download/pdb_pvnmaksataji_odata.csv';
const REDIRECTED = '/files/pdb_pvnmaksataji_odata.csv';
export const LV_HEADER = 'Numurs,Nosaukums,Aktivs,Registrets,Buvniecibas_pazime,PVN139_2_pazime,Izslegts';

const LEGAL = [9, 1, 4, 8, 3, 10, 2, 5, 7, 6, 1];
const validLegal = (digits: string) =>
  LEGAL.reduce((sum, weight, i) => sum + weight * Number(digits[i]), 0) % 11 === 3;

/** The filler numbers: `count` valid legal-entity numbers after the documented ones. */
export function lvFillerNumbers(count: number): string[] {
  const out: string[] = [];
  for (let n = 40_003_001_000; out.length < count; n++) {
    const digits = String(n);
    if (validLegal(digits)) out.push(digits);
  }
  return out;
}

function nameOf(digits: string): string {
  const company = simulatedCompany('LV', digits);
  const word = company.name.split(' ')[0] ?? 'Piemērs';
  return company.hash % 3 === 0 ? `SIA "${word} Tirdzniecība"` : `SIA ${word}, Rīga`;
}

function row(digits: string, active: boolean, registered: string, excluded: string): string {
  return [
    `LV${digits}`,
    csvField(nameOf(digits)),
    active ? 'ir' : 'nav',
    registered,
    'nav',
    'nav',
    excluded,
  ].join(',');
}

/** The file's lines (header first) for the documented numbers and the filler, without the omitted ones. */
export function lvFileLines(rows: number, omit: readonly string[] = []): string[] {
  const skip = new Set(omit);
  const lines = [LV_HEADER];
  for (const [digits, outcome] of Object.entries(LV_VID_NUMBERS)) {
    if (skip.has(digits)) continue;
    if (outcome === 'active') lines.push(row(digits, true, '01.05.2004', ''));
    if (outcome === 'excluded') lines.push(row(digits, false, '01.05.2004', '31.12.2019'));
    if (outcome === 'reregistered') {
      lines.push(row(digits, false, '12.03.1996', '30.06.2010'));
      lines.push(row(digits, true, '01.07.2015', ''));
    }
  }
  for (const digits of lvFillerNumbers(rows)) {
    if (skip.has(digits)) continue;
    const active = simulatedCompany('LV', digits).registered;
    lines.push(row(digits, active, '01.05.2004', active ? '' : '31.12.2019'));
  }
  return lines;
}

export interface LvSimulatorOptions extends RegistrySimulatorOptions {
  /** Filler rows besides the documented numbers (default 50). */
  rows?: number;
}

export function createLvVidSimulator(options: LvSimulatorOptions = {}): LvVidSimulator {
  const { controls, now } = nationalControls(options);
  let files = defaultFileControls();

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const pathname = new URL(path, 'http://sim').pathname;
    if (req.method !== 'GET' || (pathname !== DOWNLOAD && pathname !== REDIRECTED)) {
      return send(res, 404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>');
    }
    const admission = controls.admit('LV');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') return htmlDown(res);
    if (admission.kind !== 'admitted')
      return send(res, 429, 'text/html', '<html><body>Too Many Requests</body></html>');
    try {
      await controls.delay('LV');
      if (controls.isDown('LV')) return htmlDown(res);
      const injected = controls.injectedError('LV');
      if (injected === 'HTML_503') return htmlDown(res);
      if (injected) return send(res, 500, 'text/html', '<html><body>Internal Server Error</body></html>');
      if (files.redirect && pathname === DOWNLOAD) {
        res.writeHead(302, { location: `../../..${REDIRECTED}` });
        res.end();
        return;
      }
      // The portal re-uploads the file at about 05:00 Riga time.
      const day = files.dataDate ?? now().toISOString().slice(0, 10);
      const text = `\ufeff${lvFileLines(options.rows ?? 50, files.omit).join('\r\n')}\r\n`;
      serveFile(
        req,
        res,
        { body: Buffer.from(text, 'utf8'), contentType: 'text/csv', modified: new Date(`${day}T02:01:28Z`) },
        files,
      );
    } finally {
      admission.release();
    }
  }

  function htmlDown(res: ServerResponse) {
    controls.recordError('LV', 'HTML_503');
    send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
  }

  return {
    prefix: '/lv-vid',
    handle,
    control: (command) => {
      files = applyFileControls(files, command);
      return { ...controls.apply(command), files: { ...files } };
    },
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}
