/**
 * Slovenian FURS lists simulator: `GET /DURS_zavezanci_PO.zip`, `/DURS_zavezanci_FO.zip` and
 * `/DURS_zavezanci_DEJ.zip`, each a ZIP archive of one UTF-8 fixed-width text file with CRLF line
 * ends, written at the file's date.
 *
 * The layouts are the recorded ones (the columns as src/registries/si-furs.ts reads them): PO lines
 * of 259 characters (268 for a VAT group's member) as the recorded row `  * 10000658 6311881000
 * 23.04.2013 68.310 RONI NEPREMIČNINE, … HACQUETOVA ULICA 9, 1000 LJUBLJANA … 08`, FO lines of 197 as
 * `P 10015337 GREGA BAŠIN … PRESERJE 42 B, 1352 PRESERJE … 13.03.2013 08`, DEJ lines of 424 as the
 * October 2026 files (index ids 42726773496, 71019120621, 71504244415), with fictitious names.
 *
 * The files hold the documented numbers (`SI_FURS_NUMBERS`, one case each) and `rows` more PO lines
 * (default 50) from tax numbers with valid check digits from 20000000 up, identified for VAT (`*`)
 * when the shared rule registers them; any other number is on none of the files.
 *
 * Controls (`{"si": {...}}`): the shared ones (`serviceDown` and `down: ["SI"]` answer an HTML 503,
 * `hang`, `latencyMs`, `errorRate` with `HTTP_500` or `HTML_503`) and the file controls of
 * national-files.ts (`html`, `truncated: "bytes"`, `cutConnection`, `zipBomb`, `conditional`,
 * `dataDate`, `omit`).
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
import {
  applyFileControls,
  defaultFileControls,
  fixedWidth,
  lyingZipBomb,
  serveFile,
  zipArchive,
} from './national-files.js';

export type SiFursSimulator = ControlledSimulator;

export type SiOutcome =
  | 'po_vat'
  | 'po_vat_limited'
  | 'po_vat_group'
  | 'po_no_vat'
  | 'fo_vat'
  | 'dej_only'
  | 'dej_and_fo'
  | 'not_listed';

/** Documented tax numbers. */
export const SI_FURS_NUMBERS: Readonly<Record<string, SiOutcome>> = Object.freeze({
  '11100001': 'po_vat',
  '11100010': 'po_vat_limited',
  '11100028': 'po_vat_group',
  '11100036': 'po_no_vat',
  '11100044': 'fo_vat',
  '11100052': 'dej_only',
  '11100079': 'dej_and_fo',
  '11100087': 'not_listed',
});

const FILLER_START = 20_000_000;

function validTaxNumber(n: number): boolean {
  const digits = String(n);
  let sum = 0;
  for (let i = 0; i < 7; i++) sum += (8 - i) * Number(digits[i]);
  const check = 11 - (sum % 11);
  return check !== 11 && check % 10 === Number(digits[7]);
}

/** The filler tax numbers of the PO file: `count` valid numbers from 20000000 up. */
export function siFillerNumbers(count: number): string[] {
  const out: string[] = [];
  for (let n = FILLER_START; out.length < count; n++) if (validTaxNumber(n)) out.push(String(n));
  return out;
}

const person = (digits: string) => {
  const company = simulatedCompany('SI', digits);
  const given = ['ŠPELA', 'MATEJ', 'NUŠA', 'ŽIGA', 'KLEMEN', 'TJAŠA'][company.hash % 6];
  const family = ['KOŽELJ', 'HROVAT', 'ČERNE', 'ZUPANČIČ', 'KRAJNC', 'POTOČNIK'][(company.hash >>> 5) % 6];
  return { ...company, person: `${given} ${family}` };
};

/** A PO line (259 characters, 268 with a group number). */
export function siPoLine(digits: string, vat: boolean, scope = '', group: string | null = null): string {
  const c = simulatedCompany('SI', digits);
  const name = c.name.replace(/ LTD$/, ' D.O.O.');
  return fixedWidth(group ? 268 : 259, [
    [0, 1, scope],
    [2, 3, vat ? '*' : ' '],
    [4, 12, digits],
    [13, 23, String(5_000_000_000 + (c.hash % 999_999_999)).padStart(10, '0')],
    [24, 34, '23.04.2013'],
    [35, 41, '62.010'],
    [42, 142, name],
    [143, 257, `${c.street}, ${c.postcode} ${c.town}`],
    [257, 259, '08'],
    ...(group ? ([[260, 268, group]] as [number, number, string][]) : []),
  ]);
}

/** An FO line (197 characters). */
export function siFoLine(digits: string): string {
  const p = person(digits);
  return fixedWidth(197, [
    [0, 1, 'P'],
    [2, 10, digits],
    [11, 72, p.person],
    [72, 184, `${p.street}, ${p.postcode} ${p.town}`],
    [184, 194, '13.03.2013'],
    [195, 197, '13'],
  ]);
}

