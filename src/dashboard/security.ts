/**
 * The dashboard's security middleware, each from a maintained library:
 * - helmet: security headers and a strict Content-Security-Policy (no inline
 *   script or style: only files from /dashboard/assets);
 * - express-session + connect-pg-simple: server-side sessions in
 *   PostgreSQL (table dashboard_sessions); the cookie holds only the signed
 *   session id, HttpOnly, SameSite=Lax, Secure when served over TLS, path
 *   /dashboard. Idle expiry: 30 minutes without a request (rolling cookie
 *   and row expiry); absolute expiry: 12 hours after sign-in.
 * - csrf-sync: the synchronizer token pattern, a token per session checked
 *   on every POST (hidden field `_csrf`), compared in constant time;
 * - rate-limiter-flexible (RateLimiterPostgres, table
 *   dashboard_signin_limits): failed sign-ins per email (5 per 15 minutes)
 *   and per client address (30 per 15 minutes), shared by every process.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import connectPgSimple from 'connect-pg-simple';
import { csrfSync } from 'csrf-sync';
import type { Request, RequestHandler } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Runtime } from '../runtime.ts';

export const IDLE_MS = 30 * 60 * 1000;
export const ABSOLUTE_MS = 12 * 60 * 60 * 1000;
export const COOKIE_NAME = 'dashboard.sid';

export const securityHeaders: RequestHandler = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  },
  referrerPolicy: { policy: 'no-referrer' },
});

/** The secret that signs session cookies: generated once and kept in the database, so every process shares it. */
async function sessionSecret(rt: Runtime): Promise<string> {
  const db = rt.database.db;
  await db
    .insertInto('dashboard_settings')
    .values({ name: 'session_secret', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('dashboard_settings').select('value').where('name', '=', 'session_secret').executeTakeFirstOrThrow();
  return row.value as string;
}

export function sessions(rt: Runtime): RequestHandler {
  const PgStore = connectPgSimple(session);
  const store = new PgStore({
    pool: rt.database.pool,
    tableName: 'dashboard_sessions',
    createTableIfMissing: false,
    pruneSessionInterval: 15 * 60,
    errorLog: (...args: unknown[]) => rt.logger.warn({ err: args[0] }, 'dashboard session store'),
  });
  const ready = sessionSecret(rt).then((secret) =>
    session({
      store,
      secret,
      name: COOKIE_NAME,
      resave: false,
      saveUninitialized: false,
      rolling: true,
      unset: 'destroy',
      cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: '/dashboard', maxAge: IDLE_MS },
    }),
  );
  ready.catch(() => {}); // reported on each request below
  return (req, res, next) => {
    ready.then((mw) => mw(req, res, next), next);
  };
}

export const csrf = csrfSync({
  size: 32,
  // csrf-sync compares with ===; hand it the stored token only when the submitted one matches in constant time.
  getTokenFromRequest: (req: Request) => {
    const given = (req.body as Record<string, unknown> | undefined)?._csrf;
    const stored = req.session?.csrfToken;
    if (typeof given !== 'string' || typeof stored !== 'string') return undefined;
    const a = Buffer.from(given);
    const b = Buffer.from(stored);
    return a.length === b.length && timingSafeEqual(a, b) ? stored : undefined;
  },
});

export interface SignInLimiters {
  email: RateLimiterPostgres;
  address: RateLimiterPostgres;
}

export const SIGNIN_LIMITS = { email: { points: 5, duration: 15 * 60 }, address: { points: 30, duration: 15 * 60 } };

export function signInLimiters(rt: Runtime): SignInLimiters {
  const common = { storeClient: rt.database.pool, storeType: 'pool', tableName: 'dashboard_signin_limits', tableCreated: true, clearExpiredByTimeout: true };
  return {
    email: new RateLimiterPostgres({ ...common, keyPrefix: 'email', ...SIGNIN_LIMITS.email }),
    address: new RateLimiterPostgres({ ...common, keyPrefix: 'addr', ...SIGNIN_LIMITS.address }),
  };
}
