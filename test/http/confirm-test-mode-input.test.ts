import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEvatrClient } from '../../src/registries/evatr.js';
import { createEvatrSimulator } from '../../src/simulators/evatr.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { type RunningServer, startSimulator } from '../integration/evatr/helpers.js';

const REQUESTER = 'DE136695976';
const COMPANY = { name: 'Beispiel GmbH', town: 'Wien' };

/**
 * Test mode validates input exactly like live mode: a number the authority refuses (live keys go to
 * the eVatR simulator) is refused with the same status and code for a test key, and nothing is stored.
 */
describe('POST /v1/confirm: test keys refuse what live keys refuse', () => {
  let t: TestApp;
  let server: RunningServer;
  let live: TestKey;
  let test: TestKey;

  before(async () => {
    server = await startSimulator(createEvatrSimulator());
    t = await buildTestApp(
      { OPENVAT_CONFIRM_BURST: '1000', OPENVAT_PLAYGROUND: 'false' },
      { evatr: createEvatrClient({ baseUrl: `${server.url}/evatr/app`, timeoutMs: 5_000 }) },
    );
    live = await t.key('business', 'live', { defaultRequesterVat: REQUESTER });
    test = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
  });
  after(async () => {
    await t.close();
    await server.close();
  });

  async function stored(): Promise<number> {
    const row = await t.container.db.kysely
      .selectFrom('confirmations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  for (const vat of [
    '../../etc/passwd',
    'US123456789',
    'XX123',
    'ATU1234',
    'FR1',
    'NL123456789',
    'GB123456789',
  ]) {
    it(`${vat}: the same refusal for both modes, nothing stored`, async () => {
      const answers = [];
      for (const key of [live, test]) {
        const before = await stored();
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: key.headers,
          payload: { vat_number: vat, company: COMPANY },
        });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${key.id}: ${res.statusCode} ${res.body}`);
        const body = res.json() as { error: { code: string; message: string } };
        assert.equal(typeof body.error.message, 'string');
        answers.push({ status: res.statusCode, code: body.error.code });
        assert.equal(await stored(), before, 'nothing is stored for a refused number');
      }
      assert.deepEqual(answers[1], answers[0], 'the test key is answered as the live key');
    });
  }

  it('a well-formed number is still confirmed in test mode', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/confirm',
      headers: test.headers,
      payload: { vat_number: 'ATU12345678', company: COMPANY },
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});
