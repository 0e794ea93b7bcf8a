import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { checkUrlSyntax, isPublicAddress } from '../../src/modules/webhooks/url-guard.js';
import { verifyWebhook, webhookSignature } from '../../src/modules/webhooks/verify.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BODY =
  '{"event":"validation.completed","created_at":"2026-11-22T10:00:00.000Z","data":{"data":{},"meta":{}}}';
const NOW = new Date('2026-11-22T10:00:00.000Z');
const TS = Math.floor(NOW.getTime() / 1000);

function headers(timestamp: number | string = TS, body = BODY, secret = SECRET) {
  return {
    'content-type': 'application/json',
    'service-event': 'validation.completed',
    'service-timestamp': String(timestamp),
    'service-signature': webhookSignature(secret, timestamp, body),
    'service-delivery-id': '0190b6a5-0000-7000-8000-000000000000',
  };
}

describe('verifyWebhook', () => {
  it('signs HMAC-SHA256 over "{timestamp}.{body}" keyed with the whole secret string, as lowercase hex', () => {
    const expected = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${TS}.${BODY}`).digest('hex');
    assert.equal(webhookSignature(SECRET, TS, BODY), `sha256=${expected}`);
  });

  it('accepts a valid delivery and returns the parsed event (Node headers, any case, or fetch Headers)', () => {
    const ok = verifyWebhook({ secret: SECRET, headers: headers(), rawBody: BODY, now: NOW });
    assert.deepEqual(ok, { ok: true, event: JSON.parse(BODY) });
    const upper = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(
      verifyWebhook({ secret: SECRET, headers: upper, rawBody: Buffer.from(BODY), now: NOW }).ok,
      true,
    );
    assert.equal(
      verifyWebhook({ secret: SECRET, headers: new Headers(headers()), rawBody: BODY, now: NOW }).ok,
      true,
    );
  });

  it('rejects a changed body, a wrong secret, a forged or malformed signature', () => {
    const wrong = [
      verifyWebhook({ secret: SECRET, headers: headers(), rawBody: `${BODY} `, now: NOW }),
      verifyWebhook({ secret: `${SECRET}x`, headers: headers(), rawBody: BODY, now: NOW }),
      verifyWebhook({
        secret: SECRET,
        headers: { ...headers(), 'service-signature': `sha256=${'0'.repeat(64)}` },
        rawBody: BODY,
        now: NOW,
      }),
      verifyWebhook({
        secret: SECRET,
        headers: { ...headers(), 'service-signature': webhookSignature(SECRET, TS, BODY).toUpperCase() },
        rawBody: BODY,
        now: NOW,
      }),
      verifyWebhook({
        secret: SECRET,
        headers: { ...headers(), 'service-signature': 'sha256=' },
        rawBody: BODY,
        now: NOW,
      }),
    ];
    for (const result of wrong) assert.deepEqual(result, { ok: false, reason: 'invalid_signature' });
  });

  it('rejects a timestamp older than 300 s or too far in the future, and a re-signed old timestamp still fails', () => {
    assert.equal(
      verifyWebhook({ secret: SECRET, headers: headers(TS - 300), rawBody: BODY, now: NOW }).ok,
      true,
    );
    assert.deepEqual(verifyWebhook({ secret: SECRET, headers: headers(TS - 301), rawBody: BODY, now: NOW }), {
      ok: false,
      reason: 'timestamp_too_old',
    });
    assert.deepEqual(verifyWebhook({ secret: SECRET, headers: headers(TS + 301), rawBody: BODY, now: NOW }), {
      ok: false,
      reason: 'timestamp_in_future',
    });
    // A valid old delivery replayed with a fresh timestamp header no longer matches its signature.
    const replayed = { ...headers(TS - 1_000), 'service-timestamp': String(TS) };
    assert.deepEqual(verifyWebhook({ secret: SECRET, headers: replayed, rawBody: BODY, now: NOW }), {
      ok: false,
      reason: 'invalid_signature',
    });
    assert.equal(
      verifyWebhook({
        secret: SECRET,
        headers: headers(TS - 1_000),
        rawBody: BODY,
        now: NOW,
        toleranceSeconds: 1_000,
      }).ok,
      true,
    );
  });

  it('rejects missing headers, a timestamp in milliseconds or not a number, and a body that is not an event', () => {
    const { 'service-signature': _s, ...noSignature } = headers();
    assert.deepEqual(verifyWebhook({ secret: SECRET, headers: noSignature, rawBody: BODY, now: NOW }), {
      ok: false,
      reason: 'missing_header',
    });
    assert.deepEqual(
      verifyWebhook({ secret: SECRET, headers: headers(NOW.getTime()), rawBody: BODY, now: NOW }).ok,
      false,
    );
    assert.deepEqual(verifyWebhook({ secret: SECRET, headers: headers('12a'), rawBody: BODY, now: NOW }), {
      ok: false,
      reason: 'invalid_timestamp',
    });
    assert.deepEqual(
      verifyWebhook({ secret: SECRET, headers: headers(TS, '[1]'), rawBody: '[1]', now: NOW }),
      {
        ok: false,
        reason: 'invalid_body',
      },
    );
  });
});

describe('webhook address rules', () => {
  it('allows public unicast addresses only', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34']) {
      assert.equal(isPublicAddress(address), true, address);
    }
    const refused = [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '240.0.0.1',
      '192.0.2.1',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::127.0.0.1',
      '::7f00:1',
      '::a9fe:a9fe',
      '::a00:1',
      '::8.8.8.8',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'ff02::1',
      '2001:db8::1',
      '64:ff9b::a00:1',
      '2002:7f00:1::1',
      'not-an-ip',
    ];
    for (const address of refused) assert.equal(isPublicAddress(address), false, address);
    assert.equal(isPublicAddress('172.32.0.1'), true, 'just outside 172.16/12');
  });

  it('accepts https URLs, and http only when private targets are allowed', () => {
    assert.equal(checkUrlSyntax('https://hooks.example.com/a?b=1', false).ok, true);
    assert.equal(checkUrlSyntax('http://hooks.example.com/', false).ok, false);
    assert.equal(checkUrlSyntax('http://127.0.0.1:3000/', true).ok, true);
    assert.equal(checkUrlSyntax('file:///etc/passwd', true).ok, false);
    assert.equal(checkUrlSyntax('https://u:p@hooks.example.com/', false).ok, false);
    const portZero = checkUrlSyntax('https://hooks.example.com:0/x', false);
    assert.match(portZero.ok ? '' : portZero.reason, /port 0/);
    assert.equal(checkUrlSyntax('https://hooks.example.com:8443/x', false).ok, true);
    for (const bad of [
      'https://hooks.example.com/a b',
      'https://hooks.example.com/a"><img src=x>',
      'https://hooks.example.com/\tx',
      'https://hooks.example.com/x\n',
      'https://hooks.example.com/{id}',
      'https://hooks.example.com/a|b',
      ' https://hooks.example.com/',
    ]) {
      const check = checkUrlSyntax(bad, false);
      assert.equal(check.ok, false, JSON.stringify(bad));
      assert.match(check.ok ? '' : check.reason, /percent-encode/);
    }
    assert.equal(checkUrlSyntax('https://hooks.example.com/a%20b?x=%22', false).ok, true);
    assert.equal(checkUrlSyntax('https://bücher.example/hook', false).ok, true, 'an internationalised name');
    const mapped = checkUrlSyntax('https://[::ffff:127.0.0.1]/', false);
    assert.ok(mapped.ok);
    assert.equal(isPublicAddress(mapped.hostname), false);
  });
});
