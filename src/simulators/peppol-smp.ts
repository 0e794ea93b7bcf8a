/**
 * Peppol SMP simulator: four SMPs under `/peppol-smp/<name>`, each answering
 * `GET /<name>/iso6523-actorid-upis%3A%3A<ICD:value>` (the ServiceGroup) and
 * `GET /<name>/businesscard/iso6523-actorid-upis%3A%3A<ICD:value>` for the documented participants
 * (peppol-participants.ts). Identifiers are read percent-encoded or not, in any case.
 *
 * - `invoices`: a phoss-smp. Its ServiceGroup is the shape phoss-smp writes, as recorded in
 *   odoo/odoo `addons/account_peppol/tests/test_peppol_messages.py` (`smp:`/`id:` prefixes, the
 *   `wsa` and `ds` namespaces declared, hrefs with the participant and document type
 *   percent-encoded) and phax/phoss-smp `phoss-smp-webapp-xml/src/test/resources/rest-files/peppol-service-group.xml`;
 *   its business cards the version 3 shape of phax/phoss-smp
 *   `phoss-smp-webapp-xml/src/test/resources/rest-files/peppol-business-card-v3.xml`. A
 *   participant it does not know: 404.
 * - `orders`: an Oxalis (vefa) SMP as Norway's ELMA runs: the ServiceGroup with the identifiers
 *   namespace as default and the publishing namespace as `ns3:` (a recorded ELMA answer for
 *   0192:921605900, public code index id 37321068886; ELMA's 2026-09-08 answer for 0192:923609016,
 *   id 65782627450), no business cards, and for an unknown participant a 404 whose body is an XML
 *   comment naming vefa's NotFoundException (the same recording).
 * - `down`: HTTP 500 with Apache Tomcat's error page, the servlet container phoss-smp runs in
 *   (phax/phoss-smp#316 shows its pages).
 * - `hostile`: for the Finnish participant a ServiceGroup carrying the "billion laughs" entity
 *   bomb; for the Swedish one a ServiceGroup of 50 MB sent chunked, without a length; their
 *   business cards declare a length of 50 MB.
 *
 * Controls (the SMP's name, in any case, as the "country" of the shared controls): `down: ["invoices"]` answers
 * HTTP 503 with a maintenance page, `hang`, `latencyMs`, `errorRate`; counters per SMP.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
} from './controls.js';
import {
  SIMULATED_PARTICIPANTS,
  type SimulatedParticipant,
  type SimulatedSmpName,
} from './peppol-participants.js';

export type PeppolSmpSimulator = ControlledSimulator;

export interface PeppolSmpSimulatorOptions extends RegistrySimulatorOptions {
  participants?: readonly SimulatedParticipant[];
}

const SMPS: readonly SimulatedSmpName[] = ['invoices', 'orders', 'down', 'hostile'];
const XML = 'text/xml;charset=UTF-8';
const SCHEME = 'iso6523-actorid-upis';

/** 50 MB, the size of the hostile SMP's ServiceGroup. */
export const HOSTILE_BODY_BYTES = 50 * 1024 * 1024;

export const TOMCAT_500_HTML =
  '<!doctype html><html lang="en"><head><title>HTTP Status 500 – Internal Server Error</title>' +
  '<style type="text/css">body {font-family:Tahoma,Arial,sans-serif;} h1, h2, h3, b {color:white;background-color:#525D76;} ' +
  'h1 {font-size:22px;} h2 {font-size:16px;} h3 {font-size:14px;} p {font-size:12px;} a {color:black;} ' +
  '.line {height:1px;background-color:#525D76;border:none;}</style></head><body>' +
  '<h1>HTTP Status 500 – Internal Server Error</h1><hr class="line" /><p><b>Type</b> Exception Report</p>' +
  '<p><b>Description</b> The server encountered an unexpected condition that prevented it from fulfilling the request.</p>' +
  '<hr class="line" /><h3>Apache Tomcat/10.1.34</h3></body></html>';

