import {
  createKey,
  load,
  loadBare,
  ratioOf,
  startService,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';

async function measure(url: string, headers: Record<string, string>, duration: number) {
  const sample = await fetch(url, { headers });
  if (!sample.ok) throw new Error(`${url}: ${sample.status} ${await sample.text()}`);
  const body = await sample.text();
  await warm(url, headers);
  const service = await load(url, { connections: 50, duration, headers });
  return {
    service,
    body,
    contentType: sample.headers.get('content-type') ?? 'application/json',
    requestId: sample.headers.get('service-request-id') ?? '',
  };
}

/** `GET /v1/validate` with a test key (test mode: no registry) against the bare `node:http` baseline. */
export async function benchValidateTestMode(duration = 10) {
  const service = await startService();
  let measured: Awaited<ReturnType<typeof measure>>;
  try {
    const key = createKey(service.dataDir, 'business', 'test');
    measured = await measure(
      `${service.url}/v1/validate?vat_number=FR40303265045`,
      { authorization: `Bearer ${key}` },
      duration,
    );
  } finally {
    await service.stop();
  }
  const baseline = await loadBare(
    measured.body,
    { 'content-type': measured.contentType, 'service-request-id': measured.requestId },
    duration,
  );
  const ratio = ratioOf(measured.service, baseline);
  const result = {
    benchmark: 'GET /v1/validate with a test key vs bare node:http with the same bytes',
    command: 'npm run bench -- validate-test',
    date: today(),
    node: process.version,
    connections: 50,
    duration_s: duration,
    service: measured.service,
    bare: baseline,
    ratio,
    note: 'Each call authenticates the key, parses and checks the number, writes its audit record and answers.',
  };
  writeResult('validate-test-mode', result);
  updatePerformanceTable(
    'validate-test',
    `| \`GET /v1/validate\`, test key (${result.date}, \`${result.command}\`) | ${measured.service.requestsPerSecond.toLocaleString('en')} req/s, p99 ${measured.service.p99} ms | bare: ${baseline.requestsPerSecond.toLocaleString('en')} req/s | **${ratio}×** |`,
  );
  return result;
}
