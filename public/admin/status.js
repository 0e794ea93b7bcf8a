// Registry status: breakers, in-flight calls and the rates sync, from GET /admin/v1/status.

import { $, add, api, facts, row, show, when } from './lib.js';

const REGISTRY_NAMES = { vies: 'VIES', hmrc: 'HMRC', bfs: 'Swiss UID', brreg: 'Brønnøysund', evatr: 'eVatR' };

export async function loadStatus() {
  try {
    const { data } = await api('GET', '/admin/v1/status');
    const { shared, instances, registries, rates } = data;
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
    facts($('rates-facts'), [
      ['Sync', rates.enabled ? 'daily, from TEDB' : 'off'],
      ['Last run', when(rates.last_run_at)],
      ['Last success', when(rates.last_success_at)],
      ['Last error', rates.last_error],
      ['Next run', when(rates.next_run_at)],
      ['Changes held', String(rates.held)],
    ]);
    show($('registry-error'), null);
  } catch (error) {
    show($('registry-error'), `Registry status unavailable: ${error.message}`);
  }
}
