import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { TimestampLookup, TimestampToken } from '../../src/modules/proofs/timestamps.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { assertErrorBody } from '../helpers/error-body.js';
import { pdfText, popplerSkipReason, renderPages } from '../helpers/poppler.js';

const REQUESTER = 'DE136695976';
const ASKED = {
  name: 'Łódź Spółka z o.o. ΔΟΚΙΜΗ',
  street: 'Musterstraße 22',
  postcode: '12345',
  town: 'Wörgl',
};

const poppler = popplerSkipReason();
if (poppler) console.log(`# notice: ${poppler}`);

/** A time-stamp lookup holding the tokens a test gives it. */
function fakeTimestamps(): TimestampLookup & { tokens: TimestampToken[] } {
  const tokens: TimestampToken[] = [];
  return {
    tokens,
    async newestCovering(seq) {
      const covering = tokens.filter((token) => token.head_seq >= seq);
      return covering.sort((a, b) => b.gen_time.localeCompare(a.gen_time))[0] ?? null;
    },
  };
}

function assertNoScript(pdf: Buffer) {
  const raw = pdf.toString('latin1');
  assert.ok(raw.startsWith('%PDF-'), 'starts with %PDF-');
  for (const name of ['/JS', '/JavaScript', '/OpenAction', '/AA', '/Launch', '/URI', '/EmbeddedFile']) {
    assert.equal(raw.includes(name), false, `the PDF carries no ${name}`);
  }
}

function pngs(prefix: string): string[] {
  const dir = '/tmp';
  const base = prefix.slice(dir.length + 1);
  return readdirSync(dir)
    .filter((name) => name.startsWith(`${base}-`) && name.endsWith('.png'))
    .map((name) => `${dir}/${name}`);
}

