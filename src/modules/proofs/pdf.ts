/**
 * A proof as a PDF (A4) for an auditor: text only, no links, no scripts, no actions. Text is set in
 * the standard Helvetica and Courier (WinAnsi: German umlauts and ß included, nothing embedded). A
 * value with a character outside WinAnsi (a Polish ł, a Greek or Cyrillic name) is set in DejaVu Sans,
 * embedded as a subset: the standard fonts would garble it. DejaVu costs a few times more to lay out,
 * so it is used only where needed.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { formatTime, PROOF_TEXTS, type ProofTexts } from './texts.js';
import type { MatchCode, ProofData } from './types.js';

const FONT_FILES = { Body: 'DejaVuSans.ttf', Bold: 'DejaVuSans-Bold.ttf', Mono: 'DejaVuSansMono.ttf' };
type FontName = keyof typeof FONT_FILES;
let fonts: Record<FontName, Buffer> | null = null;

/** The font files, read once from the `dejavu-fonts-ttf` package. */
function loadFonts(): Record<FontName, Buffer> {
  if (!fonts) {
    const dir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');
    fonts = {
      Body: readFileSync(join(dir, FONT_FILES.Body)),
      Bold: readFileSync(join(dir, FONT_FILES.Bold)),
      Mono: readFileSync(join(dir, FONT_FILES.Mono)),
    };
  }
  return fonts;
}

/** The characters of WinAnsiEncoding (Windows-1252) beyond Latin-1. */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** Whether the standard fonts can show `text` (WinAnsiEncoding). */
export function fitsWinAnsi(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code === 0x0a || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff)) continue;
    if (!WIN_ANSI_EXTRA.has(char)) return false;
  }
  return true;
}

type Style = 'body' | 'bold' | 'mono';
const STANDARD: Record<Style, string> = { body: 'Helvetica', bold: 'Helvetica-Bold', mono: 'Courier' };
const EMBEDDED: Record<Style, FontName> = { body: 'Body', bold: 'Bold', mono: 'Mono' };

/** The font for `text` in a style: a standard font when it can show the text, else DejaVu. */
function face(style: Style, text: string): string {
  return fitsWinAnsi(text) ? STANDARD[style] : EMBEDDED[style];
}

const MARGIN = 50;
const LABEL_WIDTH = 165;
const GAP = 10;
const BODY = 9.5;
const MONO = 8;
const GREY = '#555555';
const RULE = '#999999';

type Doc = PDFKit.PDFDocument;

