/** The limits of API keys by plan: requests a minute, and the monthly quota (none when unset). */
import { type Env, int, optionalInt } from './readers.js';
import type { Config } from './types.js';

export function keyRateLimits(env: Env): Config['keyRateLimitPerMinute'] {
  return {
    free: int(env, 'OPENVAT_RATE_LIMIT_FREE', 60, 1, 100_000_000),
    starter: int(env, 'OPENVAT_RATE_LIMIT_STARTER', 600, 1, 100_000_000),
    pro: int(env, 'OPENVAT_RATE_LIMIT_PRO', 3_000, 1, 100_000_000),
    business: int(env, 'OPENVAT_RATE_LIMIT_BUSINESS', 12_000, 1, 100_000_000),
  };
}

export function keyMonthlyQuotas(env: Env): Config['keyMonthlyQuota'] {
  return {
    free: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_FREE', 0, 1_000_000_000_000),
    starter: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_STARTER', 0, 1_000_000_000_000),
    pro: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_PRO', 0, 1_000_000_000_000),
    business: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_BUSINESS', 0, 1_000_000_000_000),
  };
}
