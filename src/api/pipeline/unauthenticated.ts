/**
 * Requests without a valid key (missing, malformed, unknown, revoked) are
 * rate-limited per client address, so key guessing and floods of bad
 * requests cost the attacker, not the database (docs/api-pipeline.md).
 *
 * - Counted in memory, per process: a refused request costs no query, which
 *   is the point (a PostgreSQL counter would make every guess a write).
 *   Several API processes each allow the limit.
 * - Fixed one-minute window per address, opened by its first 401. Only
 *   failures count: a client with a valid key is never slowed by this.
 * - Over the limit, every request from that address is refused with 429
 *   `RATE_LIMIT_EXCEEDED` and `Retry-After` before its key is looked up (a
 *   guess must not reach the database), until the window closes. Clients
 *   sharing an address with an attacker (NAT) wait with it; the limit
 *   (UNAUTHENTICATED_REQUESTS_PER_MINUTE, default 60) is far above what a
 *   misconfigured honest client produces before noticing its 401s.
 * - The address is the TCP peer (express `req.ip`; no proxy headers are
 *   trusted). At most MAX_ADDRESSES windows are kept; beyond, the oldest go.
 */
import type { Request, Response } from 'express';
import { DomainError } from '../../shared/errors.ts';
import { WINDOW_MS } from './ratelimit.ts';

const MAX_ADDRESSES = 100_000;

export class UnauthenticatedLimiter {
  private readonly windows = new Map<string, { failures: number; closesAt: number }>();

  constructor(readonly perMinute: number) {}

  private address(req: Request): string {
    return req.ip ?? req.socket.remoteAddress ?? 'unknown';
  }

  /** Throws 429 when this address has used up its failures for the window. */
  check(req: Request, res: Response, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    const w = this.windows.get(this.address(req));
    if (!w || w.closesAt <= now || w.failures < this.perMinute) return;
    const retryAfter = Math.max(1, Math.ceil((w.closesAt - now) / 1000));
    res.setHeader('Retry-After', String(retryAfter));
    throw new DomainError(
      'RATE_LIMIT_EXCEEDED',
      `Too many requests without a valid API key from this address (limit ${this.perMinute} per minute). Retry in ${retryAfter} s.`,
    );
  }

  /** Counts a request that failed authentication. */
  failed(req: Request, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    const address = this.address(req);
    const w = this.windows.get(address);
    if (w && w.closesAt > now) {
      w.failures++;
      return;
    }
    this.windows.delete(address); // re-inserted last: the Map's order is the windows' age
    this.windows.set(address, { failures: 1, closesAt: now + WINDOW_MS });
    if (this.windows.size > MAX_ADDRESSES) {
      for (const [key, v] of this.windows) {
        if (this.windows.size <= MAX_ADDRESSES && v.closesAt > now) break;
        this.windows.delete(key);
      }
    }
  }
}