function layout(doc: Doc) {
  const left = MARGIN;
  const width = doc.page.width - 2 * MARGIN;
  const bottom = () => doc.page.height - doc.page.margins.bottom;

  /** Starts a new page when `height` does not fit on this one. */
  function room(height: number) {
    if (doc.y + height > bottom()) doc.addPage();
  }

  function heading(title: string) {
    room(40);
    doc.moveDown(0.5);
    doc.font(face('bold', title)).fontSize(11.5).fillColor('black').text(title, left, doc.y, { width });
    const y = doc.y + 2;
    doc
      .moveTo(left, y)
      .lineTo(left + width, y)
      .lineWidth(0.6)
      .strokeColor(RULE)
      .stroke();
    doc.y = y + 5;
  }

  /** One label and its value, side by side; `mono` for hashes, ids and keys. */
  function row(label: string, value: string, options: { mono?: boolean; strong?: boolean } = {}) {
    const valueWidth = width - LABEL_WIDTH - GAP;
    const valueFont = face(options.mono ? 'mono' : options.strong ? 'bold' : 'body', value);
    const labelFont = face('body', label);
    const valueSize = options.mono ? MONO : BODY;
    doc.font(labelFont).fontSize(BODY);
    const labelHeight = doc.heightOfString(label, { width: LABEL_WIDTH });
    doc.font(valueFont).fontSize(valueSize);
    const valueHeight = doc.heightOfString(value, { width: valueWidth });
    const height = Math.max(labelHeight, valueHeight);
    room(height + 2.5);
    const y = doc.y;
    doc.font(labelFont).fontSize(BODY).fillColor(GREY).text(label, left, y, { width: LABEL_WIDTH });
    doc
      .font(valueFont)
      .fontSize(valueSize)
      .fillColor('black')
      .text(value, left + LABEL_WIDTH + GAP, y + (options.mono ? 1 : 0), { width: valueWidth });
    doc.y = y + height + 2.5;
  }

  function paragraph(value: string, options: { size?: number; color?: string } = {}) {
    doc.font(face('body', value)).fontSize(options.size ?? BODY);
    room(doc.heightOfString(value, { width }) + 4);
    doc
      .fillColor(options.color ?? 'black')
      .text(value, left, doc.y, { width })
      .moveDown(0.3);
  }

  /** A table with a header row; `widths` in points, the last column takes the rest. */
  function table(header: string[], rows: string[][], widths: number[]) {
    const columns = [...widths, width - widths.reduce((a, b) => a + b, 0)];
    const draw = (cells: string[], bold: boolean, shade: boolean) => {
      const style: Style = bold ? 'bold' : 'body';
      const heights = cells.map((cell, i) =>
        doc
          .font(face(style, cell))
          .fontSize(BODY)
          .heightOfString(cell, { width: (columns[i] ?? 0) - 8 }),
      );
      const height = Math.max(...heights) + 6;
      room(height);
      const y = doc.y;
      if (shade) doc.rect(left, y, width, height).fillColor('#eeeeee').fill();
      let x = left;
      cells.forEach((cell, i) => {
        doc
          .fillColor('black')
          .font(face(style, cell))
          .fontSize(BODY)
          .text(cell, x + 4, y + 3, { width: (columns[i] ?? 0) - 8 });
        x += columns[i] ?? 0;
      });
      doc
        .moveTo(left, y + height)
        .lineTo(left + width, y + height)
        .lineWidth(0.4)
        .strokeColor(RULE)
        .stroke();
      doc.y = y + height;
    };
    draw(header, true, true);
    for (const cells of rows) draw(cells, false, false);
    doc.y += 4;
  }

  function banner(value: string) {
    doc.font(face('bold', value)).fontSize(10);
    const height = doc.heightOfString(value, { width: width - 16 }) + 10;
    const y = doc.y;
    doc.rect(left, y, width, height).fillColor('#fde2e2').fill();
    doc.fillColor('#a00000').text(value, left + 8, y + 5, { width: width - 16 });
    doc.y = y + height + 6;
  }

  return { room, heading, row, paragraph, table, banner, left, width };
}

function yesNo(t: ProofTexts, value: boolean | null): string {
  return value === null ? t.none : value ? t.yes : t.no;
}

type Layout = ReturnType<typeof layout>;

/** The proof's sections in order: what was asked, the answer, when, the evidence, how to verify. */
function content(doc: Doc, proof: ProofData, t: ProofTexts) {
  const l = layout(doc);
  titleSection(doc, l, proof, t);
  askedSection(l, proof, t);
  answerSection(l, proof, t);
  timesSection(l, proof, t);
  evidenceSection(l, proof, t);
  if (proof.kind === 'confirmation') timestampSection(l, proof, t);
  stepsSection(doc, l, proof, t);
}

/** `value`, or the text for a missing value. */
function or(t: ProofTexts, value: string | null): string {
  return value ?? t.none;
}

function time(t: ProofTexts, value: string | null): string {
  return formatTime(value, t.none);
}

function titleSection(doc: Doc, l: Layout, proof: ProofData, t: ProofTexts) {
  doc
    .font(face('bold', t.title[proof.kind]))
    .fontSize(14)
    .fillColor('black')
    .text(t.title[proof.kind], l.left, doc.y, { width: l.width });
  doc.moveDown(0.2);
  doc.font(face('body', t.subtitle)).fontSize(9).fillColor(GREY).text(t.subtitle, { width: l.width });
  doc.moveDown(0.5);
  if (proof.mode === 'test') l.banner(t.testMode);
  l.row(t.fields.recordId, proof.id, { mono: true });
  if (proof.request_id !== proof.id) l.row(t.fields.requestId, proof.request_id, { mono: true });
}

