/**
 * Step 5 (CONTRACT section 8): a fixed one-minute window per key, counted in
 * PostgreSQL by rate-limiter-flexible (RateLimiterPostgres, one atomic upsert
 * per request) so every API process shares the same counters. The window
 * opens with a key's first request and closes 60 s later.
 *
 * The point is taken right after authentication, so the later 400/403
 * answers carry the X-RateLimit-* headers too (and count: a client looping on
 * a forbidden call is throttled as well); the 429 itself is raised at its
 * place in the order of checks, after the scope check.
 */
import type { Response } from 'express';
import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError } from '../../shared/errors.ts';

const WINDOW_SECONDS = 60;

export interface RateLimitResult {
  limit: number;
  remaining: number;
  /** Unix seconds at which the window closes. */
  reset: number;
  exceeded: boolean;
  retryAfter: number;
}

export class RateLimits {
  // One limiter per limit value; they share one table and one key space, so a
  // plan change mid-window keeps the count.
  private readonly limiters = new Map<number, RateLimiterPostgres>();

  constructor(private readonly pool: pg.Pool) {}

  private limiter(points: number): RateLimiterPostgres {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true, // migration 0003
        keyPrefix: 'rl',
        points,
        duration: WINDOW_SECONDS,
      });
      this.limiters.set(points, limiter);
    }
    return limiter;
  }

  async consume(keyId: string, limit: number): Promise<RateLimitResult> {
    const now = Date.now();
    if (limit <= 0) return { limit: 0, remaining: 0, reset: Math.ceil(now / 1000), exceeded: false, retryAfter: 0 };
    let res: RateLimiterRes;
    let exceeded = false;
    try {
      res = await this.limiter(limit).consume(keyId, 1);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err; // a database error, not a refusal
      res = err;
      exceeded = true;
    }
    const ms = Math.max(0, res.msBeforeNext);
    return {
      limit,
      remaining: Math.max(0, res.remainingPoints),
      reset: Math.ceil((now + ms) / 1000),
      exceeded,
      retryAfter: Math.max(1, Math.ceil(ms / 1000)),
    };
  }
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
