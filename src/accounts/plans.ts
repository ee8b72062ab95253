/**
 * Plan limits (docs/api-decisions.md "Keys, plans and quotas"). `null` means unlimited. Starter has no
 * API access: every API call of a starter account answers
 * API_TIER_NOT_SUPPORTED, and no key can be created for it.
 */

export type Plan = 'starter' | 'professional' | 'fiduciaire';
export const PLANS: readonly Plan[] = ['starter', 'professional', 'fiduciaire'];

export interface PlanLimits {
  api: boolean;
  /** Requests per minute per API key (fixed one-minute window). */
  requestsPerMinute: number;
  /** Active organization keys per organization (account keys do not count). */
  apiKeysLimit: number | null;
  /** Organizations an account may own. */
  entityCap: number;
  /** Recurring schedules that are active or paused, per organization. */
  recurringSchedulesLimit: number;
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  starter: { api: false, requestsPerMinute: 0, apiKeysLimit: 0, entityCap: 1, recurringSchedulesLimit: 0 },
  professional: { api: true, requestsPerMinute: 120, apiKeysLimit: 10, entityCap: 3, recurringSchedulesLimit: 50 },
  fiduciaire: { api: true, requestsPerMinute: 300, apiKeysLimit: null, entityCap: 50, recurringSchedulesLimit: 500 },
};

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

/** The rate limit of an account: its operator override, else its plan's. */
export function requestsPerMinute(plan: Plan, override: number | null | undefined): number {
  return override ?? PLAN_LIMITS[plan].requestsPerMinute;
}
