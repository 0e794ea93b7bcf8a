import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  type BusinessCardResult,
  createSmpClient,
  type ServiceGroupResult,
  type SmpUrlGuard,
} from '../../../src/registries/peppol-smp.js';
import { readXml } from '../../../src/registries/peppol-smp-xml.js';
import { DOCUMENT_TYPES } from '../../../src/simulators/peppol-participants.js';
import { createPeppolSmpSimulator, HOSTILE_BODY_BYTES } from '../../../src/simulators/peppol-smp.js';
import { type SimulatorServer, serveSimulators } from '../../../src/simulators/server.js';
import { type FixtureServer, fixture, startFixtureServer } from './helpers.js';

const allowAll: SmpUrlGuard = { isAllowed: async () => ({ allowed: true }) };

function kind<R extends { kind: string }, K extends R['kind']>(
  result: R,
  expected: K,
): Extract<R, { kind: K }> {
  assert.equal(result.kind, expected, JSON.stringify(result));
  return result as Extract<R, { kind: K }>;
}

const xml = (body: string, status = 200, headers: Record<string, string> = {}) => ({
  status,
  body,
  headers: { 'content-type': 'text/xml;charset=UTF-8', ...headers },
});

describe('Peppol SMP client against the SMP simulator', () => {
  let sim: SimulatorServer;
  let base: string;
  const client = (guard: SmpUrlGuard = allowAll) => createSmpClient({ guard, timeoutMs: 5_000 });
  const smp = (name: string) => `${base}/peppol-smp/${name}`;
  const stats = () => sim.stats().smp as { total: number; hostile: { bytesSent: number; open: number } };

  before(async () => {
    sim = serveSimulators({ smp: createPeppolSmpSimulator() });
    ({ base } = await sim.listen(0));
  });
  after(() => sim.close());
  beforeEach(() => sim.control({ smp: { reset: true } }));

  it('lists the document types of a phoss-smp ServiceGroup, and its business card', async () => {
    const group = kind(await client().serviceGroup(smp('invoices'), '0208:0999000030'), 'service_group');
    assert.deepEqual(group.documentTypes, [
      DOCUMENT_TYPES.bisInvoice,
      DOCUMENT_TYPES.bisCreditNote,
      DOCUMENT_TYPES.bisCiiInvoice,
    ]);
    assert.equal(group.shape, 'busdox');
    assert.equal(group.unreadable, 0);
    const card = kind(await client().businessCard(smp('invoices'), '0208:0999000030'), 'business_card');
    assert.deepEqual(card, {
      kind: 'business_card',
      name: 'Nordlicht Trading BV',
      countryCode: 'BE',
      entities: 1,
    });
    const vat = kind(await client().serviceGroup(smp('invoices'), '9925:be0999000030'), 'service_group');
    assert.equal(vat.documentTypes.length, 3);
  });

  it('reads an Oxalis ServiceGroup (other prefixes) with only non-invoice document types; no business card is none', async () => {
    const group = kind(await client().serviceGroup(smp('orders'), '0192:999000002'), 'service_group');
    assert.deepEqual(group.documentTypes, [
      DOCUMENT_TYPES.order,
      DOCUMENT_TYPES.orderResponse,
      DOCUMENT_TYPES.catalogue,
    ]);
    kind(await client().businessCard(smp('orders'), '0192:999000002'), 'none');
  });

  it('a participant the SMP does not know is not found (404), on either kind of SMP', async () => {
    const phoss = kind(await client().serviceGroup(smp('invoices'), '9920:esb99900003'), 'not_found');
    assert.match(phoss.message, /does not know 9920:esb99900003/);
    const oxalis = kind(await client().serviceGroup(smp('orders'), '0192:999999999'), 'not_found');
    assert.match(oxalis.message, /Could not find participant/);
  });

  it('an SMP that is down (HTTP 500, an HTML page) or in maintenance is unavailable, never empty', async () => {
    const down = kind(await client().serviceGroup(smp('down'), '9944:nl999000001b01'), 'unavailable');
    assert.deepEqual([down.reason, down.status, down.retryable], ['down', 500, true]);
    assert.match(down.message, /HTTP 500 with an HTML page/);
    kind(await client().businessCard(smp('down'), '9944:nl999000001b01'), 'unavailable');
    sim.control({ smp: { down: ['invoices'] } });
    const maintenance = kind(await client().serviceGroup(smp('invoices'), '0208:0999000030'), 'unavailable');
    assert.equal(maintenance.status, 503);
  });

  it('an XML bomb is refused without expanding it', async () => {
    const bomb = kind(await client().serviceGroup(smp('hostile'), '0216:003799900008'), 'unavailable');
    assert.equal(bomb.reason, 'bad_response');
    assert.match(bomb.message, /document type declaration/);
  });

  it('a ServiceGroup of 50 MB is cut off after the cap, not read to its end', async () => {
    const huge = kind(await client().serviceGroup(smp('hostile'), '0007:9990000003'), 'unavailable');
    assert.equal(huge.reason, 'bad_response');
    assert.match(huge.message, /larger than 1048576 bytes/);
    for (let i = 0; i < 200 && stats().hostile.open > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(stats().hostile.open, 0, 'the SMP saw the connection closed');
    assert.ok(
      stats().hostile.bytesSent < HOSTILE_BODY_BYTES / 4,
      `${stats().hostile.bytesSent} bytes were sent`,
    );
    const card = kind(await client().businessCard(smp('hostile'), '0007:9990000003'), 'unavailable');
    assert.match(
      card.message,
      /larger than 262144 bytes/,
      'a declared length over the cap is refused at once',
    );
  });

  it('a URL the guard refuses makes no request', async () => {
    const seen: string[] = [];
    const guard: SmpUrlGuard = {
      isAllowed: async (url) => {
        seen.push(url);
        return { allowed: false, reason: 'the SMP address is not public' };
      },
    };
    const before = stats().total;
    const group = kind(await client(guard).serviceGroup(smp('invoices'), '0208:0999000030'), 'refused');
    assert.equal(group.reason, 'the SMP address is not public');
    kind(await client(guard).businessCard(smp('invoices'), '0208:0999000030'), 'refused');
    assert.equal(stats().total, before, 'the SMP was not called');
    assert.deepEqual(seen, [
      `${smp('invoices')}/iso6523-actorid-upis%3A%3A0208%3A0999000030`,
      `${smp('invoices')}/businesscard/iso6523-actorid-upis%3A%3A0208%3A0999000030`,
    ]);
  });

  it('an SMP that never answers times out', async () => {
    sim.control({ smp: { hang: ['invoices'] } });
    const result = kind(
      await createSmpClient({ guard: allowAll, timeoutMs: 200 }).serviceGroup(
        smp('invoices'),
        '0208:0999000030',
      ),
      'unavailable',
    );
    assert.equal(result.reason, 'timeout');
  });
});

describe('Peppol SMP client on recorded answers', () => {
  let server: FixtureServer;
  const client = () => createSmpClient({ guard: allowAll, timeoutMs: 2_000 });
  const group = (participant = '0208:0999000030'): Promise<ServiceGroupResult> =>
    client().serviceGroup(`${server.url}/smp/`, participant);
  const card = (participant = '0208:0999000030'): Promise<BusinessCardResult> =>
    client().businessCard(server.url, participant);

  before(async () => {
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('asks the percent-encoded participant under the SMP base URL', async () => {
    server.use(() => xml(fixture('peppol/service-group-phoss.xml')));
    kind(await group(), 'service_group');
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url, r.headers.accept]),
      [['GET', '/smp/iso6523-actorid-upis%3A%3A0208%3A0999000030', 'application/xml, text/xml;q=0.9']],
    );
  });

  it('reads the ServiceGroup shapes SMPs send: phoss-smp, Oxalis, unencoded hrefs, BDXR SMP 1.0 and 2.0', async () => {
    const cases: [string, string, string, string[]][] = [
      [
        'service-group-phoss.xml',
        '0208:0999000030',
        'busdox',
        [DOCUMENT_TYPES.bisInvoice, DOCUMENT_TYPES.bisCreditNote],
      ],
      [
        'service-group-oxalis.xml',
        '0192:999000002',
        'busdox',
        [DOCUMENT_TYPES.bisInvoice, DOCUMENT_TYPES.bisCreditNote, DOCUMENT_TYPES.order],
      ],
      [
        'service-group-unencoded.xml',
        '0208:0999000030',
        'busdox',
        [DOCUMENT_TYPES.bisInvoice, DOCUMENT_TYPES.bisCreditNote],
      ],
      ['service-group-bdxr1.xml', '9930:de999000009', 'bdxr1', [DOCUMENT_TYPES.bisInvoice]],
      ['service-group-bdxr2.xml', '9930:de999000009', 'bdxr2', [DOCUMENT_TYPES.xrechnungUbl]],
      ['service-group-empty.xml', '9944:nl999000001b01', 'busdox', []],
    ];
    for (const [file, participant, shape, documentTypes] of cases) {
      server.use(() => xml(fixture(`peppol/${file}`)));
      const result = kind(await group(participant), 'service_group');
      assert.equal(result.shape, shape, file);
      assert.deepEqual(result.documentTypes, documentTypes, file);
    }
  });

  it('a ServiceGroup of another participant is not an answer', async () => {
    server.use(() => xml(fixture('peppol/service-group-phoss.xml')));
    const result = kind(await group('0208:0000000097'), 'unavailable');
    assert.equal(result.reason, 'bad_response');
    assert.match(result.message, /instead of 0208:0000000097/);
  });

  it('business cards of the three Directory versions: the first name, the country code', async () => {
    const cases: [string, string, string, string][] = [
      ['business-card-v3.xml', '0208:0999000030', 'Nordlicht Trading & Sons BV', 'BE'],
      ['business-card-v2.xml', '0184:99900008', 'Baltic Logistics ApS', 'DK'],
      ['business-card-v1.xml', '0184:99900008', 'Baltic Logistics ApS', 'DK'],
    ];
    for (const [file, participant, name, countryCode] of cases) {
      server.use(() => xml(fixture(`peppol/${file}`)));
      const result = kind(await card(participant), 'business_card');
      assert.deepEqual([result.name, result.countryCode, result.entities], [name, countryCode, 1], file);
    }
    assert.equal(server.requests[0]?.url, '/businesscard/iso6523-actorid-upis%3A%3A0208%3A0999000030');
    server.use(() => ({ status: 404, body: '' }));
    kind(await card(), 'none');
  });

  it('404 bodies (an XML comment from Oxalis) are "not found"; HTML and other failures are unavailable', async () => {
    server.use(() => xml(fixture('peppol/not-found-oxalis.xml'), 404));
    kind(await group(), 'not_found');
    const failures: [() => ReturnType<typeof xml>, string, RegExp][] = [
      [
        () => ({
          status: 500,
          body: fixture('peppol/tomcat-500.html'),
          headers: { 'content-type': 'text/html' },
        }),
        'down',
        /HTML page/,
      ],
      [() => xml('', 429, { 'retry-after': '30' }), 'throttled', /429/],
      [() => xml('', 504), 'timeout', /504/],
      [() => xml('', 301, { location: 'http://169.254.169.254/' }), 'bad_response', /redirect/],
      [() => xml('', 403), 'rejected', /403/],
      [
        () => ({
          status: 200,
          body: '<html><body>Welcome</body></html>',
          headers: { 'content-type': 'text/html' },
        }),
        'bad_response',
        /HTML page/,
      ],
      [() => xml('<ServiceGroup'), 'bad_response', /not well-formed/],
      [
        () => xml(fixture('peppol/business-card-v3.xml')),
        'bad_response',
        /BusinessCard instead of a ServiceGroup/,
      ],
      [() => xml('{"participant": "0208:0999000030"}'), 'bad_response', /not well-formed|XML/],
    ];
    for (const [reply, reason, message] of failures) {
      server.use(reply);
      const result = kind(await group(), 'unavailable');
      assert.equal(result.reason, reason, message.source);
      assert.match(result.message, message);
    }
    assert.equal(
      server.requests.filter((r) => r.url.includes('169.254')).length,
      0,
      'the redirect was not followed',
    );
    server.use(() => xml('', 429, { 'retry-after': '30' }));
    assert.equal(kind(await group(), 'unavailable').retryAfterSeconds, 30);
  });

  it('documents with a DTD are refused before parsing: the billion laughs, the quadratic blowup, an external entity', async () => {
    for (const file of ['xml-bomb.xml', 'xml-quadratic.xml', 'xml-external-entity.xml']) {
      server.use(() => xml(fixture(`peppol/${file}`)));
      const result = kind(await group(), 'unavailable');
      assert.match(result.message, /document type declaration/, file);
      server.use(() => xml(fixture(`peppol/${file}`)));
      kind(await card(), 'unavailable');
    }
  });

  it('entity references without a DTD are left as they are, never expanded', () => {
    const read = readXml(
      '<BusinessCard xmlns="http://www.peppol.eu/schema/pd/businesscard/20180621/"><ParticipantIdentifier>&lol9;&amp;&#x41;</ParticipantIdentifier></BusinessCard>',
    );
    assert.ok(read.ok, JSON.stringify(read));
    assert.equal(
      read.root.children[0]?.text,
      '&lol9;&A',
      'only the predefined entities and character references are decoded',
    );
  });

  it('a body over the cap is refused: a declared length at once, an undeclared one once the cap is passed', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    server.use(() => xml(big));
    assert.match(kind(await group(), 'unavailable').message, /larger than 1048576 bytes/);
    const small = createSmpClient({ guard: allowAll, timeoutMs: 2_000, maxServiceGroupBytes: 100 });
    server.use(() => xml(fixture('peppol/service-group-phoss.xml')));
    assert.match(
      kind(await small.serviceGroup(server.url, '0208:0999000030'), 'unavailable').message,
      /larger than 100 bytes/,
    );
  });

  it('a connection reset or a closed port is unavailable', async () => {
    server.use(() => 'reset');
    assert.equal(kind(await group(), 'unavailable').reason, 'down');
    const closed = createSmpClient({ guard: allowAll, timeoutMs: 2_000 });
    assert.equal(
      kind(await closed.serviceGroup('http://127.0.0.1:1', '0208:0999000030'), 'unavailable').reason,
      'down',
    );
  });
});
