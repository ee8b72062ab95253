/**
 * Step 5 (docs/api-decisions.md "Keys, plans and quotas"): a fixed one-minute window per key, counted in
 * PostgreSQL so every API process shares the counters. The window opens with
 * a key's first request and closes 60 s later.
 *
 * The count is taken by the authentication statement itself (COUNT_REQUEST is
 * a CTE of it): one round trip for both, instead of a limiter of its own
 * with a round trip per request (the history and figures are in
 * docs/performance.md, "API pipeline"). The upsert is the classic
 * fixed-window rule.
 *
 * The point is taken right after authentication, so the later 400/403
 * answers carry the X-RateLimit-* headers too (and count: a client looping on
 * a forbidden call is throttled as well); the 429 itself is raised at its
 * place in the order of checks, after the scope check.
 */
import type { Response } from 'express';
import { DomainError } from '../../shared/errors.ts';

export const WINDOW_MS = 60_000;

/**
 * Counts one request of the key found by the `caller` CTE; $2 is now in ms.
 * The table is UNLOGGED (migration 0008): a lost count only opens a new window.
 */
export const COUNT_REQUEST = `
    insert into rate_limits as r (key, points, expire)
    select 'rl:' || caller.id, 1, $2::bigint + ${WINDOW_MS} from caller
    on conflict (key) do update set
      points = case when r.expire <= $2::bigint then 1 else r.points + 1 end,
      expire = case when r.expire <= $2::bigint then excluded.expire else r.expire end
    returning r.points, r.expire`;

export interface RateWindow {
  /** Requests counted in the current window, this one included. */
  used: number;
  /** Unix ms at which the window closes. */
  closesAt: number;
}

export function windowOf(points: number | null, expire: string | number | null): RateWindow {
  return { used: Number(points ?? 1), closesAt: Number(expire ?? Date.now() + WINDOW_MS) };
}

export interface RateLimitResult {
  limit: number;
  remaining: number;
  /** Unix seconds at which the window closes. */
  reset: number;
  exceeded: boolean;
  retryAfter: number;
}

export function rateLimitOf(window: RateWindow, limit: number, now = Date.now()): RateLimitResult {
  const ms = Math.max(0, window.closesAt - now);
  return {
    limit,
    remaining: Math.max(0, limit - window.used),
    reset: Math.ceil(window.closesAt / 1000),
    exceeded: limit > 0 && window.used > limit,
    retryAfter: Math.max(1, Math.ceil(ms / 1000)),
  };
}

export function setRateLimitHeaders(res: Response, r: RateLimitResult): void {
  res.setHeader('X-RateLimit-Limit', String(r.limit));
  res.setHeader('X-RateLimit-Remaining', String(r.remaining));
  res.setHeader('X-RateLimit-Reset', String(r.reset));
}

export function enforceRateLimit(res: Response, r: RateLimitResult): void {
  if (!r.exceeded) return;
  res.setHeader('Retry-After', String(r.retryAfter));
  throw new DomainError('RATE_LIMIT_EXCEEDED', `Rate limit of ${r.limit} requests per minute exceeded. Retry in ${r.retryAfter} s.`);
}
