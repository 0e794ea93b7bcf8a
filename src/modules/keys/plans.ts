export const PLANS = ['free', 'starter', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

export const MODES = ['live', 'test'] as const;
export type Mode = (typeof MODES)[number];

/** Operations gated by plan. Rates, health and docs are public and not listed. */
export type Operation =
  | 'validate'
  | 'decide'
  | 'batch'
  | 'webhooks'
  | 'confirm'
  | 'audits'
  | 'usage'
  | 'monitors'
  | 'peppol';

const INCLUDED: Record<Operation, readonly Plan[]> = {
  validate: ['free', 'starter', 'pro', 'business'],
  // Audit look-ups are open to every plan; Free keys always get 404 (their records are not kept).
  audits: ['free', 'starter', 'pro', 'business'],
  usage: ['free', 'starter', 'pro', 'business'],
  peppol: ['free', 'starter', 'pro', 'business'],
  decide: ['starter', 'pro', 'business'],
  batch: ['pro', 'business'],
  webhooks: ['pro', 'business'],
  confirm: ['business'],
  monitors: ['pro', 'business'],
};

const OPERATION_NAMES: Record<Operation, string> = {
  validate: 'Validation',
  audits: 'Audit records',
  usage: 'Usage report',
  decide: 'Decide',
  batch: 'Batch validation',
  webhooks: 'Webhook management',
  confirm: 'Qualified confirmation',
  monitors: 'Monitoring',
  peppol: 'Peppol reachability',
};

export function plansFor(operation: Operation): readonly Plan[] {
  return INCLUDED[operation];
}

export function planIncludes(plan: Plan, operation: Operation): boolean {
  return INCLUDED[operation].includes(plan);
}

export function operationName(operation: Operation): string {
  return OPERATION_NAMES[operation];
}

/** Days an audit record is kept, by plan; `null` = not kept (Free). */
export const AUDIT_RETENTION_DAYS: Record<Plan, number | null> = {
  free: null,
  starter: 7,
  pro: 30,
  business: 90,
};

/**
 * Batch jobs a key may have unfinished (queued or running) at a time, by plan; `null` = no batch jobs
 * (the plan has no batch validation: 402).
 */
export const UNFINISHED_BATCH_JOBS: Record<Plan, number | null> = {
  free: null,
  starter: null,
  pro: 10,
  business: 25,
};

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

export function isMode(value: string): value is Mode {
  return (MODES as readonly string[]).includes(value);
}
