/**
 * Steps 1 and 5's counting (docs/api-decisions.md "Keys, plans and quotas"): the key is
 * authenticated and the request counted in its window, whose X-RateLimit-*
 * headers every later answer carries. A route runs its other checks between
 * this and the 429 (src/api/pipeline/index.ts); an answer given where no
 * route ran refuses over the limit at once (`keyedAnswer`).
 */
import type { Request, Response } from 'express';
import type { Runtime } from '../../runtime.ts';
import { DomainError } from '../../shared/errors.ts';
import { authenticate, type Principal } from './authenticate.ts';
import type { PrefetchHint } from './prefetch.ts';
import { enforceRateLimit, rateLimitOf, setRateLimitHeaders, type RateLimitResult } from './ratelimit.ts';
import type { UnauthenticatedLimiter } from './unauthenticated.ts';
import type { KeyMemory } from './remembered.ts';

/**
 * Authenticates the request's key (401, or 429 for an address with too many failures) and counts it; `hint`:
 * what to fetch beside it (prefetch.ts); `memory`: keeps what the key's statement said (remembered.ts).
 */
export async function authenticateAndCount(
  rt: Runtime,
  unauthenticated: UnauthenticatedLimiter,
  req: Request,
  res: Response,
  hint: PrefetchHint = null,
  memory?: KeyMemory,
): Promise<{ principal: Principal; rate: RateLimitResult }> {
  try {
    unauthenticated.check(req, res);
    const principal = await authenticate(rt, req, hint, memory).catch((err) => {
      if (err instanceof DomainError && err.code === 'UNAUTHORIZED') unauthenticated.failed(req);
      throw err;
    });
    const rate = rateLimitOf(principal.window, principal.requestsPerMinute);
    authenticated(res, unauthenticated, principal, rate);
    return { principal, rate };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer');
    throw err;
  }
}

/** A key that authenticated, counted in `rate`: every later answer names it (the access log) and carries the window's headers. */
export function authenticated(res: Response, unauthenticated: UnauthenticatedLimiter, principal: Principal, rate: RateLimitResult): void {
  unauthenticated.succeeded(principal.secretHash);
  res.locals.keyId = principal.key.id;
  setRateLimitHeaders(res, rate);
}

/**
 * An answer given where no route ran: a path no route matches (404), a
 * method the path does not take (405, and OPTIONS' 204), a body the reader
 * refused (413, 415, 400) or a path that does not decode (404). The
 * X-RateLimit-* headers go on every answer but a 401 (docs/api-decisions.md
 * "Keys, plans and quotas"), so a
 * request that names a key is authenticated and counted first, as on a
 * route: a key that does not authenticate gets 401 (authentication is the
 * first check), one over its limit 429, and a valid one this answer with its
 * headers. A request with no Authorization header has no window to show and
 * gets the answer alone: routes and their methods are public (the OpenAPI
 * document lists them). Rejects with what authentication threw, or the 429.
 */
export function keyedAnswer(rt: Runtime, unauthenticated: UnauthenticatedLimiter) {
  return async (req: Request, res: Response, answer: () => void): Promise<void> => {
    if (req.headers.authorization !== undefined) enforceRateLimit(res, (await authenticateAndCount(rt, unauthenticated, req, res)).rate);
    answer();
  };
}

export type KeyedAnswer = ReturnType<typeof keyedAnswer>;