/** The "billion laughs" document (Wikipedia, Billion laughs attack) as a ServiceGroup. */
export function xmlBomb(): string {
  const levels = Array.from(
    { length: 8 },
    (_, i) => `  <!ENTITY lol${i + 2} "${`&lol${i === 0 ? '' : i + 1};`.repeat(10)}">`,
  ).join('\n');
  return (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n  <!ENTITY lol "lol">\n' +
    `${levels}\n]>\n` +
    '<smp:ServiceGroup xmlns:smp="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:id="http://busdox.org/transport/identifiers/1.0/">' +
    '<id:ParticipantIdentifier scheme="iso6523-actorid-upis">&lol9;</id:ParticipantIdentifier>' +
    '<smp:ServiceMetadataReferenceCollection/></smp:ServiceGroup>'
  );
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function references(base: string, participant: SimulatedParticipant, prefix: string): string {
  const group = encodeURIComponent(`${SCHEME}::${participant.id}`);
  return (participant.smp?.documentTypes ?? [])
    .map(
      (id) =>
        `<${prefix}ServiceMetadataReference href="${escapeXml(`${base}/${group}/services/${encodeURIComponent(id)}`)}"/>`,
    )
    .join('');
}

/** The ServiceGroup as phoss-smp writes it. */
export function phossServiceGroup(base: string, participant: SimulatedParticipant): string {
  return (
    "<?xml version='1.0' encoding='UTF-8'?>\n" +
    '<smp:ServiceGroup xmlns:wsa="http://www.w3.org/2005/08/addressing" xmlns:id="http://busdox.org/transport/identifiers/1.0/" ' +
    'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:smp="http://busdox.org/serviceMetadata/publishing/1.0/">' +
    `<id:ParticipantIdentifier scheme="${SCHEME}">${escapeXml(participant.id)}</id:ParticipantIdentifier>` +
    `<smp:ServiceMetadataReferenceCollection>${references(base, participant, 'smp:')}</smp:ServiceMetadataReferenceCollection>` +
    '</smp:ServiceGroup>'
  );
}

/** The ServiceGroup as an Oxalis (vefa) SMP writes it. */
export function oxalisServiceGroup(base: string, participant: SimulatedParticipant): string {
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
    '<ns3:ServiceGroup xmlns="http://busdox.org/transport/identifiers/1.0/" xmlns:ns2="http://www.w3.org/2000/09/xmldsig#" ' +
    'xmlns:ns3="http://busdox.org/serviceMetadata/publishing/1.0/">' +
    `<ParticipantIdentifier scheme="${SCHEME}">${escapeXml(participant.id)}</ParticipantIdentifier>` +
    `<ns3:ServiceMetadataReferenceCollection>${references(base, participant, 'ns3:')}</ns3:ServiceMetadataReferenceCollection>` +
    '</ns3:ServiceGroup>'
  );
}

export function oxalisNotFound(participantId: string): string {
  return (
    `<!--\nmessage : Could not find participant '${SCHEME}::${escapeXml(participantId)}'\n` +
    'exception : network.oxalis.vefa.peppol.publisher.lang.NotFoundException\n-->'
  );
}

/** The business card, version 3, as phoss-smp publishes it. */
export function businessCardV3(participant: SimulatedParticipant): string {
  const card = participant.smp?.businessCard;
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
    '<BusinessCard xmlns="http://www.peppol.eu/schema/pd/businesscard/20180621/">' +
    `<ParticipantIdentifier scheme="${SCHEME}">${escapeXml(participant.id)}</ParticipantIdentifier>` +
    `<BusinessEntity><Name language="en">${escapeXml(card?.name ?? '')}</Name><CountryCode>${card?.countryCode ?? ''}</CountryCode>` +
    `<Identifier scheme="VAT">${escapeXml(participant.vatNumber)}</Identifier></BusinessEntity></BusinessCard>`
  );
}