/** A DEJ line (424 characters). */
export function siDejLine(digits: string): string {
  const p = person(digits);
  return fixedWidth(424, [
    [0, 8, digits],
    [9, 19, String(8_000_000_000 + (p.hash % 999_999_999)).padStart(10, '0')],
    [20, 26, '85.510'],
    [27, 264, `IZOBRAŽEVANJE IN SVETOVANJE, ${p.person} S.P.`],
    [308, 422, `${p.street} , ${p.postcode} ${p.town}`],
    [422, 424, '13'],
  ]);
}

/** The lines of one file for the documented numbers and the filler (without the omitted ones). */
export function siFileLines(part: 'PO' | 'FO' | 'DEJ', rows: number, omit: readonly string[] = []): string[] {
  const lines: string[] = [];
  const skip = new Set(omit);
  for (const [digits, outcome] of Object.entries(SI_FURS_NUMBERS)) {
    if (skip.has(digits)) continue;
    if (part === 'PO' && outcome === 'po_vat') lines.push(siPoLine(digits, true));
    if (part === 'PO' && outcome === 'po_vat_limited') lines.push(siPoLine(digits, true, 'O'));
    if (part === 'PO' && outcome === 'po_vat_group') lines.push(siPoLine(digits, true, 'Č', '11100095'));
    if (part === 'PO' && outcome === 'po_no_vat') lines.push(siPoLine(digits, false));
    if (part === 'FO' && (outcome === 'fo_vat' || outcome === 'dej_and_fo')) lines.push(siFoLine(digits));
    if (part === 'DEJ' && (outcome === 'dej_only' || outcome === 'dej_and_fo')) lines.push(siDejLine(digits));
  }
  if (part === 'PO') {
    for (const digits of siFillerNumbers(rows)) {
      if (!skip.has(digits)) lines.push(siPoLine(digits, simulatedCompany('SI', digits).registered));
    }
  }
  return lines;
}

export interface SiSimulatorOptions extends RegistrySimulatorOptions {
  /** Filler PO lines besides the documented numbers (default 50). */
  rows?: number;
}

const FILE = /^\/DURS_zavezanci_(PO|FO|DEJ)\.zip$/;

export function createSiFursSimulator(options: SiSimulatorOptions = {}): SiFursSimulator {
  const { controls, now } = nationalControls(options);
  let files = defaultFileControls();
  const cache = new Map<string, Buffer>();

  function archive(part: 'PO' | 'FO' | 'DEJ', written: Date): Buffer {
    const name = `DURS_zavezanci_${part}.txt`;
    if (files.zipBomb === 'lying') return lyingZipBomb(name, written);
    const key = JSON.stringify([part, written.toISOString(), files.omit, files.zipBomb]);
    let body = cache.get(key);
    if (!body) {
      const text = `${siFileLines(part, options.rows ?? 50, files.omit).join('\r\n')}\r\n`;
      const declared = files.zipBomb === 'declared' ? 0xfffffffe : undefined;
      body = zipArchive(name, Buffer.from(text, 'utf8'), written, declared ? { declaredSize: declared } : {});
      cache.clear();
      cache.set(key, body);
    }
    return body;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const match = FILE.exec(new URL(path, 'http://sim').pathname);
    if (req.method !== 'GET' || !match) {
      return send(res, 404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>');
    }
    const admission = controls.admit('SI');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') return htmlDown(res);
    if (admission.kind !== 'admitted')
      return send(res, 429, 'text/html', '<html><body>Too Many Requests</body></html>');
    try {
      await controls.delay('SI');
      if (controls.isDown('SI')) return htmlDown(res);
      const injected = controls.injectedError('SI');
      if (injected === 'HTML_503') return htmlDown(res);
      if (injected) return send(res, 500, 'text/html', '<html><body>Internal Server Error</body></html>');
      // FURS writes the files between 7 and 8 in the morning, Ljubljana time.
      const day = files.dataDate ?? now().toISOString().slice(0, 10);
      const written = new Date(`${day}T07:12:00Z`);
      const part = (match[1] ?? 'PO') as 'PO' | 'FO' | 'DEJ';
      serveFile(
        req,
        res,
        {
          body: archive(part, written),
          contentType: 'application/zip',
          modified: new Date(`${day}T05:12:00Z`),
        },
        files,
      );
    } finally {
      admission.release();
    }
  }

  function htmlDown(res: ServerResponse) {
    controls.recordError('SI', 'HTML_503');
    send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
  }

  return {
    prefix: '/si-furs',
    handle,
    control: (command) => {
      files = applyFileControls(files, command);
      return { ...controls.apply(command), files: { ...files } };
    },
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}
