// The registries' status (breakers, in-flight calls, queues), as GET /v1/status and
// GET /admin/v1/status give it, into the page's #registry-summary and #registry-table.

import { $, add, row, when } from './dom.js';

const REGISTRY_NAMES = { vies: 'VIES', hmrc: 'HMRC', bfs: 'Swiss UID', brreg: 'Brønnøysund', evatr: 'eVatR' };

export function renderRegistries({ shared, instances, registries }) {
  const count = instances === null ? 'unknown' : String(instances);
  $('registry-summary').textContent =
    `${shared ? 'Limits shared through Redis' : 'Limits per instance'} · instances: ${count}` +
    (registries.length === 0 ? ' · no registry called since start' : '');
  // An empty table would show only its header: the summary line says why there is nothing yet.
  $('registry-table').hidden = registries.length === 0;
  const body = $('registry-table').tBodies[0];
  body.replaceChildren();
  for (const r of registries) {
    const tr = row([
      REGISTRY_NAMES[r.registry] ?? r.registry,
      r.country ?? '—',
      r.breaker.replace('_', '-'),
      // The limit is lower than configured while the registry throttles.
      `${r.in_flight} / ${r.concurrency_limit}`,
      String(r.queued),
      when(r.last_success_at),
      when(r.last_failure_at),
      r.retry_after_seconds === null ? '—' : `${r.retry_after_seconds} s`,
    ]);
    tr.className = `breaker-${r.breaker}`;
    for (const i of [3, 4, 7]) tr.cells[i].className = 'num';
    add(body, tr);
  }
}
