import type { MonitorChangesTable, MonitorChecksTable, MonitorsTable } from '../../db/schema.js';
import { parseVatNumber } from '../vat-numbers/index.js';
import { type MonitorPeppolView, monitorPeppolView } from './peppol.js';
import type { Interval } from './schedule.js';

export type MonitorStatus = 'valid' | 'invalid' | 'unknown';
export type ChangeType =
  | 'became_invalid'
  | 'became_valid'
  | 'name_changed'
  | 'address_changed'
  | 'peppol_changed';
export type CheckTrigger = 'created' | 'scheduled' | 'manual';

export interface Company {
  name: string | null;
  address: string | null;
}

export interface MonitorView {
  id: string;
  vat_number: string;
  country_code: string;
  interval: Interval;
  reference: string | null;
  metadata: Record<string, unknown> | null;
  status: MonitorStatus;
  stale: boolean;
  company: Company | null;
  source: string | null;
  last_checked_at: string | null;
  last_attempt_at: string | null;
  failing_since: string | null;
  last_error: string | null;
  last_change_at: string | null;
  next_check_at: string;
  created_at: string;
  /** The Peppol reachability of a monitor with `"peppol": true`; null for the others. */
  peppol: MonitorPeppolView | null;
}

export interface CheckView {
  id: string;
  trigger: CheckTrigger;
  outcome: 'valid' | 'invalid' | 'unavailable';
  source: string | null;
  source_status: string | null;
  company: Company | null;
  error: string | null;
  /** The check's audit record (`GET /v1/audits/{request_id}`) when an answer was obtained. */
  request_id: string | null;
  checked_at: string;
}

export interface ChangeView {
  id: string;
  type: ChangeType;
  before: string | null;
  after: string | null;
  check_id: string;
  detected_at: string;
}

export interface CheckResult {
  monitor: MonitorView;
  check: CheckView;
  changes: ChangeView[];
}

function companyOf(name: string | null, address: string | null): Company | null {
  return name === null && address === null ? null : { name, address };
}

export function monitorView(row: MonitorsTable): MonitorView {
  const parsed = parseVatNumber(row.vat_number);
  return {
    id: row.id,
    vat_number: row.vat_number,
    country_code: parsed.ok ? parsed.isoCountry : row.country,
    interval: row.interval as Interval,
    reference: row.reference,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    status: row.status as MonitorStatus,
    stale: row.stale === 1,
    company: companyOf(row.name, row.address),
    source: row.source,
    last_checked_at: row.last_checked_at,
    last_attempt_at: row.last_attempt_at,
    failing_since: row.failing_since,
    last_error: row.last_error,
    last_change_at: row.last_change_at,
    next_check_at: row.next_check_at,
    created_at: row.created_at,
    peppol: monitorPeppolView(row),
  };
}

export function checkView(row: MonitorChecksTable): CheckView {
  return {
    id: row.id,
    trigger: row.trigger as CheckTrigger,
    outcome: row.outcome as CheckView['outcome'],
    source: row.source,
    source_status: row.source_status,
    company: companyOf(row.name, row.address),
    error: row.error,
    request_id: row.request_id,
    checked_at: row.checked_at,
  };
}

export function changeView(row: MonitorChangesTable): ChangeView {
  return {
    id: row.id,
    type: row.kind as ChangeType,
    before: row.before,
    after: row.after,
    check_id: row.check_id,
    detected_at: row.detected_at,
  };
}