/** Writes `total` bytes of a ServiceGroup that never ends well, chunk by chunk, until the client goes. */
function streamHuge(
  res: ServerResponse,
  total: number,
  withLength: boolean,
  progress: { bytesSent: number; open: number },
): void {
  progress.open++;
  res.writeHead(200, { 'content-type': XML, ...(withLength ? { 'content-length': String(total) } : {}) });
  const head = Buffer.from(
    '<?xml version="1.0"?><smp:ServiceGroup xmlns:smp="http://busdox.org/serviceMetadata/publishing/1.0/"><smp:ServiceMetadataReferenceCollection>',
  );
  const chunk = Buffer.from('<smp:ServiceMetadataReference href="x/services/y"/>'.repeat(1300));
  let sent = 0;
  const pump = () => {
    if (sent === 0) {
      res.write(head);
      sent += head.length;
      progress.bytesSent += head.length;
    }
    while (sent < total && !res.destroyed) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
      sent += piece.length;
      progress.bytesSent += piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  res.on('close', () => {
    progress.open--;
    res.removeAllListeners('drain');
  });
  pump();
}

export function createPeppolSmpSimulator(options: PeppolSmpSimulatorOptions = {}): PeppolSmpSimulator {
  const now = options.now ?? (() => new Date());
  const participants = options.participants ?? SIMULATED_PARTICIPANTS;
  /** The hostile SMP's streams: bytes written so far, and how many are still open. */
  const hostile = { bytesSent: 0, open: 0 };
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });

  /** The participant a path segment names on an SMP (whose SML record points there), or undefined. */
  function participantOn(smp: SimulatedSmpName, segment: string): SimulatedParticipant | undefined {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment).toLowerCase();
    } catch {
      return undefined;
    }
    if (!decoded.startsWith(`${SCHEME}::`)) return undefined;
    const id = decoded.slice(SCHEME.length + 2);
    return participants.find(
      (p) => p.id === id && (p.sml.kind === 'smp' || p.sml.kind === 'many_records') && p.sml.smp === smp,
    );
  }

  /** The answer of the invoices (phoss-smp) and orders (Oxalis) SMPs: [status, content type, body]. */
  function publishedAnswer(
    smp: SimulatedSmpName,
    base: string,
    card: boolean,
    participant: SimulatedParticipant | undefined,
    segment: string,
  ): [number, string, string] {
    const oxalis = smp === 'orders';
    if (!participant?.smp) {
      return oxalis
        ? [404, XML, oxalisNotFound(decodeSafely(segment).replace(`${SCHEME}::`, ''))]
        : [404, 'text/plain;charset=UTF-8', ''];
    }
    if (card) {
      return participant.smp.businessCard && !oxalis
        ? [200, XML, businessCardV3(participant)]
        : [404, 'text/plain;charset=UTF-8', ''];
    }
    return [200, XML, oxalis ? oxalisServiceGroup(base, participant) : phossServiceGroup(base, participant)];
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const [, smpName, ...rest] = (path.split('?')[0] ?? '').split('/');
    const smp = SMPS.find((name) => name === smpName);
    if (!smp || req.method !== 'GET') return send(res, 404, 'text/plain', 'Not Found');
    const card = rest[0] === 'businesscard';
    const segment = (card ? rest[1] : rest[0]) ?? '';
    if (rest.length !== (card ? 2 : 1)) return send(res, 404, 'text/plain', 'Not Found');
    // The shared controls key their settings by upper-case "country": here the SMP's name.
    const key = smp.toUpperCase();
    const admission = controls.admit(key);
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind !== 'admitted') return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    try {
      await controls.delay(key);
      if (controls.isDown(key) || controls.injectedError(key)) {
        controls.recordError(key, 'HTTP_503');
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      const host = req.headers.host ?? '127.0.0.1';
      const base = `http://${host}/peppol-smp/${smp}`;
      const participant = participantOn(smp, segment);
      if (smp === 'down') {
        controls.recordError(key, 'HTTP_500');
        return send(res, 500, 'text/html;charset=utf-8', TOMCAT_500_HTML);
      }
      if (smp === 'hostile') {
        if (!participant) return send(res, 404, 'text/plain', '');
        if (card) return streamHuge(res, HOSTILE_BODY_BYTES, true, hostile);
        if (participant.id.startsWith('0007:')) return streamHuge(res, HOSTILE_BODY_BYTES, false, hostile);
        return send(res, 200, XML, xmlBomb());
      }
      const [status, type, body] = publishedAnswer(smp, base, card, participant, segment);
      send(res, status, type, body);
    } finally {
      admission.release();
    }
  }

  return {
    prefix: '/peppol-smp',
    handle,
    control: (command) => {
      if (command.reset === true || command.resetStats === true) hostile.bytesSent = 0;
      return { ...controls.apply(command) };
    },
    stats: () => ({ ...controls.stats(), hostile: { ...hostile } }),
    controls,
  };
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