function askedSection(l: Layout, proof: ProofData, t: ProofTexts) {
  l.heading(t.sections.asked);
  l.row(t.fields.requester, or(t, proof.asked.requester_vat_number), { strong: true });
  l.row(t.fields.vatNumber, proof.asked.vat_number, { strong: true });
  l.row(t.fields.authority, t.authorities[proof.answer.source] ?? proof.answer.source);
}

function answerSection(l: Layout, proof: ProofData, t: ProofTexts) {
  l.heading(t.sections.answer);
  const answer = proof.answer;
  if (answer.status_code !== null) {
    l.row(
      t.fields.statusCode,
      answer.status_text ? `${answer.status_code}: ${answer.status_text}` : answer.status_code,
    );
  }
  l.row(t.fields.valid, yesNo(t, answer.valid), { strong: true });
  if (answer.qualified !== null) l.row(t.fields.qualified, yesNo(t, answer.qualified), { strong: true });
  matchesTable(l, proof, t);
  const company = answer.company;
  if (company) {
    const held: [string, string | null][] = [
      [t.fields.name, company.name],
      [t.fields.street, company.street],
      [t.fields.postcode, company.postcode],
      [t.fields.town, company.town],
      [t.fields.address, company.address],
    ];
    for (const [label, value] of held) if (value !== null) l.row(label, value);
  }
  if (answer.valid_from !== null || answer.valid_to !== null) {
    l.row(t.fields.validFrom, or(t, answer.valid_from));
    l.row(t.fields.validTo, or(t, answer.valid_to));
  }
  if (proof.kind === 'confirmation') {
    l.row(t.fields.taxauthId, or(t, answer.taxauth_id), { mono: true });
    l.row(t.fields.authorityTime, or(t, answer.authority_time));
  } else {
    l.row(t.fields.consultationNumber, or(t, answer.consultation_number), { mono: true });
  }
  registerRows(l, proof, t);
}

/** Each company field asked for comparison, with the authority's match code and its meaning. */
function matchesTable(l: Layout, proof: ProofData, t: ProofTexts) {
  const matches = proof.answer.matches;
  const asked = proof.asked.company;
  if (!matches || !asked) return;
  const fields = ['name', 'street', 'postcode', 'town'] as const;
  const rows = fields.map((field) => {
    const code: MatchCode | null = matches[field] ?? null;
    return [t.fields[field], asked[field] ?? t.notSent, code ?? t.none, code ? t.match[code] : t.none];
  });
  l.table([t.grid.field, t.grid.asked, t.grid.code, t.grid.meaning], rows, [80, 190, 55]);
}

/** A national register's answer given because VIES could not answer. */
function registerRows(l: Layout, proof: ProofData, t: ProofTexts) {
  const register = proof.answer.register;
  if (!register) return;
  l.row(t.fields.viesReason, or(t, register.reason));
  l.row(t.fields.scope, t.domesticScope, { strong: true });
  if (register.register_status !== null) l.row(t.fields.registerStatus, register.register_status);
  if (register.data_date !== null) l.row(t.fields.dataDate, register.data_date);
  const identifiers = Object.entries(register.identifiers).map(([name, value]) => `${name}: ${value}`);
  if (identifiers.length > 0) l.row(t.fields.identifiers, identifiers.join('\n'), { mono: true });
  const flags = register.flags.map(
    (flag) =>
      `${flag.code}${flag.register_value ? ` (${flag.register_value})` : ''}${flag.since ? `, ${flag.since}` : ''}`,
  );
  if (flags.length > 0) l.row(t.fields.flags, flags.join('\n'));
}

function timesSection(l: Layout, proof: ProofData, t: ProofTexts) {
  l.heading(t.sections.times);
  l.row(t.fields.received, time(t, proof.times.received_at));
  l.row(t.fields.answered, time(t, proof.times.answered_at));
  l.row(t.fields.stored, time(t, proof.times.stored_at));
  l.row(t.fields.keptUntil, time(t, proof.times.kept_until));
}

