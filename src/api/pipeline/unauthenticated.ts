/**
 * Requests without a valid key (missing, malformed, unknown, revoked) are
 * rate-limited per client address, so key guessing and floods of bad
 * requests cost the attacker, not the database (docs/api-pipeline.md).
 *
 * - Counted in memory, per process: a request refused over the limit costs
 *   no query, which is the point (a PostgreSQL counter would make every guess
 *   a write). Several API processes each allow the limit.
 * - Fixed one-minute window per address, opened by its first 401. Only
 *   failures count: a client with a valid key never adds to it.
 * - Over the limit, every request from that address is refused with 429
 *   `RATE_LIMIT_EXCEEDED` and `Retry-After` before its key is looked up (a
 *   guess must not reach the database), until the window closes, except a
 *   key this process authenticated in the last 10 minutes (remembered by the
 *   hash it is stored as): behind a proxy or a NAT every client shares one
 *   address, and one flood must not stop the clients already at work. Only a
 *   client that starts meanwhile from that address waits with the flood; the
 *   limit (UNAUTHENTICATED_REQUESTS_PER_MINUTE, default 60) is far above what
 *   a misconfigured honest client produces before noticing its 401s.
 * - The address is the TCP peer (express `req.ip`; no proxy headers are
 *   trusted). At most MAX_ADDRESSES windows are kept; beyond, the oldest go.
 */
import type { Request, Response } from 'express';
import { hashSecret } from '../../accounts/keys.ts';
import { DomainError } from '../../shared/errors.ts';
import { bearerToken } from './authenticate.ts';
import { WINDOW_MS } from './ratelimit.ts';
import { keepNewest } from '../../shared/newest-first.ts';

const MAX_ADDRESSES = 100_000;
/** How long a key that authenticated passes a blocked address, and how many such keys are remembered (the oldest go). */
const KNOWN_FOR_MS = 10 * 60_000;
const MAX_KNOWN = 100_000;

/** The request's bearer secret, or null when it sends none (or several, or a malformed header). */
function secretOf(req: Request): string | null {
  try {
    return bearerToken(req);
  } catch {
    return null;
  }
}

export class UnauthenticatedLimiter {
  private readonly windows = new Map<string, { failures: number; closesAt: number }>();
  /** Hash of a key's secret -> until when it passes a blocked address. */
  private readonly known = new Map<string, number>();

  constructor(readonly perMinute: number) {}

  private address(req: Request): string {
    return req.ip ?? req.socket.remoteAddress ?? 'unknown';
  }

  /** Throws 429 when this address has used up its failures for the window. */
  check(req: Request, res: Response, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    const w = this.windows.get(this.address(req));
    if (!w || w.closesAt <= now || w.failures < this.perMinute) return;
    if (this.isKnown(req, now)) return;
    const retryAfter = Math.max(1, Math.ceil((w.closesAt - now) / 1000));
    res.setHeader('Retry-After', String(retryAfter));
    throw new DomainError(
      'RATE_LIMIT_EXCEEDED',
      `Too many requests without a valid API key from this address (limit ${this.perMinute} per minute). Retry in ${retryAfter} s.`,
    );
  }

  /** A key that authenticated (`secretHash`, as stored): it passes this process's blocked addresses for a while. */
  succeeded(secretHash: string, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    keepNewest(this.known, secretHash, now + KNOWN_FOR_MS, MAX_KNOWN);
  }

  private isKnown(req: Request, now: number): boolean {
    const secret = secretOf(req);
    return secret !== null && (this.known.get(hashSecret(secret)) ?? 0) > now;
  }

  /** Counts a request that failed authentication; its key, if it was known (revoked since), passes no more. */
  failed(req: Request, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    const secret = secretOf(req);
    if (secret !== null) this.known.delete(hashSecret(secret));
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
