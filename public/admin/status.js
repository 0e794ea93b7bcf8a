// Registry status: breakers, in-flight calls and the rates sync, from GET /admin/v1/status.

import { $, api, facts, show, when } from './lib.js';
import { renderRegistries } from './shared/registry-status.js';

export async function loadStatus() {
  try {
    const { data } = await api('GET', '/admin/v1/status');
    renderRegistries(data);
    const { rates } = data;
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