function evidenceSection(l: Layout, proof: ProofData, t: ProofTexts) {
  l.heading(t.sections.evidence);
  l.row(t.fields.hash, proof.record.hash, { mono: true });
  if (proof.record.hash_matches !== null) {
    l.row(t.fields.hashCheck, proof.record.hash_matches ? t.matches : t.doesNotMatch, { strong: true });
  }
  if (proof.chain) {
    l.row(t.fields.seq, String(proof.chain.seq), { strong: true });
    l.row(t.fields.prevHash, proof.chain.prev_hash, { mono: true });
  } else {
    l.paragraph(t.auditNotInChain);
  }
  signedHeadRows(l, proof, t);
}

/** The chain head that covers the record, with its signature and whether it verifies. */
function signedHeadRows(l: Layout, proof: ProofData, t: ProofTexts) {
  const head = proof.signed_head;
  if (!head) return;
  l.row(t.fields.headSeq, String(head.seq));
  l.row(t.fields.headHash, head.hash, { mono: true });
  // Base64 in lines of 64 characters, as PEM writes it (a line break at a `/` would be ambiguous).
  const signature = head.signature?.match(/.{1,64}/g)?.join('\n') ?? null;
  l.row(t.fields.signature, signature ?? t.unsigned, signature ? { mono: true } : {});
  if (head.signature !== null) {
    l.row(
      t.fields.signatureCheck,
      head.signature_valid === null
        ? t.notChecked
        : head.signature_valid
          ? t.signatureValid
          : t.signatureInvalid,
    );
  }
  if (head.public_key) l.row(t.fields.publicKey, head.public_key.trim(), { mono: true });
}

function timestampSection(l: Layout, proof: ProofData, t: ProofTexts) {
  l.heading(t.sections.timestamp);
  if (proof.timestamp) {
    l.row(t.fields.tokenHead, String(proof.timestamp.head_seq));
    l.row(t.fields.genTime, time(t, proof.timestamp.gen_time));
    l.row(t.fields.tsa, proof.timestamp.tsa_url);
  } else {
    l.paragraph(t.noToken);
  }
}

/** The verification steps, kept on one page with their heading. */
function stepsSection(doc: Doc, l: Layout, proof: ProofData, t: ProofTexts) {
  const steps = proof.verification.map((step, i) => `${i + 1}. ${step}`);
  const stepsHeight = steps.reduce(
    (sum, step) =>
      sum + doc.font(face('body', step)).fontSize(BODY).heightOfString(step, { width: l.width }) + 4,
    40,
  );
  l.room(stepsHeight);
  l.heading(t.sections.verify);
  for (const step of steps) l.paragraph(step);
}

/** Page numbers and the generation time at the foot of every page. */
function footers(doc: Doc, proof: ProofData, t: ProofTexts) {
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.margins.bottom;
    // Written into the bottom margin: without this pdfkit would start a new page.
    doc.page.margins.bottom = 0;
    const y = doc.page.height - 36;
    const width = doc.page.width - 2 * MARGIN;
    const generated = t.generated(formatTime(proof.generated_at, t.none));
    doc.font(face('body', generated)).fontSize(7.5).fillColor(GREY);
    doc.text(generated, MARGIN, y, { width, lineBreak: false });
    doc.text(t.page(i - range.start + 1, range.count), MARGIN, y, {
      width,
      align: 'right',
      lineBreak: false,
    });
    doc.page.margins.bottom = bottom;
  }
}

/** Renders a proof as PDF bytes (pdfkit is loaded on the first proof asked for as PDF). */
export async function renderProofPdf(proof: ProofData): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const t = PROOF_TEXTS[proof.language];
  const doc = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, bottom: 60, left: MARGIN, right: MARGIN },
    bufferPages: true,
    lang: proof.language === 'de' ? 'de-DE' : 'en',
    info: {
      Title: `${t.title[proof.kind]}: ${proof.asked.vat_number}`,
      Author: 'openvat',
      Subject: proof.id,
      CreationDate: new Date(proof.generated_at),
    },
  });
  for (const [name, data] of Object.entries(loadFonts())) doc.registerFont(name, data);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  content(doc, proof, t);
  footers(doc, proof, t);
  doc.end();
  return done;
}
