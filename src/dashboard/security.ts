/**
 * The dashboard's security middleware, each from a maintained library:
 * - helmet: security headers and a strict Content-Security-Policy (no inline
 *   script or style: only files from /dashboard/assets);
 * - express-session + connect-pg-simple: server-side sessions in
 *   PostgreSQL (table dashboard_sessions); the cookie holds only the signed
 *   session id, HttpOnly, SameSite=Lax, Secure when served over TLS, path
 *   /dashboard. Idle expiry: 30 minutes without a request (rolling cookie
 *   and row expiry; the row's expiry is moved forward at most once a
 *   minute, see LazyTouchStore); absolute expiry: 12 hours after sign-in.
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

/**
 * Moving a session row's expiry forward is a write on every page view
 * (express-session's rolling `touch`). The row's expiry is re-written only
 * when it has fallen more than TOUCH_AFTER_MS behind the new one, so a busy
 * user costs one write a minute instead of one a page; the server-side idle
 * expiry is then between 29 and 30 minutes after the last request (the
 * cookie's stays 30). The expiry read with the session (one query, as
 * before) tells which: `get` keeps it by session id until the request's
 * `touch` or `set`. Saving a changed session writes as before.
 */
export const TOUCH_AFTER_MS = 60 * 1000;

function lazyTouchStore(Base: ReturnType<typeof connectPgSimple>, pool: Runtime['database']['pool'], table: string) {
  return class LazyTouchStore extends Base {
    /** Session id -> the row's expiry (ms) as read by `get`, until that request's touch or set. */
    private readonly expiries = new Map<string, number>();

    override get(sid: string, fn: (err: unknown, sess?: session.SessionData | null) => void): void {
      // connect-pg-simple's own query, plus the expiry; the callback runs outside the promise (as the store's own does).
      const now = Math.ceil(Date.now() / 1000);
      pool.query<{ sess: session.SessionData | string; expire: Date }>(`SELECT sess, expire FROM ${table} WHERE sid = $1 AND expire >= to_timestamp($2)`, [sid, now]).then(
        ({ rows: [row] }) => process.nextTick(() => this.loaded(sid, row, fn)),
        (err: unknown) => process.nextTick(fn, err),
      );
    }

    private loaded(sid: string, row: { sess: session.SessionData | string; expire: Date } | undefined, fn: (err: unknown, sess?: session.SessionData | null) => void): void {
      if (!row) return fn(null, null);
      let sess: session.SessionData;
      try {
        sess = typeof row.sess === 'string' ? JSON.parse(row.sess) : row.sess;
      } catch {
        return this.destroy(sid, fn);
      }
      if (this.expiries.size >= 10_000) this.expiries.clear(); // requests that ended before their touch
      this.expiries.set(sid, row.expire.getTime());
      fn(null, sess);
    }

    override touch(sid: string, sess: session.SessionData, fn?: (err?: unknown) => void): void {
      const stored = this.expiries.get(sid);
      this.expiries.delete(sid);
      const next = sess.cookie?.expires ? new Date(sess.cookie.expires).getTime() : null;
      if (stored !== undefined && next !== null && next - stored < TOUCH_AFTER_MS) return fn?.();
      super.touch(sid, sess, fn);
    }

    override set(sid: string, sess: session.SessionData, fn?: (err?: unknown) => void): void {
      this.expiries.delete(sid);
      super.set(sid, sess, fn);
    }
  };
}

export function sessions(rt: Runtime): RequestHandler {
  const PgStore = lazyTouchStore(connectPgSimple(session), rt.database.pool, 'dashboard_sessions');
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