for (const target of await databaseTargets()) {
  describe(`proofs for an auditor (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    let key: TestKey;
    let otherAccount: TestKey;
    let otherMode: TestKey;
    let publicPem: string;
    const timestamps = fakeTimestamps();
    const confirmations: { id: string; body: string }[] = [];

    before(async () => {
      db = await target.open();
      const pair = generateKeyPairSync('ed25519');
      publicPem = pair.publicKey.export({ format: 'pem', type: 'spki' }).toString();
      t = await buildTestApp(
        {
          OPENVAT_EVIDENCE_KEY: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
          OPENVAT_CONFIRM_BURST: '1000',
        },
        { db, timestamps },
      );
      key = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
      otherAccount = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
      otherMode = await t.key('business', 'live', {
        accountId: key.accountId,
        defaultRequesterVat: REQUESTER,
      });
      for (const vat of ['ATU88881111', 'ATU12345678']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: key.headers,
          payload: { vat_number: vat, company: ASKED },
        });
        assert.equal(res.statusCode, 200, res.body);
        confirmations.push({ id: res.json().data.confirmation_id, body: res.body });
      }
      timestamps.tokens.push({
        head_seq: 1,
        gen_time: '2026-11-28T04:00:00Z',
        tsa_url: 'https://tsa.example/tsr',
      });
    });
    after(async () => {
      await t.close();
      await db.dispose();
    });

    const get = (url: string, as: TestKey = key, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url, headers: { ...as.headers, ...headers } });
    const json = (url: string, as: TestKey = key, headers: Record<string, string> = {}) =>
      get(url, as, { accept: 'application/json', ...headers });

    it('gives the JSON proof of a confirmation with the stored record and chain', async () => {
      const [first, second] = confirmations;
      assert.ok(first && second);
      const res = await json(`/v1/confirmations/${first.id}/proof`);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const proof = res.json().data;
      const stored = (await json(`/v1/confirmations/${first.id}`)).json().data;
      const original = JSON.parse(first.body);

      assert.equal(proof.kind, 'confirmation');
      assert.equal(proof.id, first.id);
      assert.equal(proof.request_id, stored.request_id);
      assert.equal(proof.mode, 'test');
      assert.equal(proof.language, 'de');
      assert.deepEqual(proof.asked, {
        requester_vat_number: REQUESTER,
        vat_number: 'ATU88881111',
        company: ASKED,
      });
      assert.equal(proof.answer.source, 'taxauth');
      assert.equal(proof.answer.status_code, stored.taxauth_status_code);
      assert.equal(proof.answer.status_code, 'taxauth-0000');
      assert.equal(proof.answer.status_text, 'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig.');
      assert.equal(proof.answer.valid, true);
      assert.equal(proof.answer.qualified, false);
      assert.deepEqual(proof.answer.matches, { name: 'A', street: 'B', postcode: 'B', town: 'A' });
      assert.deepEqual(proof.answer.matches, stored.matches);
      assert.equal(proof.answer.taxauth_id, stored.taxauth_id);
      assert.equal(proof.answer.authority_time, JSON.parse(stored.taxauth.response).anfrageZeitpunkt);
      assert.equal(proof.answer.consultation_number, null);
      assert.equal(proof.times.answered_at, original.data.confirmed_at);
      assert.equal(proof.times.stored_at, stored.created_at);
      assert.equal(proof.times.kept_until, stored.retain_until);
      // The request id is a UUID v7: its time is when the request came in, before it was stored.
      assert.ok(proof.times.received_at <= proof.times.stored_at);
      assert.deepEqual(proof.record, { algorithm: 'sha256', hash: stored.evidence.hash, hash_matches: true });
      assert.deepEqual(proof.chain, { seq: 1, prev_hash: '0'.repeat(64) });
      assert.equal(proof.chain.seq, stored.evidence.seq);

      const secondStored = (await json(`/v1/confirmations/${second.id}`)).json().data;
      assert.equal(proof.signed_head.seq, 2);
      assert.equal(proof.signed_head.hash, secondStored.evidence.hash);
      assert.equal(typeof proof.signed_head.signature, 'string');
      assert.equal(proof.signed_head.signature_valid, true);
      assert.equal(proof.signed_head.public_key, publicPem);
      assert.deepEqual(proof.timestamp, timestamps.tokens[0]);
      assert.ok(proof.verification.some((step: string) => step.includes('export-token --seq 1')));
      // A token is checked against the authority's roots, never against those it carries.
      const steps = proof.verification.join('\n');
      assert.match(steps, /evidence verify .*--tsa-roots <Wurzelzertifikate des Zeitstempeldienstes>/);
      assert.match(steps, /export-token --seq 1 --tsa-roots <Wurzelzertifikate des Zeitstempeldienstes>/);
    });

    it('links the next confirmation to the one before and says when no time-stamp token covers it', async () => {
      const [first, second] = confirmations;
      assert.ok(first && second);
      const firstHash = (await json(`/v1/confirmations/${first.id}`)).json().data.evidence.hash;
      const proof = (await json(`/v1/confirmations/${second.id}/proof?lang=en`)).json().data;
      assert.equal(proof.language, 'en');
      assert.deepEqual(proof.chain, { seq: 2, prev_hash: firstHash });
      assert.deepEqual(proof.answer.matches, { name: 'A', street: 'A', postcode: 'A', town: 'A' });
      assert.equal(proof.answer.qualified, true);
      assert.equal(proof.answer.status_text, 'The requested VAT number is valid at the time of the request.');
      assert.equal(proof.timestamp, null);
    });

    it('picks the language: ?lang= first, then Accept-Language, then the requester country', async () => {
      const [first] = confirmations;
      assert.ok(first);
      const url = `/v1/confirmations/${first.id}/proof`;
      assert.equal((await json(url, key, { 'accept-language': '*' })).json().data.language, 'de');
      assert.equal(
        (await json(url, key, { 'accept-language': 'en-GB,en;q=0.8' })).json().data.language,
        'en',
      );
      assert.equal(
        (await json(url, key, { 'accept-language': 'fr-FR, en;q=0.5' })).json().data.language,
        'en',
      );
      assert.equal(
        (await json(`${url}?lang=de`, key, { 'accept-language': 'en' })).json().data.language,
        'de',
      );
    });

    it('serves a PDF without scripts, in German for a German requester and in English on request', async (context) => {
      const [first] = confirmations;
      assert.ok(first);
      const stored = (await json(`/v1/confirmations/${first.id}`)).json().data;
      for (const lang of ['de', 'en'] as const) {
        const res = await get(`/v1/confirmations/${first.id}/proof${lang === 'en' ? '?lang=en' : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], 'application/pdf');
        assert.equal(
          res.headers['content-disposition'],
          `inline; filename="confirmation-${first.id}-${lang}.pdf"`,
        );
        const pdf = res.rawPayload;
        assertNoScript(pdf);
        if (poppler) {
          context.diagnostic(poppler);
          continue;
        }
        const text = pdfText(pdf);
        for (const expected of [
          REQUESTER,
          'ATU88881111',
          'taxauth-0000',
          stored.evidence.hash,
          stored.taxauth_id,
          first.id,
          'Musterstraße 22',
          'Łódź Spółka z o.o. ΔΟΚΙΜΗ',
          'Wörgl',
          'https://tsa.example/tsr',
        ]) {
          assert.ok(text.includes(expected), `${lang}: the text holds ${expected}`);
        }
        const words =
          lang === 'de'
            ? ['Antwort der Behörde', 'stimmt nicht überein', 'Position in der Kette (seq)', 'Seite 1 von']
            : ['What the authority answered', 'does not match', 'Position in the chain (seq)', 'Page 1 of'];
        for (const word of words) assert.ok(text.includes(word), `${lang}: the text holds "${word}"`);
        assert.match(
          text,
          lang === 'de' ? /Position in der Kette \(seq\)\s+1\n/ : /Position in the chain \(seq\)\s+1\n/,
        );
        assert.equal(
          text.includes(lang === 'de' ? 'What the authority answered' : 'Antwort der Behörde'),
          false,
        );

        const prefix = `/tmp/proof-${target.name}-confirmation-${lang}`;
        for (const old of pngs(prefix)) rmSync(old);
        renderPages(pdf, prefix);
        const pages = pngs(prefix);
        assert.ok(pages.length >= 1, 'at least one page rendered');
        for (const page of pages)
          assert.ok(existsSync(page) && statSync(page).size > 5_000, `${page} has content`);
      }
    });

    it('answers 404 for another account, the other mode and unknown ids; 400 for a malformed id or language', async () => {
      const [first] = confirmations;
      assert.ok(first);
      for (const as of [otherAccount, otherMode]) {
        for (const accept of ['application/json', 'application/pdf']) {
          const res = await get(`/v1/confirmations/${first.id}/proof`, as, { accept });
          assert.equal(res.statusCode, 404, res.body);
          assert.equal(res.json().error.code, 'not_found');
          assert.equal((await get(`/v1/confirmations/${first.id}`, as)).statusCode, 404);
        }
      }
      const unknown = await get('/v1/confirmations/0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b/proof');
      const message = 'No confirmation with this id for this account.';
      assertErrorBody(unknown, 404, { code: 'not_found', message });
      assertErrorBody(await get(`/v1/confirmations/${first.id}/proof`, otherMode), 404, {
        code: 'not_found',
        message,
      });
      const malformed = await get('/v1/confirmations/not-a-uuid/proof');
      assert.equal(malformed.statusCode, 400);
      assert.equal(malformed.json().error.code, 'invalid_format');
      assert.match(malformed.json().error.message, /id/);
      const language = await get(`/v1/confirmations/${first.id}/proof?lang=fr`);
      assert.equal(language.statusCode, 400);
      assert.match(language.json().error.message, /lang/);
    });

    it("gives the proof of a validation's audit record with its consultation number", async (context) => {
      const validation = await get('/v1/validate?vat_number=DE136695976&requester_vat_number=FR40303265045');
      assert.equal(validation.statusCode, 200, validation.body);
      const answer = validation.json();
      assert.ok(answer.data.verify_id);
      const requestId = answer.meta.request_id;
      const audit = (await json(`/v1/audits/${requestId}`)).json().data;

      const proof = (await json(`/v1/audits/${requestId}/proof`)).json().data;
      assert.equal(proof.kind, 'validation');
      assert.equal(proof.id, requestId);
      assert.equal(proof.language, 'en');
      assert.deepEqual(proof.asked, {
        requester_vat_number: 'FR40303265045',
        vat_number: 'DE136695976',
        company: null,
      });
      assert.equal(proof.answer.source, answer.meta.source);
      assert.equal(proof.answer.valid, answer.data.valid);
      assert.equal(proof.answer.consultation_number, answer.data.verify_id);
      assert.equal(proof.answer.matches, null);
      assert.equal(proof.times.answered_at, answer.data.verified_at);
      assert.equal(proof.times.stored_at, audit.created_at);
      assert.equal(proof.times.kept_until, audit.expires_at);
      // The stored response is byte for byte what the client got.
      assert.equal(proof.record.hash, createHash('sha256').update(validation.body).digest('hex'));
      assert.equal(proof.chain, null);
      assert.equal(proof.signed_head, null);
      assert.equal(proof.timestamp, null);

      const german = await get('/v1/validate?vat_number=FR40303265045&requester_vat_number=DE136695976');
      const germanId = german.json().meta.request_id;
      assert.equal((await json(`/v1/audits/${germanId}/proof`)).json().data.language, 'de');

      const pdf = await get(`/v1/audits/${requestId}/proof`);
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assertNoScript(pdf.rawPayload);
      if (poppler) {
        context.diagnostic(poppler);
        return;
      }
      const text = pdfText(pdf.rawPayload);
      for (const expected of [
        'FR40303265045',
        'DE136695976',
        answer.data.verify_id,
        proof.record.hash,
        'Consultation number',
      ]) {
        assert.ok(text.includes(expected), `the text holds ${expected}`);
      }
      const germanText = pdfText((await get(`/v1/audits/${germanId}/proof`)).rawPayload);
      assert.ok(germanText.includes('Abfragenummer'));
      for (const [name, body] of [
        ['en', pdf.rawPayload],
        ['de', (await get(`/v1/audits/${germanId}/proof`)).rawPayload],
      ] as const) {
        const prefix = `/tmp/proof-${target.name}-validation-${name}`;
        for (const old of pngs(prefix)) rmSync(old);
        renderPages(body, prefix);
        assert.ok(pngs(prefix).length >= 1);
      }
    });

    it('answers 404 for an audit record without a consultation number, of a confirmation, or of another key', async () => {
      const plain = (await get('/v1/validate?vat_number=DE136695976')).json().meta.request_id;
      const res = await get(`/v1/audits/${plain}/proof`);
      assert.equal(res.statusCode, 404);
      assert.match(res.json().error.message, /consultation number/);

      const confirmAudit = JSON.parse(confirmations[0]?.body ?? '{}').meta.request_id;
      const confirm = await get(`/v1/audits/${confirmAudit}/proof`);
      assert.equal(confirm.statusCode, 404);
      assert.match(confirm.json().error.message, /\/v1\/confirmations\//);

      const withNumber = (
        await get('/v1/validate?vat_number=DE136695976&requester_vat_number=FR40303265045')
      ).json().meta.request_id;
      const noAudit = { code: 'not_found', message: 'No audit record with this request_id for this key.' };
      assertErrorBody(await get(`/v1/audits/${withNumber}/proof`, otherAccount), 404, noAudit);
      assertErrorBody(await get('/v1/audits/0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b/proof'), 404, noAudit);
      assert.equal((await get('/v1/audits/nope/proof')).statusCode, 400);
    });

    it('says so when a stored confirmation no longer matches its hash', async (context) => {
      const second = confirmations[1];
      assert.ok(second);
      await db.kysely
        .updateTable('confirmations')
        .set({ vat_number: 'ATU99999999' })
        .where('id', '=', second.id)
        .execute();
      const proof = (await json(`/v1/confirmations/${second.id}/proof`)).json().data;
      assert.equal(proof.asked.vat_number, 'ATU99999999');
      assert.equal(proof.record.hash_matches, false);
      if (poppler) {
        context.diagnostic(poppler);
        return;
      }
      const text = pdfText((await get(`/v1/confirmations/${second.id}/proof`)).rawPayload);
      assert.match(text, /Hash neu berechnet\s+STIMMT NICHT ÜBEREIN/);
    });
  });
}
